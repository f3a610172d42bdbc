// EngineOptions::swa_ring: sliding-window layers keep window + m_max − 1 KV rows. Logits are
// bit-identical to the full-cache path for prompts several windows long, evaluated in chunks that
// cross the ring's wrap, then decoded token by token (gemma2 and gemma3, f32 and f16 caches, several
// windows); the memory is the rings' (the plan agrees); speculative rollback within the ring keeps
// greedy output, and so does batched decoding (continuous batching); a rollback past it is a clear
// error, starting over (reset) is not. Saving and restoring: swa_ring_state_test.cpp.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "runtime/batch_decode.h"
#include "runtime/context.h"
#include "runtime/context_size.h"
#include "runtime/engine.h"
#include "runtime/generator.h"
#include "runtime/prompt_lookup.h"
#include "runtime/sampler.h"
#include "runtime/speculative.h"
#include "runtime/swa_ring.h"

namespace ork::runtime {
namespace {

gen::ModelSpec gemma(const char* arch, int window) {
  return testing::sliding_window_gemma(arch, window, 11);
}

std::vector<int32_t> tokens(int64_t n, uint32_t seed) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[size_t(i)] = int32_t((seed + 37 * uint32_t(i) * uint32_t(i + 3)) % 300);
  return t;
}

EngineOptions options(const std::string& path, int64_t m_max, bool ring, model::KvType kv) {
  EngineOptions o;
  o.model_path = path;
  o.threads = 2;
  o.m_max = m_max;
  o.swa_ring = ring;
  o.kv_type = kv;
  return o;
}

// Prompt logits (every row, in chunks of m_max) and then decode logits of each token after it.
std::vector<std::vector<float>> run(Engine& e, const std::vector<int32_t>& prompt, const std::vector<int32_t>& decode) {
  Context ctx(e, 256);
  std::vector<std::vector<float>> out;
  const std::vector<float>& all = ctx.eval_all(prompt);
  out.push_back(all);
  for (int32_t t : decode) {
    const float* l = ctx.eval({t});
    out.emplace_back(l, l + ctx.n_vocab());
  }
  return out;
}

TEST(SwaRing, LogitsBitIdenticalToTheFullCacheAcrossTheWrap) {
  testing::TempDir dir;
  const std::vector<int32_t> prompt = tokens(70, 5), decode = tokens(30, 9);
  for (const char* arch : {"gemma2", "gemma3"}) {
    for (int window : {4, 7, 16}) {
      const std::string path = dir.file(std::string(arch) + std::to_string(window) + ".gguf");
      gen::write_model(gemma(arch, window), path);
      for (int64_t m_max : {5, 16}) {  // chunks of 5: the wrap falls inside chunks
        for (model::KvType kv : {model::KvType::kF32, model::KvType::kF16}) {
          SCOPED_TRACE(std::string(arch) + " window " + std::to_string(window) + " m_max " + std::to_string(m_max) +
                       " " + model::kv_type_name(kv));
          Engine full(options(path, m_max, false, kv)), ring(options(path, m_max, true, kv));
          const auto a = run(full, prompt, decode), b = run(ring, prompt, decode);
          ASSERT_EQ(a.size(), b.size());
          for (size_t i = 0; i < a.size(); ++i) {
            ASSERT_EQ(a[i].size(), b[i].size());
            EXPECT_EQ(std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)), 0) << "step " << i;
          }
          // Memory: the sliding layers hold window + m_max − 1 rows, the global one 256.
          Context c(ring, 256);
          const uint64_t row = model::kv_row_bytes(kv, ring.model().config().kv_dim());
          EXPECT_EQ(c.memory().kv_bytes, 2 * row * uint64_t(256 + 2 * (window + m_max - 1)));
          EXPECT_EQ(c.memory().kv_bytes, kv_cache_bytes_ring(ring.model().config(), 256, kv, m_max));
          EXPECT_LT(c.memory().kv_bytes, kv_cache_bytes(ring.model().config(), 256, kv));
          EXPECT_EQ(plan_memory(options(path, m_max, true, kv), 256).kv_cache_bytes, c.memory().kv_bytes);
        }
      }
    }
  }
}

