// Continuous batching: a decode step of several contexts in one pass gives every context the logits
// it gets evaluated alone, bit for bit — on the CPU (exact, fast, int8) and on the simulated NPU
// (resident and streaming) — while contexts join (after their own prefill) and leave between steps.
// Bad batches are refused without advancing any context.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "runtime/batch_decode.h"
#include "runtime/context.h"
#include "runtime/engine.h"
#include "runtime/sampler.h"

namespace ork::runtime {
namespace {

struct Config {
  const char* name;
  const char* device;
  bool exact = false;
  bool cpu_int8 = false;
  uint32_t sim_domains = 16;  // 1: the 2 MiB window cannot hold the model, weights stream
};

class BatchDecodeTest : public ::testing::TestWithParam<Config> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir;
    gen::write_model(testing::small_q8_model(), dir_->file("m.gguf"));
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static EngineOptions options(const Config& c) {
    EngineOptions o;
    o.model_path = dir_->file("m.gguf");
    o.device = c.device;
    o.exact = c.exact;
    o.cpu_int8 = c.cpu_int8;
    o.threads = 2;
    o.npu.sim_window_bytes = 2u << 20;
    o.npu.sim_domains = c.sim_domains;
    if (c.sim_domains == 1) o.residency = weights::Residency::kStream;
    return o;
  }
  static testing::TempDir* dir_;
};
testing::TempDir* BatchDecodeTest::dir_ = nullptr;

// One stream: its prompt, the step at which it joins the batch, and how many tokens it decodes.
struct Stream {
  std::vector<int32_t> prompt;
  int join_step;
  int n_decode;
  uint64_t seed;
};

// The logits after each decoded token of a stream evaluated alone, and the tokens sampled from them.
struct Trace {
  std::vector<std::vector<float>> logits;  // [n_decode + 1][n_vocab]: after the prompt, then per token
  std::vector<int32_t> tokens;             // [n_decode]
};

SamplerParams sampling(uint64_t seed) {
  SamplerParams p;
  p.temperature = 0.9f;
  p.seed = seed;
  return p;
}

Trace alone(Engine& e, const Stream& s) {
  Context ctx(e, 64);
  Sampler sampler(sampling(s.seed));
  Trace t;
  const float* l = ctx.eval(s.prompt);
  for (int i = 0;; ++i) {
    t.logits.emplace_back(l, l + ctx.n_vocab());
    if (i == s.n_decode) break;
    const int32_t id = sampler.sample(l, int32_t(ctx.n_vocab()));
    sampler.accept(id);
    t.tokens.push_back(id);
    l = ctx.eval({id});
  }
  return t;
}

TEST_P(BatchDecodeTest, EveryContextGetsTheLogitsItGetsAlone) {
  Engine e(options(GetParam()));
  // Streams of different prompt lengths joining at different steps and leaving when done: the batch
  // grows 1 → 2 → 3 → 4 and shrinks again, positions differ in every step.
  const std::vector<Stream> streams = {
      {{1, 7, 300, 42, 5}, 0, 9, 11},
      {{3, 9}, 0, 4, 12},
      {{200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210}, 2, 8, 13},
      {{44}, 3, 3, 14},
  };
  std::vector<Trace> want;
  for (const Stream& s : streams) want.push_back(alone(e, s));

  BatchDecode batch(e);
  std::vector<std::unique_ptr<Context>> ctxs;
  std::vector<Sampler> samplers;
  std::vector<const float*> last(streams.size(), nullptr);  // logits to sample the next token from
  std::vector<std::vector<float>> last_copy(streams.size());
  std::vector<int> decoded(streams.size(), 0);
  std::vector<bool> joined(streams.size(), false);
  for (size_t i = 0; i < streams.size(); ++i) {
    ctxs.push_back(std::make_unique<Context>(e, 64));
    samplers.emplace_back(sampling(streams[i].seed));
  }
  int max_batch = 0;
  for (int step = 0;; ++step) {
    // Joining streams prefill on their own, between steps.
    for (size_t i = 0; i < streams.size(); ++i) {
      if (joined[i] || streams[i].join_step != step) continue;
      joined[i] = true;
      const float* l = ctxs[i]->eval(streams[i].prompt);
      last_copy[i].assign(l, l + ctxs[i]->n_vocab());
      ASSERT_EQ(0, std::memcmp(last_copy[i].data(), want[i].logits[0].data(), last_copy[i].size() * 4))
          << streams[i].seed << " prefill";
    }
    std::vector<Context*> in;
    std::vector<int32_t> toks;
    std::vector<size_t> who;
    for (size_t i = 0; i < streams.size(); ++i) {
      if (!joined[i] || decoded[i] == streams[i].n_decode) continue;
      const int32_t id = samplers[i].sample(last_copy[i].data(), int32_t(ctxs[i]->n_vocab()));
      samplers[i].accept(id);
      ASSERT_EQ(id, want[i].tokens[size_t(decoded[i])]) << "stream " << i << " token " << decoded[i];
      in.push_back(ctxs[i].get());
      toks.push_back(id);
      who.push_back(i);
    }
    if (in.empty()) {
      if (step > 4) break;
      continue;
    }
    max_batch = std::max(max_batch, int(in.size()));
    const float* l = batch.step(in, toks);
    const int64_t V = e.model().config().n_vocab;
    for (size_t r = 0; r < who.size(); ++r) {
      const size_t i = who[r];
      ++decoded[size_t(i)];
      last_copy[i].assign(l + int64_t(r) * V, l + int64_t(r + 1) * V);
      EXPECT_EQ(ctxs[i]->n_past(), int64_t(streams[i].prompt.size()) + decoded[i]);
      ASSERT_EQ(0, std::memcmp(last_copy[i].data(), want[i].logits[size_t(decoded[i])].data(),
                               last_copy[i].size() * 4))
          << "stream " << i << " after token " << decoded[i] << " in a batch of " << who.size();
    }
  }
  EXPECT_EQ(max_batch, 4);
  for (size_t i = 0; i < streams.size(); ++i) EXPECT_EQ(decoded[i], streams[i].n_decode);
}

TEST_P(BatchDecodeTest, BadBatchesAreRefusedAndAdvanceNothing) {
  Engine e(options(GetParam()));
  BatchDecode batch(e);
  Context a(e, 8), b(e, 8);
  a.eval({1, 2, 3});
  b.eval({4, 5, 6, 7, 8, 9, 10, 11});  // full
  std::vector<Context*> none;
  EXPECT_THROW(batch.step(none, {}), Error);
  std::vector<Context*> one = {&a};
  const std::vector<int32_t> two_tokens = {1, 2};
  EXPECT_THROW(batch.step(one, two_tokens), Error);
  std::vector<Context*> twice = {&a, &a};
  EXPECT_THROW(batch.step(twice, two_tokens), Error);
  std::vector<Context*> with_full = {&a, &b};
  try {
    batch.step(with_full, two_tokens);
    ADD_FAILURE() << "a full context was accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("context 1 is full"), std::string::npos) << err.what();
  }
  const std::vector<int32_t> bad_token = {1 << 20};
  EXPECT_THROW(batch.step(one, bad_token), Error);
  std::vector<Context*> null_ctx = {nullptr};
  EXPECT_THROW(batch.step(null_ctx, std::vector<int32_t>{1}), Error);
  EXPECT_EQ(a.n_past(), 3);
  EXPECT_EQ(b.n_past(), 8);
  // Still usable afterwards.
  const std::vector<int32_t> ok = {9};
  batch.step(one, ok);
  EXPECT_EQ(a.n_past(), 4);
}

TEST(BatchDecode, RefusesAContextOfAnotherEngine) {
  testing::TempDir dir;
  gen::write_model(testing::small_q8_model(), dir.file("m.gguf"));
  EngineOptions o;
  o.model_path = dir.file("m.gguf");
  o.threads = 1;
  Engine e1(o), e2(o);
  BatchDecode batch(e1);
  Context c(e2, 8);
  c.eval({1});
  std::vector<Context*> in = {&c};
  try {
    batch.step(in, std::vector<int32_t>{2});
    ADD_FAILURE() << "a context of another engine was accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("another engine"), std::string::npos) << err.what();
  }
  EXPECT_EQ(c.n_past(), 1);
}

INSTANTIATE_TEST_SUITE_P(Backends, BatchDecodeTest,
                         ::testing::Values(Config{"cpu_exact", "cpu", true}, Config{"cpu_fast", "cpu"},
                                           Config{"cpu_int8", "cpu", false, true},
                                           Config{"sim_resident", "sim"},
                                           Config{"sim_stream", "sim", false, false, 1}),
                         [](const ::testing::TestParamInfo<Config>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace ork::runtime
