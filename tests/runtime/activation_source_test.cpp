// runtime::ActivationSource: f32 rows, an FFN's glu, and rows quantized already (what a split call's
// two sides share) quantize to the same bits; a quantized source has no f32 form.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <random>
#include <vector>

#include "core/error.h"
#include "quant/requant.h"
#include "runtime/activation_source.h"

namespace ork::runtime {
namespace {

std::vector<float> random_rows(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

TEST(ActivationSource, QuantizedRowsGiveTheBitsTheyWereQuantizedFrom) {
  const int64_t m = 3, k = 96;
  model::Linear w;
  w.k = k, w.n = 8;
  const std::vector<float> gate = random_rows(m * k, 1), up = random_rows(m * k, 2);
  for (const ActivationSource src : {ActivationSource::rows(gate.data()),
                                     ActivationSource::gated(ops::Glu::kSwiglu, gate.data(), up.data())}) {
    std::vector<int8_t> xq, xq2;
    std::vector<float> sa, sa2, act, rot;
    src.quantize(w, m, xq, sa, act, rot);
    ActivationSource::quantized(xq.data(), sa.data()).quantize(w, m, xq2, sa2, act, rot);
    EXPECT_EQ(xq2, xq);
    EXPECT_EQ(sa2, sa);
  }
}

// An FFN's gate/up results left unscaled (GatedSums: int32 bit patterns in the first columns, f32 in
// the rest, as a split call leaves them) quantize to the bits of the results scaled by
// quant::dequantize_i32 and then quantized as a gated source.
TEST(ActivationSource, UnscaledSumsGiveTheBitsOfTheirScaledRows) {
  const int64_t m = 3, k = 96;
  model::Linear w;
  w.k = k, w.n = 8;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> sum(-400000, 400000);
  std::vector<int32_t> gi(size_t(m * k)), ui(size_t(m * k));
  for (int32_t& v : gi) v = sum(rng);
  for (int32_t& v : ui) v = sum(rng);
  const std::vector<float> sa = {0.01f, 0.002f, 0.03f}, sbg = random_rows(k, 3), sbu = random_rows(k, 4);
  std::vector<float> gate(size_t(m * k)), up(size_t(m * k));
  quant::dequantize_i32(gi.data(), m, k, sa.data(), sbg.data(), gate.data());
  quant::dequantize_i32(ui.data(), m, k, sa.data(), sbu.data(), up.data());
  std::vector<int8_t> want_q;
  std::vector<float> want_sa, act, rot;
  ActivationSource::gated(ops::Glu::kSwiglu, gate.data(), up.data()).quantize(w, m, want_q, want_sa, act, rot);
  for (const int64_t cut : {k, int64_t(64), int64_t(0)}) {  // columns [0, cut) unscaled, the rest f32
    std::vector<float> gs = gate, us = up;
    for (int64_t r = 0; r < m; ++r) {
      std::memcpy(gs.data() + r * k, gi.data() + r * k, size_t(cut) * 4);
      std::memcpy(us.data() + r * k, ui.data() + r * k, size_t(cut) * 4);
    }
    const GatedSums sums{{gs.data(), k, cut, sa.data(), sbg.data()}, {us.data(), k, cut, sa.data(), sbu.data()}};
    std::vector<int8_t> xq;
    std::vector<float> xs;
    ActivationSource::gated_sums(ops::Glu::kSwiglu, &sums).quantize(w, m, xq, xs, act, rot);
    EXPECT_EQ(xq, want_q) << cut << " unscaled columns";
    EXPECT_EQ(xs, want_sa) << cut << " unscaled columns";
    // The int4 paths' form (W4A4 quantizes the rows whole): the gated rows, bit for bit.
    std::vector<float> all, want_all;
    const float* rows = ActivationSource::gated_sums(ops::Glu::kSwiglu, &sums).materialize(w, m, all);
    ActivationSource::gated(ops::Glu::kSwiglu, gate.data(), up.data()).materialize(w, m, want_all);
    EXPECT_EQ(std::memcmp(rows, want_all.data(), want_all.size() * sizeof(float)), 0) << cut << " unscaled columns";
  }
}

// model::UnscaledRows scaled in place (what the forward pass's readers do): dequantize_i32's bits in
// the unscaled columns, the f32 columns untouched, and afterwards plain f32 rows.
TEST(UnscaledRows, ScaledInPlaceGiveDequantizeI32sBits) {
  const int64_t m = 2, n = 40, cut = 32;
  const std::vector<int32_t> c = {-7, 1 << 20, 123456, -99999};
  const std::vector<float> sa = {0.25f, 0.0123f}, sb = random_rows(n, 9), f32 = random_rows(m * n, 10);
  std::vector<int32_t> ci(size_t(m * n));
  for (size_t i = 0; i < ci.size(); ++i) ci[i] = c[i % c.size()] * int32_t(i + 1);
  std::vector<float> want(size_t(m * n));
  quant::dequantize_i32(ci.data(), m, n, sa.data(), sb.data(), want.data());
  std::vector<float> y = f32;
  for (int64_t r = 0; r < m; ++r) {
    std::memcpy(y.data() + r * n, ci.data() + r * n, size_t(cut) * 4);
    for (int64_t j = cut; j < n; ++j) want[size_t(r * n + j)] = f32[size_t(r * n + j)];
  }
  model::UnscaledRows rows{y.data(), n, cut, sa.data(), sb.data()};
  std::vector<float> row1(static_cast<size_t>(n));
  rows.row(1, row1.data());
  EXPECT_EQ(std::memcmp(row1.data(), want.data() + n, size_t(n) * 4), 0);
  rows.scale_rows(m);
  EXPECT_EQ(rows.n_sums, 0);
  EXPECT_EQ(std::memcmp(y.data(), want.data(), want.size() * 4), 0);
}

// The normed residual stream with its add pending (model::ResidualNorm), computed inside the
// quantizing pass, quantizes to the bits of its materialized rows — plain, with a norm weight divided
// out (the int4 paths' unfold) and as int4 codes — and writes the stream on the way; a NaN in it is
// reported as the weight's input.
TEST(ActivationSource, AResidualSourceGivesTheBitsOfItsMaterializedRows) {
  const int64_t m = 4, k = 96;
  gguf::TensorInfo info;
  info.name = "blk.3.attn_q.weight";
  model::Linear w;
  w.k = k, w.n = 8, w.w = &info;
  const std::vector<float> base = random_rows(m * k, 21), branch = random_rows(m * k, 22);
  const std::vector<float> norm = random_rows(k, 23), fold = random_rows(k, 24);
  std::vector<float> h(size_t(m * k)), stream(size_t(m * k)), stream2(size_t(m * k), -1.f);
  model::ResidualNorm r = model::ResidualNorm::normed(base.data(), norm.data(), 1e-6f, k, h.data(), nullptr);
  r.branch = model::UnscaledRows::f32(branch.data(), k);
  r.stream_out = stream.data();
  const float* rows = r.materialize(m);
  model::ResidualNorm fused = r;
  fused.stream_out = stream2.data();
  fused.h = nullptr;  // the quantizing pass writes no rows

  for (const bool unfold : {false, true}) {
    w.in_norm = unfold ? fold.data() : nullptr;
    const ActivationSource want = ActivationSource::rows(rows).unfold_norm(w);
    const ActivationSource got = ActivationSource::residual_rows(&fused).unfold_norm(w);
    std::vector<int8_t> xq, want_q;
    std::vector<float> sa, want_sa, act, rot;
    want.quantize(w, m, want_q, want_sa, act, rot);
    std::fill(stream2.begin(), stream2.end(), -1.f);
    got.quantize(w, m, xq, sa, act, rot);
    EXPECT_EQ(xq, want_q) << "unfold " << unfold;
    EXPECT_EQ(sa, want_sa) << "unfold " << unfold;
    EXPECT_EQ(stream2, stream) << "the stream written by the quantizing pass";
    want.quantize_i4(w, m, want_q, want_sa, act, rot);
    got.quantize_i4(w, m, xq, sa, act, rot);
    EXPECT_EQ(xq, want_q) << "int4, unfold " << unfold;
    EXPECT_EQ(sa, want_sa) << "int4, unfold " << unfold;
  }

  std::vector<float> bad = base;
  bad[size_t(2 * k + 5)] = std::numeric_limits<float>::quiet_NaN();
  fused.base = bad.data();
  std::vector<int8_t> xq;
  std::vector<float> sa, act, rot;
  w.in_norm = nullptr;
  try {
    ActivationSource::residual_rows(&fused).quantize(w, m, xq, sa, act, rot);
    FAIL() << "a NaN in the stream was quantized";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("blk.3.attn_q.weight"), std::string::npos) << e.what();
  }
  model::Linear narrow = w;
  narrow.k = k - 32;
  EXPECT_THROW(ActivationSource::residual_rows(&fused).quantize(narrow, m, xq, sa, act, rot), Error);
}

TEST(ActivationSource, AQuantizedSourceHasNoFloatRows) {
  model::Linear w;
  w.k = 32, w.n = 4;
  gguf::TensorInfo info;
  info.name = "blk.0.ffn_down.weight";
  w.w = &info;
  const std::vector<int8_t> xq(32, 1);
  const std::vector<float> sa(1, 0.5f);
  std::vector<float> all;
  EXPECT_THROW(ActivationSource::quantized(xq.data(), sa.data()).materialize(w, 1, all), Error);
}

}  // namespace
}  // namespace ork::runtime
