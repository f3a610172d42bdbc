// Saving and restoring a sequence whose sliding-window layers are ring KV caches
// (EngineOptions::swa_ring): Context::state()/state_from() hold each ring's kept positions, a fresh
// context restored from them continues bit-identically to the uninterrupted run (past the wrap,
// after a rollback, every KV type), a chat session file round-trips them, and a state or session of
// another layout is refused with one error naming it; format-2 session files still load.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "runtime/chat_session.h"
#include "runtime/context.h"
#include "runtime/engine.h"
#include "runtime/sampler.h"

namespace ork::runtime {
namespace {

gen::ModelSpec gemma(const char* arch, int window) {
  return testing::sliding_window_gemma(arch, window, 13);
}

std::vector<int32_t> tokens(int64_t n, uint32_t seed) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[size_t(i)] = int32_t((seed + 37 * uint32_t(i) * uint32_t(i + 3)) % 300);
  return t;
}

EngineOptions options(const std::string& path, bool ring, model::KvType kv) {
  EngineOptions o;
  o.model_path = path;
  o.threads = 2;
  o.m_max = 5;  // window 6: rings of 10 rows
  o.swa_ring = ring;
  o.kv_type = kv;
  return o;
}

TEST(SwaRingState, RestoredPastTheWrapContinuesBitIdentically) {
  testing::TempDir dir;
  for (const char* arch : {"gemma2", "gemma3"}) {
    const std::string path = dir.file(std::string(arch) + ".gguf");
    gen::write_model(gemma(arch, 6), path);
    for (model::KvType kv : {model::KvType::kF32, model::KvType::kF16, model::KvType::kQ8_0}) {
      SCOPED_TRACE(std::string(arch) + " " + model::kv_type_name(kv));
      Engine e(options(path, true, kv));
      Context a(e, 128);
      a.eval(tokens(47, 3));  // 47 positions: the 10-row rings wrapped four times
      a.truncate(44);         // a rollback within the ring: its kept range ends at 44
      a.eval({11, 12});
      const std::vector<int64_t> from = a.state_from();
      ASSERT_EQ(from.size(), 3u);
      EXPECT_EQ(from[1], 0);   // the global layer: every position
      EXPECT_EQ(from[0], 37);  // 46 positions held 47 − 10 on; the rollback kept them
      EXPECT_EQ(from[2], 37);
      const std::vector<uint8_t> s = a.state();
      EXPECT_EQ(s.size(), a.state_bytes(46, from));
      EXPECT_LT(s.size(), a.state_bytes(46));  // the rings' rows only

      Context b(e, 128);
      b.eval(tokens(90, 8));  // a used context: its old rows and bookkeeping must not matter
      b.set_state(s, 46, from);
      EXPECT_EQ(b.n_past(), 46);
      EXPECT_EQ(b.state_from(), from);
      EXPECT_EQ(b.state(), s);
      for (int i = 0; i < 25; ++i) {  // decode across two more wraps
        const int32_t t = int32_t((i * 53 + 7) % 300);
        const float* la = a.eval({t});
        const std::vector<float> want(la, la + a.n_vocab());
        const float* lb = b.eval({t});
        ASSERT_EQ(std::memcmp(want.data(), lb, want.size() * sizeof(float)), 0) << "step " << i;
      }
      // A chunked prompt after the restore, too.
      Context c(e, 128);
      c.set_state(s, 46, from);
      const std::vector<int32_t> more = tokens(23, 5);
      Context d(e, 128);
      d.set_state(s, 46, from);
      const std::vector<float> want = c.eval_all(more);
      EXPECT_EQ(std::memcmp(want.data(), d.eval_all(more).data(), want.size() * sizeof(float)), 0);
    }
  }
}

TEST(SwaRingState, AStateOfAnotherLayoutIsRefused) {
  testing::TempDir dir;
  const std::string path = dir.file("g.gguf");
  gen::write_model(gemma("gemma2", 6), path);
  Engine ring(options(path, true, model::KvType::kF16)), full(options(path, false, model::KvType::kF16));
  Context a(ring, 128);
  a.eval(tokens(30, 1));
  const std::vector<uint8_t> s = a.state();
  const std::vector<int64_t> from = a.state_from();
  auto expect_error = [](auto f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "no error for " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  Context f(full, 128);
  expect_error([&] { f.set_state(s, 30, from); }, "is a full cache (from 0)");
  Context r(ring, 128);
  expect_error([&] { r.set_state(s, 30); }, "more than this context's ring of 10 rows");  // no `from`
  expect_error([&] { r.set_state(s, 30, {20, 0}); }, "first positions of 2 layers for a cache of 3");
  std::vector<int64_t> bad = from;
  bad[0] += 1;  // one row fewer than the state holds
  expect_error([&] { r.set_state(s, 30, bad); }, "expected for 30 positions");
  EXPECT_EQ(r.n_past(), 0);  // unchanged by the refusals
}

// The chat session file (format 3) stores each layer's rows and first position: a session saved
// past the wrap loads into a fresh ring context and continues bit-identically; a full-cache context
// refuses it naming the rows.
TEST(SwaRingState, ChatSessionFileRoundTripsTheRings) {
  testing::TempDir dir;
  const std::string path = dir.file("g3.gguf");
  gen::write_model(gemma("gemma3", 6), path);
  Engine ring(options(path, true, model::KvType::kF16)), full(options(path, false, model::KvType::kF16));
  SamplerParams sp;
  sp.temperature = 0;
  sp.seed = 1;
  const auto ignore = [](const std::string&) { return true; };
  Context a(ring, 256);
  ChatSession sa(a, chat_template_for(ring.model(), "chatml"));
  sa.clear("");
  Sampler s1(sp);
  (void)sa.reply("the quick brown fox jumps over the lazy dog", s1, 12, ignore);
  ASSERT_GT(a.n_past(), 20);  // past the 10-row rings' wrap
  const std::string file = dir.file("s.orkchat");
  sa.save(file);

  Context b(ring, 256);
  ChatSession sb(b, chat_template_for(ring.model(), "chatml"));
  sb.load(file);
  EXPECT_EQ(b.n_past(), a.n_past());
  EXPECT_EQ(b.state_from(), a.state_from());
  EXPECT_EQ(b.state(), a.state());
  const float* la = a.eval({42});
  const std::vector<float> want(la, la + a.n_vocab());
  EXPECT_EQ(std::memcmp(want.data(), b.eval({42}), want.size() * sizeof(float)), 0);

  Context f(full, 256);
  ChatSession sf(f, chat_template_for(full.model(), "chatml"));
  try {
    sf.load(file);
    ADD_FAILURE() << "a ring session loaded into full caches";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 0's KV cache was saved with 10 rows, this session's has 256"),
              std::string::npos)
        << e.what();
  }
}

// Format 2 (before the per-layer rows) is format 3 without them: it still loads into full caches,
// and a ring context refuses it naming the layer.
TEST(SwaRingState, Format2SessionFilesStillLoad) {
  testing::TempDir dir;
  const std::string path = dir.file("g2.gguf");
  gen::write_model(gemma("gemma2", 6), path);
  Engine ring(options(path, true, model::KvType::kF16)), full(options(path, false, model::KvType::kF16));
  SamplerParams sp;
  sp.temperature = 0;
  const auto ignore = [](const std::string&) { return true; };
  Context a(full, 128);
  ChatSession sa(a, chat_template_for(full.model(), "chatml"));
  sa.clear("");
  Sampler s1(sp);
  (void)sa.reply("hello there", s1, 8, ignore);
  const std::string v3 = dir.file("v3.orkchat");
  sa.save(v3);
  std::string bytes;
  {
    std::ifstream in(v3, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_EQ(bytes.substr(0, 8), "ORKCHAT3");
  // magic, 4 u64 (n_layer, n_ctx, kv_dim, n_vocab), the KV type string (u64 3 + "f16"), then the
  // 3 layers' (rows, from) pairs that format 2 does not have.
  const size_t pairs = 8 + 4 * 8 + 8 + 3;
  const std::string v2 = "ORKCHAT2" + bytes.substr(8, pairs - 8) + bytes.substr(pairs + 3 * 16);
  const std::string v2_path = dir.file("v2.orkchat");
  std::ofstream(v2_path, std::ios::binary) << v2;

  Context b(full, 128);
  ChatSession sb(b, chat_template_for(full.model(), "chatml"));
  sb.load(v2_path);
  EXPECT_EQ(b.state(), a.state());
  EXPECT_EQ(sb.cached_tokens(), sa.cached_tokens());

  Context r(ring, 128);
  ChatSession sr(r, chat_template_for(ring.model(), "chatml"));
  try {
    sr.load(v2_path);
    ADD_FAILURE() << "a format-2 session loaded into ring caches";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 0's KV cache was saved with 128 rows, this session's has 10"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ork::runtime
