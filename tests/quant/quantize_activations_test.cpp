#include "quant/quantize_activations.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "quant/hadamard.h"
#include "quant/requant.h"

namespace ork::quant {
namespace {

std::vector<float> activations(int64_t m, int64_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(size_t(m * k));
  for (float& v : x) v = d(rng);
  for (int64_t r = 0; r < m; ++r) x[size_t(r * k + (r * 7) % k)] *= 60.0f;  // an outlier channel per row
  return x;
}

// The one-pass form equals the two-step reference (rotate a copy, then quantize) bit for bit, for K
// whose rotation block is 512 (1536), 128 (8960 = 70 · 128), 2 (6) and 1 (odd: no rotation).
TEST(QuantizeActivations, EqualsRotateThenQuantize) {
  for (const int64_t k : {1536, 8960, 6, 7}) {
    for (const int64_t m : {1, 5}) {
      const std::vector<float> x = activations(m, k, uint32_t(k + m));
      std::vector<float> buf;
      std::vector<int8_t> q_ref(size_t(m * k)), q(size_t(m * k), 99);
      std::vector<float> s_ref(static_cast<size_t>(m)), s(static_cast<size_t>(m), -1.0f);
      quantize_rows_i8(rotate_for_int8(x.data(), m, k, buf), m, k, q_ref.data(), s_ref.data());
      std::vector<float> row;
      ASSERT_EQ(quantize_activations_i8(x.data(), m, k, q.data(), s.data(), row), -1);
      EXPECT_EQ(q, q_ref) << "k " << k << " m " << m;
      for (int64_t r = 0; r < m; ++r) {
        EXPECT_EQ(std::memcmp(&s[size_t(r)], &s_ref[size_t(r)], sizeof(float)), 0) << "k " << k << " row " << r;
      }
    }
  }
}

TEST(QuantizeActivations, ReportsTheFirstNonFiniteInput) {
  const int64_t m = 3, k = 1536;
  std::vector<float> x = activations(m, k, 1);
  std::vector<int8_t> q(size_t(m * k));
  std::vector<float> s(static_cast<size_t>(m)), row;
  x[size_t(1 * k + 700)] = std::numeric_limits<float>::quiet_NaN();
  x[size_t(2 * k + 3)] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(quantize_activations_i8(x.data(), m, k, q.data(), s.data(), row), 1 * k + 700);
  x[size_t(1 * k + 700)] = 0.5f;
  EXPECT_EQ(quantize_activations_i8(x.data(), m, k, q.data(), s.data(), row), 2 * k + 3);
  x[size_t(2 * k + 3)] = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(quantize_activations_i8(x.data(), m, k, q.data(), s.data(), row), 2 * k + 3);
}

}  // namespace
}  // namespace ork::quant