TEST(SwaRing, SpeculativeRollbackKeepsGreedyOutputAndTooFarBackIsRefused) {
  testing::TempDir dir;
  const std::string path = dir.file("g.gguf");
  gen::write_model(gemma("gemma2", 6), path);
  Engine e(options(path, 8, true, model::KvType::kF32));
  SamplerParams sp;
  sp.temperature = 0.0f;
  const std::vector<int32_t> prompt = {1, 5, 9, 5, 9, 5, 9, 5, 9, 5, 9, 5, 9, 5, 9, 5, 9, 2, 3, 4};
  const std::vector<int32_t> want = [&] {
    Context ctx(e, 128);
    Sampler s(sp);
    return generate(ctx, s, prompt, 40, [](int32_t) { return true; }).tokens;
  }();
  for (int64_t k : {2, 4, 8}) {
    Context ctx(e, 128);
    Sampler s(sp);
    PromptLookup lookup(2);
    SpeculativeOptions so;
    so.draft_max = k;
    const SpeculativeResult r = generate_speculative(ctx, lookup, s, prompt, 40, so, [](int32_t) { return true; });
    EXPECT_EQ(r.gen.tokens, want) << "K=" << k;
  }
  // A ring of 6 + 8 − 1 = 13 rows: after 40 positions, rolling back 5 is fine, to 10 is not.
  Context ctx(e, 128);
  ctx.eval(tokens(40, 3));
  ctx.truncate(35);
  ctx.eval({7});
  try {
    ctx.truncate(10);
    FAIL() << "rolled back past the ring";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("sliding-window ring holds positions from"), std::string::npos) << err.what();
  }
  EXPECT_EQ(ctx.n_past(), 36);  // unchanged by the refused rollback
  ctx.reset();                  // starting over is always possible
  Context fresh(e, 128);
  const std::vector<int32_t> t = tokens(20, 1);
  const float* a = ctx.eval(t);
  const std::vector<float> got(a, a + ctx.n_vocab());
  const float* b = fresh.eval(t);
  EXPECT_EQ(got, std::vector<float>(b, b + fresh.n_vocab()));
}

// Continuous batching: three ring-cache contexts of different lengths decoded together get the
// logits each gets alone with a full cache, bit for bit, past several wraps.
TEST(SwaRing, BatchedDecodeOfRingContextsEqualsFullCachesAlone) {
  testing::TempDir dir;
  const std::string path = dir.file("g3.gguf");
  gen::write_model(gemma("gemma3", 5), path);
  Engine full(options(path, 4, false, model::KvType::kF16)), ring(options(path, 4, true, model::KvType::kF16));
  std::vector<std::unique_ptr<Context>> rc, fc;
  for (int64_t n : {3, 11, 26}) {
    rc.push_back(std::make_unique<Context>(ring, 128));
    fc.push_back(std::make_unique<Context>(full, 128));
    rc.back()->eval(tokens(n, uint32_t(n)));
    fc.back()->eval(tokens(n, uint32_t(n)));
  }
  BatchDecode batch(ring);
  std::vector<Context*> ptrs = {rc[0].get(), rc[1].get(), rc[2].get()};
  for (int step = 0; step < 20; ++step) {
    const std::vector<int32_t> next = {int32_t(step * 7 % 300), int32_t(step * 11 % 300), int32_t(step * 13 % 300)};
    const float* got = batch.step(ptrs, next);
    for (size_t i = 0; i < 3; ++i) {
      const float* want = fc[i]->eval({next[i]});
      EXPECT_EQ(std::memcmp(got + i * size_t(ring.model().config().n_vocab), want,
                            size_t(ring.model().config().n_vocab) * sizeof(float)), 0)
          << "step " << step << " context " << i;
    }
  }
}

}  // namespace
}  // namespace ork::runtime
