// w8a8 at the matmul level on activations with a few outlier channels 20-100x the rest (as in real
// LLMs: LLM.int8(), SmoothQuant): the relative output error against f32 of today's scheme (int8
// per-row weights, int8 per-token activations; quant/requant.h) beside the same scheme after a
// block-Hadamard rotation of both sides (quant/hadamard.h). The table goes to stdout.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

#include "matmul_error.h"
#include "quant/hadamard.h"
#include "quant/requant.h"

namespace ork::quant {
namespace {

using testing::rel_error;

constexpr int64_t kM = 32, kN = 64, kK = 512;

struct Problem {
  std::vector<float> x, w;  // [kM][kK], [kN][kK]
};

// Gaussian activations and weights; `n_outliers` activation channels scaled by `s` in every token.
Problem make_problem(float s, int n_outliers, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  Problem p;
  p.x.resize(size_t(kM * kK));
  p.w.resize(size_t(kN * kK));
  for (float& v : p.x) v = nd(rng);
  for (float& v : p.w) v = 0.05f * nd(rng);
  const int64_t channels[] = {3, 77, 200, 451};
  for (int o = 0; o < n_outliers; ++o)
    for (int64_t m = 0; m < kM; ++m) p.x[size_t(m * kK + channels[o])] *= s;
  return p;
}

std::vector<double> f64_matmul(const Problem& p) { return testing::f64_matmul(p.x, p.w, kM, kN, kK); }

// Today's w8a8: per-row int8 weights, per-token int8 activations, exact int32 products, dequantized.
std::vector<float> w8a8(const Problem& p) {
  std::vector<int8_t> qx(p.x.size()), qw(p.w.size());
  std::vector<float> sx(kM), sw(kN), y(size_t(kM * kN));
  quantize_rows_i8(p.x.data(), kM, kK, qx.data(), sx.data());
  quantize_weights_i8(p.w.data(), kN, kK, qw.data(), sw.data());
  const std::vector<int32_t> c = testing::int32_sums(qx, qw, kM, kN, kK);
  dequantize_i32(c.data(), kM, kN, sx.data(), sw.data(), y.data());
  return y;
}

std::vector<float> rotated_w8a8(Problem p) {
  const int64_t b = hadamard_block(kK);
  hadamard_rotate_rows(p.x.data(), kM, kK, b);
  hadamard_rotate_rows(p.w.data(), kN, kK, b);
  return w8a8(p);
}

TEST(OutlierW8a8, RotationKeepsTheErrorOfOutlierActivationsNearTheNoOutlierError) {
  const Problem plain = make_problem(1.0f, 0, 1);
  const double base_today = rel_error(w8a8(plain), f64_matmul(plain));
  const double base_rot = rel_error(rotated_w8a8(plain), f64_matmul(plain));
  std::printf("outlier scale | channels | w8a8 rel. error | w8a8 + Hadamard(%lld) rel. error\n",
              (long long)hadamard_block(kK));
  std::printf("%13s | %8d | %15.5f | %15.5f\n", "none", 0, base_today, base_rot);
  // Without outliers the rotation neither helps nor hurts much.
  EXPECT_LT(base_rot, 1.5 * base_today);
  for (const float s : {20.0f, 50.0f, 100.0f}) {
    const Problem p = make_problem(s, 4, 2);
    const std::vector<double> ref = f64_matmul(p);
    const double today = rel_error(w8a8(p), ref), rot = rel_error(rotated_w8a8(p), ref);
    std::printf("%13.0f | %8d | %15.5f | %15.5f\n", double(s), 4, today, rot);
    EXPECT_GT(today, 2.0 * base_today) << s;  // the outliers do hurt today's scheme
    EXPECT_LT(rot, today / 2.0) << s;
  }
}

}  // namespace
}  // namespace ork::quant
