// Ring KV caches are the default for sliding-window layers (EngineOptions::swa_ring): contexts and
// the memory plan use them unless swa_ring is false; Context::keepable says how far back a ring
// context can roll, and prefix reuse that would reach further back re-evaluates instead (a draft
// model's proposals equal the full cache's).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "runtime/context.h"
#include "runtime/context_size.h"
#include "runtime/draft_model.h"
#include "runtime/engine.h"
#include "runtime/swa_ring.h"

namespace ork::runtime {
namespace {

gen::ModelSpec gemma(int window) {
  return testing::sliding_window_gemma("gemma2", window, 17);
}

std::vector<int32_t> tokens(int64_t n, uint32_t seed) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[size_t(i)] = int32_t((seed + 41 * uint32_t(i) * uint32_t(i + 5)) % 300);
  return t;
}

EngineOptions options(const std::string& path) {
  EngineOptions o;
  o.model_path = path;
  o.threads = 2;
  o.m_max = 8;  // window 6: rings of 13 rows
  return o;
}

TEST(SwaRingDefault, ContextsAndThePlanUseRingsUnlessTurnedOff) {
  EXPECT_TRUE(EngineOptions{}.swa_ring);
  testing::TempDir dir;
  const std::string path = dir.file("g.gguf");
  gen::write_model(gemma(6), path);
  Engine ring(options(path));
  EngineOptions off = options(path);
  off.swa_ring = false;
  Engine full(off);
  Context r(ring, 256), f(full, 256);
  EXPECT_EQ(r.kv_rows(0), 13);
  EXPECT_EQ(r.kv_rows(1), 256);  // the global layer
  EXPECT_EQ(r.kv_rows(2), 13);
  EXPECT_EQ(f.kv_rows(0), 256);
  const model::Config& c = ring.model().config();
  EXPECT_EQ(r.memory().kv_bytes, kv_cache_bytes_ring(c, 256, r.kv_type(), 8));
  EXPECT_EQ(f.memory().kv_bytes, kv_cache_bytes(c, 256, f.kv_type()));
  EXPECT_EQ(plan_memory(options(path), 256).kv_cache_bytes, r.memory().kv_bytes);
  EXPECT_EQ(plan_memory(off, 256).kv_cache_bytes, f.memory().kv_bytes);
}

TEST(SwaRingDefault, KeepableIsHowFarBackTheRingsReach) {
  testing::TempDir dir;
  const std::string path = dir.file("g.gguf");
  gen::write_model(gemma(6), path);
  Engine e(options(path));
  Context ctx(e, 256);
  ctx.eval(tokens(40, 2));  // the rings hold positions 27..39; position n reads n − 5 on
  EXPECT_EQ(ctx.keepable(40), 40);
  EXPECT_EQ(ctx.keepable(32), 32);  // reads 27 on
  EXPECT_EQ(ctx.keepable(31), 0);   // would read 26
  EXPECT_EQ(ctx.keepable(0), 0);
  EXPECT_THROW((void)ctx.keepable(41), Error);
  EXPECT_NO_THROW(ctx.truncate(ctx.keepable(32)));
  EXPECT_THROW(ctx.truncate(31), Error);
  EngineOptions off = options(path);
  off.swa_ring = false;
  Engine full(off);
  Context f(full, 256);
  f.eval(tokens(40, 2));
  EXPECT_EQ(f.keepable(3), 3);  // full caches reach back everywhere
}

// A draft model keeps the common prefix of what it evaluated and the new sequence: with rings, a
// prefix that ends before what they hold is evaluated again, with the full cache's proposals.
TEST(SwaRingDefault, PrefixReuseBeyondTheRingReEvaluates) {
  testing::TempDir dir;
  const std::string path = dir.file("g.gguf");
  gen::write_model(gemma(6), path);
  Engine ring(options(path));
  EngineOptions off = options(path);
  off.swa_ring = false;
  Engine full(off);
  SamplerParams sp;
  sp.temperature = 0;
  DraftModel dr(ring, 256, sp, 0.0f), df(full, 256, sp, 0.0f);
  std::vector<int32_t> a = tokens(45, 3), b = a;
  for (size_t i = 10; i < b.size(); ++i) b[i] = int32_t((b[i] + 1) % 300);  // shares 10 tokens with a
  Draft x, y;
  for (const std::vector<int32_t>* seq : {&a, &b, &a}) {
    dr.propose(*seq, 6, x);
    df.propose(*seq, 6, y);
    EXPECT_EQ(x.tokens, y.tokens);
    EXPECT_EQ(x.tokens.size(), 6u);
  }
}

}  // namespace
}  // namespace ork::runtime
