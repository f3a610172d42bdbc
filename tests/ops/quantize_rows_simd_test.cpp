// The vector activation quantizers (ops/quantize_rows_simd.h: AVX2 here, NEON under qemu-aarch64)
// against the portable ones, bit for bit, and both against the rule itself: d = max|x| / 127,
// q = nearbyint(x · (1/d)) (round half to even), the sums of the integers. Rows of every scale,
// exact ties, zero and subnormal blocks, and Q8A rows longer than the 64 blocks whose scales the
// vector version takes before rounding them.
#include "ops/quantize_rows_simd.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace ork::ops {
namespace {

std::vector<float> row_of(int64_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(k));
  for (int64_t b = 0; b < k / 32; ++b) {
    const float scale = std::ldexp(1.0f, int(rng() % 40) - 20);  // 2^-20 … 2^19
    for (int64_t i = 0; i < 32; ++i) x[size_t(b * 32 + i)] = scale * nd(rng);
    switch (b % 7) {
      case 1:  // max |x| = 127: d = 1 and id = 1, ties at every half
        x[size_t(b * 32)] = -127.0f;
        for (int64_t i = 1; i < 32; ++i) x[size_t(b * 32 + i)] = float(int64_t(rng() % 253) - 126) + 0.5f;
        break;
      case 3:  // all zero: d = 0, every q 0
        for (int64_t i = 0; i < 32; ++i) x[size_t(b * 32 + i)] = 0.0f;
        break;
      case 5:  // subnormal values
        for (int64_t i = 0; i < 32; ++i)
          x[size_t(b * 32 + i)] = float(int64_t(rng() % 9) - 4) * std::numeric_limits<float>::denorm_min();
        break;
      default: break;
    }
  }
  return x;
}

// d and the integers of 32·n values by the rule.
void expect_rule(const float* x, int n, float d, const int8_t* q) {
  float amax = 0.0f;
  for (int i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  ASSERT_EQ(d, amax / 127.0f);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int i = 0; i < n; ++i) ASSERT_EQ(q[i], int8_t(std::nearbyint(x[i] * id))) << "element " << i << " x " << x[i];
}

TEST(QuantizeRowsSimd, Q8AEqualsThePortableAndTheRule) {
  if (!detail::quantize_rows_simd_available()) GTEST_SKIP() << "no vector quantizer for this CPU";
  for (int64_t k : {32, 96, 1024, 2048, 2080, 2816, 4128}) {
    const std::vector<float> x = row_of(k, uint32_t(k));
    std::vector<BlockQ8A> simd(size_t(k / 32)), portable(simd.size());
    detail::quantize_row_q8a_simd(x.data(), k, simd.data());
    quantize_row_q8a_portable(x.data(), k, portable.data());
    ASSERT_EQ(std::memcmp(simd.data(), portable.data(), simd.size() * sizeof(BlockQ8A)), 0) << "k " << k;
    for (size_t b = 0; b < simd.size(); ++b) {
      expect_rule(x.data() + b * 32, 32, simd[b].d, simd[b].qs);
      int32_t sum = 0;
      for (int8_t v : simd[b].qs) sum += v;
      ASSERT_EQ(simd[b].sum, sum) << "block " << b;
    }
  }
}

TEST(QuantizeRowsSimd, Q8KEqualsThePortableAndTheRule) {
  if (!detail::quantize_rows_simd_available()) GTEST_SKIP() << "no vector quantizer for this CPU";
  for (int64_t k : {256, 1024, 2816}) {
    const std::vector<float> x = row_of(k, uint32_t(k + 1));
    std::vector<quant::BlockQ8_K> simd(size_t(k / 256)), portable(simd.size());
    detail::quantize_row_q8k_simd(x.data(), k, simd.data());
    quantize_row_q8k_portable(x.data(), k, portable.data());
    ASSERT_EQ(std::memcmp(simd.data(), portable.data(), simd.size() * sizeof(quant::BlockQ8_K)), 0) << "k " << k;
    for (size_t b = 0; b < simd.size(); ++b) {
      expect_rule(x.data() + b * 256, 256, simd[b].d, simd[b].qs);
      for (int j = 0; j < 16; ++j) {
        int32_t sum = 0;
        for (int i = 0; i < 16; ++i) sum += simd[b].qs[16 * j + i];
        ASSERT_EQ(simd[b].bsums[j], sum) << "block " << b << " sum " << j;
      }
    }
  }
}

// The dispatching functions are the vector ones where there are some.
TEST(QuantizeRowsSimd, RowFunctionsUseThem) {
  const std::vector<float> x = row_of(512, 9);
  std::vector<BlockQ8A> a(16), b(16);
  quantize_row_q8a(x.data(), 512, a.data());
  quantize_row_q8a_portable(x.data(), 512, b.data());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(BlockQ8A)), 0);
  std::vector<quant::BlockQ8_K> c(2), d(2);
  quantize_row_q8k(x.data(), 512, c.data());
  quantize_row_q8k_portable(x.data(), 512, d.data());
  EXPECT_EQ(std::memcmp(c.data(), d.data(), c.size() * sizeof(quant::BlockQ8_K)), 0);
}

}  // namespace
}  // namespace ork::ops
