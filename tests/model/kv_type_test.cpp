// KV cache types: f16 and q8_0 rows rounded as llama.cpp's cache rounds them (hand-derived ggml
// values; an independent rounding of random rows), clear errors for what a type cannot hold, and the
// forward pass with f16 / q8_0 caches against the float64 reference that rounds K and V alike.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/fp16.h"
#include "core/thread_pool.h"
#include "gen_model/gen_model.h"
#include "model/forward.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "quant/blocks.h"
#include "reference_forward.h"
#include "reference_kv_rounding.h"
#include "temp_dir.h"

namespace ork::model {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(KvType, NamesRoundTripAndUnknownNamesAreRefused) {
  for (KvType t : {KvType::kF32, KvType::kF16, KvType::kQ8_0}) EXPECT_EQ(parse_kv_type(kv_type_name(t)), t);
  const std::string e = error_of([] { (void)parse_kv_type("q4_0"); });
  EXPECT_NE(e.find("'q4_0'"), std::string::npos) << e;
  EXPECT_NE(e.find("f32, f16 or q8_0"), std::string::npos) << e;
}

TEST(KvType, RowBytes) {
  EXPECT_EQ(kv_row_bytes(KvType::kF32, 64), 256u);
  EXPECT_EQ(kv_row_bytes(KvType::kF16, 64), 128u);
  EXPECT_EQ(kv_row_bytes(KvType::kQ8_0, 64), 68u);
  const std::string e = error_of([] { (void)kv_row_bytes(KvType::kQ8_0, 48); });
  EXPECT_NE(e.find("multiple of 32"), std::string::npos) << e;
  EXPECT_NE(e.find("48"), std::string::npos) << e;
  EXPECT_THROW(KvCache(1, 4, 48, KvType::kQ8_0), Error);
}

// ggml's quantize_row_q8_0_ref by hand: amax 127 → d = 1 (fp16 0x3c00), q = roundf(x): ties away
// from zero (0.5 → 1, −2.5 → −3), unlike a ties-to-even rounding.
TEST(KvType, Q8_0BlocksAreGgmlsReferenceQuantization) {
  float k[32] = {127.0f, 0.5f, -2.5f, 1.5f, -0.5f, 3.49f, -127.0f};
  float v[32] = {1.0f};  // amax 1: d = 1/127 → fp16 0x2008 (2^-7 · 1032/1024), q = 127
  KvCache c(1, 1, 32, KvType::kQ8_0);
  c.store(0, 0, 1, k, v);
  quant::BlockQ8_0 bk, bv;
  std::memcpy(&bk, c.k_bytes(0), sizeof bk);
  std::memcpy(&bv, c.v_bytes(0), sizeof bv);
  EXPECT_EQ(bk.d, 0x3c00);
  const int want[7] = {127, 1, -3, 2, -1, 3, -127};
  for (int j = 0; j < 7; ++j) EXPECT_EQ(bk.qs[j], want[j]) << j;
  for (int j = 7; j < 32; ++j) EXPECT_EQ(bk.qs[j], 0) << j;
  // ork's own test quantizer (quant::quantize_q8_0) would round this scale up to 0x2009.
  EXPECT_EQ(bv.d, 0x2008);
  EXPECT_EQ(bv.qs[0], 127);
  float kb[32], vb[32];
  c.load(0, 0, 1, kb, vb);
  EXPECT_EQ(kb[2], -3.0f);
  EXPECT_EQ(vb[0], 127.0f * f16_to_f32(0x2008));
}

TEST(KvType, F16RoundsToNearestEven) {
  float k[2] = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f}, v[2] = {-65504.0f, 0x1p-25f * 3};
  KvCache c(1, 1, 2, KvType::kF16);
  c.store(0, 0, 1, k, v);
  float kb[2], vb[2];
  c.load(0, 0, 1, kb, vb);
  EXPECT_EQ(kb[0], 1.0f);               // tie → even (1.0, not 1 + 2^-10)
  EXPECT_EQ(kb[1], 1.0f + 0x1p-9f);     // tie → even (1 + 2^-9)
  EXPECT_EQ(vb[0], -65504.0f);
  EXPECT_EQ(vb[1], 0x1p-23f);           // 1.5 subnormal steps → 2
}

