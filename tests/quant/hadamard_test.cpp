// quant::hadamard_rotate_rows against the O(b²) product with Sylvester entries, its orthogonality,
// the invariance of x Wᵀ under rotating both sides, the block choice and the bad-argument errors.
#include "quant/hadamard.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/error.h"

namespace ork::quant {
namespace {

std::vector<float> random_rows(int64_t m, int64_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> v(size_t(m * k));
  for (float& x : v) x = nd(rng);
  return v;
}

// Reference: y[r][b0 + i] = sum_j H[i][j] x[r][b0 + j] / sqrt(b), in double.
std::vector<double> reference_rotate(const std::vector<float>& x, int64_t m, int64_t k, int64_t b) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < m; ++r)
    for (int64_t b0 = 0; b0 < k; b0 += b)
      for (int64_t i = 0; i < b; ++i) {
        double s = 0;
        for (int64_t j = 0; j < b; ++j) s += hadamard_sign(i, j) * double(x[size_t(r * k + b0 + j)]);
        y[size_t(r * k + b0 + i)] = s / std::sqrt(double(b));
      }
  return y;
}

TEST(Hadamard, SignsAreSylvesters) {
  // H_4 = [[1,1,1,1],[1,-1,1,-1],[1,1,-1,-1],[1,-1,-1,1]]
  const int h4[4][4] = {{1, 1, 1, 1}, {1, -1, 1, -1}, {1, 1, -1, -1}, {1, -1, -1, 1}};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(hadamard_sign(i, j), h4[i][j]) << i << "," << j;
}

TEST(Hadamard, FastTransformMatchesTheMatrixProduct) {
  for (const int64_t b : {2, 4, 8, 64, 128, 512}) {
    const int64_t m = 3, k = b * 3;
    std::vector<float> x = random_rows(m, k, uint32_t(b));
    const std::vector<double> want = reference_rotate(x, m, k, b);
    hadamard_rotate_rows(x.data(), m, k, b);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(x[i], want[i], 2e-5 * std::sqrt(double(b))) << b << " " << i;
  }
}

TEST(Hadamard, IsItsOwnInverseAndKeepsNorms) {
  const int64_t m = 4, k = 256, b = 128;
  const std::vector<float> x0 = random_rows(m, k, 9);
  std::vector<float> x = x0;
  hadamard_rotate_rows(x.data(), m, k, b);
  for (int64_t r = 0; r < m; ++r) {
    double n0 = 0, n1 = 0;
    for (int64_t i = 0; i < k; ++i) {
      n0 += double(x0[size_t(r * k + i)]) * x0[size_t(r * k + i)];
      n1 += double(x[size_t(r * k + i)]) * x[size_t(r * k + i)];
    }
    EXPECT_NEAR(n1, n0, 1e-5 * n0);
  }
  hadamard_rotate_rows(x.data(), m, k, b);  // H symmetric and orthogonal: H H = I
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], x0[i], 1e-5) << i;
}

TEST(Hadamard, RotatingBothSidesKeepsTheProduct) {
  const int64_t m = 5, n = 7, k = 384, b = hadamard_block(k);
  ASSERT_EQ(b, 128);
  std::vector<float> x = random_rows(m, k, 1), w = random_rows(n, k, 2);
  std::vector<double> y(size_t(m * n));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      double s = 0;
      for (int64_t i = 0; i < k; ++i) s += double(x[size_t(r * k + i)]) * w[size_t(c * k + i)];
      y[size_t(r * n + c)] = s;
    }
  hadamard_rotate_rows(x.data(), m, k, b);
  hadamard_rotate_rows(w.data(), n, k, b);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      double s = 0;
      for (int64_t i = 0; i < k; ++i) s += double(x[size_t(r * k + i)]) * w[size_t(c * k + i)];
      EXPECT_NEAR(s, y[size_t(r * n + c)], 1e-4 * std::sqrt(double(k)));
    }
}

TEST(Hadamard, BlockIsTheLargestPowerOfTwoDividingKUpTo512) {
  EXPECT_EQ(hadamard_block(1), 1);
  EXPECT_EQ(hadamard_block(7), 1);
  EXPECT_EQ(hadamard_block(12), 4);
  EXPECT_EQ(hadamard_block(128), 128);
  EXPECT_EQ(hadamard_block(1536), 512);  // Qwen2.5-1.5B n_embd = 3 x 512
  EXPECT_EQ(hadamard_block(8960), 256);  // its n_ff = 35 x 256
  EXPECT_EQ(hadamard_block(4096), 512);
  EXPECT_THROW(hadamard_block(0), Error);
}

TEST(Hadamard, BadBlocksAreErrors) {
  std::vector<float> x(24, 1.0f);
  EXPECT_THROW(hadamard_rotate_rows(x.data(), 1, 24, 16), Error);  // does not divide
  EXPECT_THROW(hadamard_rotate_rows(x.data(), 1, 24, 6), Error);   // not a power of two
  EXPECT_THROW(hadamard_rotate_rows(x.data(), 1, 24, 0), Error);
  std::vector<float> y = x;
  hadamard_rotate_rows(y.data(), 1, 24, 1);
  EXPECT_EQ(y, x);
}

}  // namespace
}  // namespace ork::quant
