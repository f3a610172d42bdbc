// w4a8 (int4 per-row weights, int8 per-token activations; quant/requant_int4.h) at the matmul level
// on activations with four channels s = 20..100 times the rest, of the two kinds real LLMs have:
//  - residual: the channels are large in the residual stream itself (LLM.int8()); the weights are
//    ordinary. The int4 weights' own rounding error (≈ 13 % here) dominates, and the int8
//    activations, rotated, hold the outliers: the error stays within 1.2× the no-outlier error.
//  - norm-made: x = n ⊙ g with g_j = s on those channels and the weight columns ÷ s (the same float
//    function; how `ork-gen-model --outliers-of` builds its variants). The rotation alone spreads the
//    large activations over every channel, where the int4 weight error multiplies them (worse than
//    unrotated); folding the norm (quant/norm_fold.h) moves g into the weights before the rotation
//    and undoes it.
// Relative output error against f64; the table goes to stdout.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

#include "matmul_error.h"
#include "quant/hadamard.h"
#include "quant/norm_fold.h"
#include "quant/requant.h"
#include "quant/requant_int4.h"

namespace ork::quant {
namespace {

using testing::rel_error;

constexpr int64_t kM = 32, kN = 64, kK = 512;
constexpr int64_t kChannels[] = {3, 77, 200, 451};

enum class Kind { kNone, kResidual, kNormMade };

struct Problem {
  std::vector<float> x, w, g;  // [kM][kK] the linear's input, [kN][kK], [kK] the norm weight
};

Problem make_problem(Kind kind, float s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  Problem p;
  p.x.resize(size_t(kM * kK));
  p.w.resize(size_t(kN * kK));
  p.g.assign(size_t(kK), 1.0f);
  for (float& v : p.x) v = nd(rng);
  for (float& v : p.w) v = 0.05f * nd(rng);
  for (float& v : p.g) v = 0.5f + 0.1f * nd(rng);  // an ordinary norm weight: near 0.5, all positive
  for (int64_t j = 0; j < kK; ++j)
    for (int64_t m = 0; m < kM; ++m) p.x[size_t(m * kK + j)] *= p.g[size_t(j)];
  if (kind == Kind::kNone) return p;
  for (const int64_t c : kChannels) {
    for (int64_t m = 0; m < kM; ++m) p.x[size_t(m * kK + c)] *= s;
    if (kind == Kind::kNormMade) {
      p.g[size_t(c)] *= s;
      for (int64_t n = 0; n < kN; ++n) p.w[size_t(n * kK + c)] /= s;
    }
  }
  return p;
}

std::vector<double> f64_matmul(const Problem& p) { return testing::f64_matmul(p.x, p.w, kM, kN, kK); }

// int4 weights with one scale per row, int8 activations per token, exact int32 sums, dequantized.
std::vector<float> w4a8(const Problem& p) {
  std::vector<int8_t> qx(p.x.size()), qw(p.w.size());
  std::vector<float> sx(kM), sw(kN), y(size_t(kM * kN));
  quantize_rows_i8(p.x.data(), kM, kK, qx.data(), sx.data());
  quantize_weights_i4(p.w.data(), kN, kK, kK, qw.data(), sw.data());
  const std::vector<int32_t> c = testing::int32_sums(qx, qw, kM, kN, kK);
  dequantize_i32_groups(c.data(), 1, kM, kN, sx.data(), sw.data(), y.data());
  return y;
}

std::vector<float> rotated_w4a8(Problem p) {
  const int64_t b = hadamard_block(kK);
  hadamard_rotate_rows(p.x.data(), kM, kK, b);
  hadamard_rotate_rows(p.w.data(), kN, kK, b);
  return w4a8(p);
}

// What the int4 paths run: the norm folded into the weight rows, divided out of the activations,
// then both rotated.
std::vector<float> folded_rotated_w4a8(Problem p) {
  for (int64_t n = 0; n < kN; ++n) fold_norm_into_row(p.w.data() + n * kK, p.g.data(), kK);
  std::vector<float> buf;
  unfold_norm_rows(p.x.data(), kM, kK, p.g.data(), buf);
  p.x = buf;
  return rotated_w4a8(std::move(p));
}

TEST(OutlierW4a8, FoldingTheNormAndRotatingKeepBothKindsOfOutliersNearTheNoOutlierError) {
  const Problem plain = make_problem(Kind::kNone, 1.0f, 1);
  const std::vector<double> plain_ref = f64_matmul(plain);
  const double base = rel_error(w4a8(plain), plain_ref);
  const double base_folded = rel_error(folded_rotated_w4a8(plain), plain_ref);
  std::printf("outliers  | scale | w4a8    | + rotation | + norm fold + rotation\n");
  std::printf("none      |     - | %.5f | %.5f    | %.5f\n", base, rel_error(rotated_w4a8(plain), plain_ref),
              base_folded);
  EXPECT_LT(base_folded, 1.5 * base);
  for (const Kind kind : {Kind::kResidual, Kind::kNormMade}) {
    for (const float s : {20.0f, 50.0f, 100.0f}) {
      const Problem p = make_problem(kind, s, 2);
      const std::vector<double> ref = f64_matmul(p);
      const double today = rel_error(w4a8(p), ref), rot = rel_error(rotated_w4a8(p), ref);
      const double folded = rel_error(folded_rotated_w4a8(p), ref);
      std::printf("%-9s | %5.0f | %.5f | %.5f    | %.5f\n", kind == Kind::kResidual ? "residual" : "norm-made",
                  double(s), today, rot, folded);
      EXPECT_LT(folded, 1.2 * base_folded) << s;
      if (kind == Kind::kResidual) {
        // The int4 weights' error dominates; the int8 activations, rotated, hold these outliers.
        EXPECT_LT(rot, 1.2 * base) << s;
      } else {
        EXPECT_GT(today, 1.2 * base) << s;  // these hurt ...
        EXPECT_GT(rot, today) << s;         // ... the rotation alone makes them worse ...
        EXPECT_LT(folded, rot / 1.8) << s;  // ... and the fold undoes them
      }
    }
  }
}

}  // namespace
}  // namespace ork::quant
