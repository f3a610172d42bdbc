#include "ops/gemm_i8.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/error.h"

namespace ork::ops {
namespace {

std::vector<int8_t> random_i8(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<int8_t> v(n);
  for (int8_t& x : v) x = int8_t(dist(gen));
  return v;
}

std::vector<int32_t> ref_gemm(const std::vector<int8_t>& a, const std::vector<int8_t>& b, int64_t m,
                              int64_t n, int64_t k) {
  std::vector<int32_t> c(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t s = 0;
      for (int64_t t = 0; t < k; ++t) s += int64_t(a[size_t(i * k + t)]) * b[size_t(j * k + t)];
      c[size_t(i * n + j)] = int32_t(s);
    }
  return c;
}

TEST(GemmI8, ExactAgainstReference) {
  ThreadPool pool(3);
  const int64_t shapes[][3] = {{1, 1, 1},   {1, 7, 15},  {2, 16, 16}, {3, 17, 33}, {5, 31, 100},
                               {40, 9, 64}, {1, 70, 257}, {33, 40, 48}, {17, 3, 1000}};
  for (const auto& s : shapes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    const std::vector<int8_t> a = random_i8(size_t(m * k), uint32_t(m * 3 + k));
    const std::vector<int8_t> b = random_i8(size_t(n * k), uint32_t(n * 5 + k));
    const std::vector<int32_t> ref = ref_gemm(a, b, m, n, k);
    std::vector<int32_t> c1(size_t(m * n), -1), c3(size_t(m * n), -1);
    gemm_i8(nullptr, a.data(), b.data(), m, n, k, c1.data());
    gemm_i8(&pool, a.data(), b.data(), m, n, k, c3.data());
    EXPECT_EQ(c1, ref) << "M=" << m << " N=" << n << " K=" << k;
    EXPECT_EQ(c3, ref) << "M=" << m << " N=" << n << " K=" << k;
  }
}

TEST(GemmI8, ExtremeValuesDoNotOverflow) {
  const int64_t k = 4099;
  std::vector<int8_t> a(size_t(k), -128), b(size_t(2 * k), -128);
  for (int64_t t = 0; t < k; ++t) b[size_t(k + t)] = 127;
  std::vector<int32_t> c(2);
  gemm_i8(nullptr, a.data(), b.data(), 1, 2, k, c.data());
  EXPECT_EQ(c[0], int32_t(k * 128 * 128));
  EXPECT_EQ(c[1], int32_t(-k * 128 * 127));
}

TEST(GemmI8, RejectsBadShapes) {
  EXPECT_THROW(gemm_i8(nullptr, nullptr, nullptr, 1, 1, kGemmI8MaxK + 1, nullptr), Error);
  EXPECT_THROW(gemm_i8(nullptr, nullptr, nullptr, -1, 1, 1, nullptr), Error);
  gemm_i8(nullptr, nullptr, nullptr, 0, 5, 7, nullptr);  // empty: no access
}

}  // namespace
}  // namespace ork::ops