// The cache's rows read back equal the test's own rounding of them, over random rows of both types.
TEST(KvType, RoundTripEqualsAnIndependentRounding) {
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  const int64_t n = 5, dim = 96;
  std::vector<float> k(size_t(n * dim)), v(size_t(n * dim));
  for (float& x : k) x = nd(rng);
  for (float& x : v) x = nd(rng) * 1e-3f;
  for (const char* name : {"f16", "q8_0"}) {
    KvCache c(2, 8, dim, parse_kv_type(name));
    c.store(1, 2, n, k.data(), v.data());
    std::vector<float> kb(k.size()), vb(v.size());
    c.load(1, 2, n, kb.data(), vb.data());
    for (int64_t r = 0; r < n; ++r) {
      std::vector<double> kr(k.begin() + r * dim, k.begin() + (r + 1) * dim);
      std::vector<double> vr(v.begin() + r * dim, v.begin() + (r + 1) * dim);
      ork::testing::round_kv_row(name, kr.data(), dim);
      ork::testing::round_kv_row(name, vr.data(), dim);
      for (int64_t i = 0; i < dim; ++i) {
        ASSERT_EQ(kb[size_t(r * dim + i)], float(kr[size_t(i)])) << name << " K row " << r << " element " << i;
        ASSERT_EQ(vb[size_t(r * dim + i)], float(vr[size_t(i)])) << name << " V row " << r << " element " << i;
      }
    }
  }
}

TEST(KvType, ValuesATypeCannotHoldAreErrorsNamingThem) {
  float k[32] = {}, v[32] = {};
  k[3] = 70000.0f;
  KvCache f16(2, 4, 32, KvType::kF16);
  std::string e = error_of([&] { f16.store(1, 0, 1, k, v); });
  EXPECT_NE(e.find("f16 KV cache: K of layer 1"), std::string::npos) << e;
  EXPECT_NE(e.find("element 3"), std::string::npos) << e;
  EXPECT_NE(e.find("beyond f16's range"), std::string::npos) << e;
  k[3] = 0.0f;
  v[5] = NAN;
  for (KvType t : {KvType::kF32, KvType::kQ8_0}) {
    KvCache c(2, 4, 32, t);
    e = error_of([&] { c.store(0, 2, 1, k, v); });
    EXPECT_NE(e.find("V of layer 0"), std::string::npos) << e;
    EXPECT_NE(e.find("NaN/Inf"), std::string::npos) << e;
  }
  KvCache c(1, 4, 32, KvType::kF16);
  EXPECT_THROW(c.store(0, 3, 2, k, v), Error);  // past the context
  EXPECT_THROW((void)c.k_f32(0), Error);        // f32 rows of an f16 cache
}

// The forward pass (exact matmuls) with an f16 or q8_0 cache against the float64 reference that
// rounds each position's K and V the same way: batched prefill, then decode over those rows.
class ForwardKvTypes : public ::testing::TestWithParam<std::string> {};

TEST_P(ForwardKvTypes, MatchTheReferenceThatRoundsKvAlike) {
  const std::string kv = GetParam();
  ork::testing::TempDir dir;
  gen::ModelSpec spec;
  spec.arch = "llama";
  spec.n_vocab = 300;
  spec.n_embd = 128;
  spec.n_ff = 256;
  spec.n_head = 4;
  spec.n_head_kv = 2;  // kv_dim 64: two q8_0 blocks
  spec.n_layer = 2;
  spec.seed = 11;
  const std::string path = dir.file("m.gguf");
  gen::write_model(spec, path);
  const std::vector<int32_t> tokens = {1, 17, 42, 299, 5, 0, 123, 77, 8, 250};
  const auto ref = ork::testing::reference_logits(path, tokens, 0, kv);
  const auto ref32 = ork::testing::reference_logits(path, tokens, 0, "f32");

  const auto m = Model::load(path);
  const Config& cfg = m->config();
  ThreadPool pool(2);
  CpuMatmul backend(pool);
  Forward fwd(cfg, m->weights(), backend, pool);
  KvCache cache(cfg.n_layer, 16, cfg.kv_dim(), parse_kv_type(kv));
  const int64_t n_pre = 6;
  std::vector<float> logits(size_t(n_pre * cfg.n_vocab));
  fwd.eval(cache, tokens.data(), n_pre, 0, true, logits.data());
  double moved = 0;  // how far rounding K/V moves the reference: the test must be able to tell
  for (int64_t t = 0; t < n_pre; ++t) {
    EXPECT_LT(ork::testing::normalized_error(logits.data() + t * cfg.n_vocab, ref[size_t(t)]), 1e-5)
        << kv << " prefill position " << t;
  }
  for (size_t t = size_t(n_pre); t < tokens.size(); ++t) {
    fwd.eval(cache, &tokens[t], 1, int64_t(t), false, logits.data());
    EXPECT_LT(ork::testing::normalized_error(logits.data(), ref[t]), 1e-5) << kv << " decode position " << t;
    std::vector<float> r32(ref32[t].begin(), ref32[t].end());
    moved = std::max(moved, ork::testing::normalized_error(r32.data(), ref[t]));
  }
  EXPECT_GT(moved, 1e-5) << "rounding K/V to " << kv << " should move the logits more than the tolerance";
  EXPECT_GT(fwd.kv_staging_bytes(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Types, ForwardKvTypes, ::testing::Values("f16", "q8_0"));

}  // namespace
}  // namespace ork::model
