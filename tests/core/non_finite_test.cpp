// first_non_finite: the index of the first NaN or ±Inf, against a std::isfinite scan, for every
// length around the vector width and block size and every position of the bad value; and
// first_not_below (its generalization: |x| >= limit or NaN) against a !(|x| < limit) scan at f16's
// limit, with the values on both sides of it.
#include "core/non_finite.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
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

TEST(FirstNotBelow, MatchesTheScalarTestAroundTheF16Limit) {
  constexpr float kLimit = 65520.0f;  // f16 rounds |x| >= 65520 to inf
  const float below = std::nextafter(kLimit, 0.0f);
  const float edges[] = {kLimit, -kLimit, std::nextafter(kLimit, INFINITY), 1e30f, -3e38f,
                         std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                         -std::numeric_limits<float>::quiet_NaN()};
  const auto scalar = [&](const std::vector<float>& v) {
    for (size_t i = 0; i < v.size(); ++i)
      if (!(std::fabs(v[i]) < kLimit)) return int64_t(i);
    return int64_t(-1);
  };
  std::vector<float> ok = finite_row(300);
  for (float& x : ok) x = std::fabs(x) < kLimit ? x : std::copysign(below, x);  // all just in range
  ok[7] = below;
  ok[8] = -below;
  EXPECT_EQ(first_not_below(ok.data(), 300, kLimit), -1);
  std::mt19937 rng(7);
  for (size_t n : {1, 8, 9, 256, 263, 1024}) {
    for (int trial = 0; trial < 40; ++trial) {
      std::vector<float> v = ok;
      v.resize(n, below);
      const size_t at = rng() % n;
      v[at] = edges[rng() % (sizeof edges / sizeof edges[0])];
      if (trial % 2 == 0) v[(at + rng() % n) % n] = edges[rng() % (sizeof edges / sizeof edges[0])];
      ASSERT_EQ(first_not_below(v.data(), int64_t(n), kLimit), scalar(v)) << "n=" << n << " at=" << at;
    }
  }
}

}  // namespace
}  // namespace ork
