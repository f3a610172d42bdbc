// first_non_finite: the index of the first NaN or ±Inf, against a std::isfinite scan, for every
// length around the vector width and block size and every position of the bad value.
#include "core/non_finite.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace ork {
namespace {

int64_t reference(const std::vector<float>& v) {
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) return int64_t(i);
  return -1;
}

// Finite values of every kind the exponent test must pass: zeros, subnormals, the extremes.
std::vector<float> finite_row(size_t n) {
  const float kinds[] = {0.0f, -0.0f, 1.5f, -2.25f, std::numeric_limits<float>::max(),
                         -std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                         std::numeric_limits<float>::min(), 1e-30f, -7e37f};
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = kinds[i % (sizeof kinds / sizeof kinds[0])];
  return v;
}

TEST(FirstNonFinite, AllFiniteIsMinusOne) {
  for (size_t n : {0, 1, 3, 4, 7, 8, 9, 255, 256, 257, 1000, 32000}) {
    const std::vector<float> v = finite_row(n);
    EXPECT_EQ(first_non_finite(v.data(), int64_t(n)), -1) << n;
  }
}

TEST(FirstNonFinite, FindsEveryPositionOfNanAndInf) {
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                       std::numeric_limits<float>::signaling_NaN()};
  for (size_t n : {1, 5, 8, 13, 256, 259, 520}) {
    for (size_t at = 0; at < n; ++at) {
      for (float b : bad) {
        std::vector<float> v = finite_row(n);
        v[at] = b;
        ASSERT_EQ(first_non_finite(v.data(), int64_t(n)), reference(v)) << "n=" << n << " at=" << at;
      }
    }
  }
}

TEST(FirstNonFinite, TheFirstOfSeveralAndNotPastCount) {
  std::vector<float> v = finite_row(600);
  v[300] = std::numeric_limits<float>::infinity();
  v[301] = std::numeric_limits<float>::quiet_NaN();
  v[20] = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(first_non_finite(v.data(), 600), 20);
  EXPECT_EQ(first_non_finite(v.data(), 20), -1);       // a bad value past count does not count
  EXPECT_EQ(first_non_finite(v.data() + 21, 279), -1);  // 21..299
  EXPECT_EQ(first_non_finite(v.data() + 21, 280), 279);
}

}  // namespace
}  // namespace ork
