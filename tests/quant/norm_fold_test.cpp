// quant::norm_fold: the factor is |g| (1 for a zero or non-finite g), folding it into a weight row and
// dividing it out of the activations keeps the dot product, and the activation that is left is the
// normalized row — what makes a norm-made outlier channel vanish from the quantized activations.
#include "quant/norm_fold.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/error.h"

namespace ork::quant {
namespace {

TEST(NormFold, FactorIsTheMagnitudeOrOne) {
  EXPECT_EQ(norm_fold_factor(2.5f), 2.5f);
  EXPECT_EQ(norm_fold_factor(-0.25f), 0.25f);
  EXPECT_EQ(norm_fold_factor(0.0f), 1.0f);
  EXPECT_EQ(norm_fold_factor(-0.0f), 1.0f);
  EXPECT_EQ(norm_fold_factor(std::numeric_limits<float>::quiet_NaN()), 1.0f);
  EXPECT_EQ(norm_fold_factor(-std::numeric_limits<float>::infinity()), 1.0f);
}

TEST(NormFold, FoldedWeightsAndUnfoldedRowsKeepTheProduct) {
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int64_t m = 3, k = 64;
  std::vector<float> g(static_cast<size_t>(k)), n(static_cast<size_t>(m * k)), x(n.size()), w(g.size());
  for (int64_t j = 0; j < k; ++j) g[size_t(j)] = nd(rng) * (j % 16 == 5 ? 100.0f : 1.0f);  // outlier channels
  g[9] = 0.0f;
  for (float& v : w) v = nd(rng);
  for (size_t i = 0; i < n.size(); ++i) n[i] = nd(rng), x[i] = n[i] * g[i % size_t(k)];
  std::vector<float> folded = w, buf;
  fold_norm_into_row(folded.data(), g.data(), k);
  const float* u = unfold_norm_rows(x.data(), m, k, g.data(), buf);
  ASSERT_EQ(u, buf.data());
  for (int64_t i = 0; i < m; ++i) {
    double want = 0, got = 0, mag = 0;
    for (int64_t j = 0; j < k; ++j) {
      want += double(x[size_t(i * k + j)]) * double(w[size_t(j)]);
      got += double(u[i * k + j]) * double(folded[size_t(j)]);
      mag += std::fabs(double(x[size_t(i * k + j)]) * double(w[size_t(j)]));
      // What is quantized is ±n: the norm's outlier channels are gone from the activations.
      if (g[size_t(j)] != 0.0f) {
        EXPECT_NEAR(std::fabs(u[i * k + j]), std::fabs(n[size_t(i * k + j)]), 1e-5f) << j;
      }
    }
    EXPECT_NEAR(got, want, 1e-6 * mag) << "row " << i;
  }
  EXPECT_EQ(u[9], 0.0f);  // g = 0: x is 0, divided by 1
  EXPECT_EQ(folded[9], w[9]);
  EXPECT_THROW(unfold_norm_rows(nullptr, 1, k, g.data(), buf), Error);
}

}  // namespace
}  // namespace ork::quant
