// f16_to_f32_n / f32_to_f16_n (fp16_rows.h): every half converts to f16_to_f32's value bit for bit;
// f32 values around every rounding boundary, subnormal and overflow edge, and a seeded sample of all
// bit patterns, narrow to f32_to_f16's half bit for bit; every length and offset (the vector body and
// the scalar tail) leaves nothing past the end; a NaN stays a NaN.
#include "core/fp16_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/fp16.h"

namespace ork {
namespace {

TEST(Fp16Rows, EveryHalfConvertsAsF16ToF32) {
  std::vector<uint16_t> h(0x10000);
  for (uint32_t i = 0; i < 0x10000; ++i) h[i] = uint16_t(i);
  std::vector<float> got(h.size(), -1.0f);
  f16_to_f32_n(h.data(), int64_t(h.size()), got.data());
  for (uint32_t i = 0; i < 0x10000; ++i) {
    const float want = f16_to_f32(uint16_t(i));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got[i])) << std::hex << i;
      continue;
    }
    EXPECT_EQ(f32_to_bits(got[i]), f32_to_bits(want)) << std::hex << i;  // ±0 and subnormals exactly
  }
}

TEST(Fp16Rows, TailsAndOffsetsAndNothingPastTheEnd) {
  std::vector<uint16_t> h(40);
  for (size_t i = 0; i < h.size(); ++i) h[i] = uint16_t(0x3c00 + 37 * i);  // 1.0 and up
  for (int64_t off = 0; off < 3; ++off) {
    for (int64_t n = 0; n <= 33; ++n) {
      std::vector<float> got(size_t(n) + 1, -7.0f);
      f16_to_f32_n(h.data() + off, n, got.data());
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(got[size_t(i)], f16_to_f32(h[size_t(off + i)])) << n << " " << i;
      EXPECT_EQ(got[size_t(n)], -7.0f) << "wrote past " << n;
    }
  }
}

TEST(Fp16Rows, StridedRowsConvertAsEachRowAlone) {
  std::vector<uint16_t> h(7 * 50);
  for (size_t i = 0; i < h.size(); ++i) h[i] = uint16_t(0x3000 + (113 * i) % 0x4000);  // finite halves
  for (int64_t n : {0, 1, 7, 8, 9, 16, 33})
    for (int64_t rows : {0, 1, 3, 7}) {
      std::vector<float> got(size_t(rows * n) + 1, -7.0f), want(static_cast<size_t>(n));
      f16_to_f32_rows(h.data() + 3, rows, n, 50, got.data());
      for (int64_t r = 0; r < rows; ++r) {
        f16_to_f32_n(h.data() + 3 + r * 50, n, want.data());
        for (int64_t i = 0; i < n; ++i) EXPECT_EQ(got[size_t(r * n + i)], want[size_t(i)]) << rows << " " << n;
      }
      EXPECT_EQ(got[size_t(rows * n)], -7.0f) << "wrote past " << rows << " × " << n;
    }
}

// f32 bit patterns where rounding to f16 is decided: for every f16 value h (both signs), the f32
// values exactly halfway to its neighbours and one ulp either side of them, h itself, and the
// ranges past the largest half (65504 .. 65520 .. inf) and below the smallest subnormal.
std::vector<float> narrowing_edges() {
  std::vector<float> v;
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const float a = f16_to_f32(uint16_t(h));
    const float b = h + 1 < 0x7c00 ? f16_to_f32(uint16_t(h + 1)) : 65536.0f;  // 65520: the midpoint
    const float mid = a + (b - a) / 2;  // exact in f32: halves are 11-bit significands
    for (float f : {a, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      v.push_back(f);
      v.push_back(-f);
    }
  }
  for (float f : {65519.0f, 65519.996f, 65520.0f, 65536.0f, 1e10f, 3.4e38f, INFINITY, 2.9e-8f, 2.98e-8f,
                  2.9802322e-8f, 2.9802326e-8f, 1e-30f, 1e-45f, 0.0f}) {
    v.push_back(f);
    v.push_back(-f);
  }
  return v;
}

void expect_narrowed_as_f32_to_f16(const std::vector<float>& in) {
  std::vector<uint16_t> got(in.size(), 0xdead);
  f32_to_f16_n(in.data(), int64_t(in.size()), got.data());
  for (size_t i = 0; i < in.size(); ++i) {
    if (std::isnan(in[i])) {
      EXPECT_TRUE(std::isnan(f16_to_f32(got[i]))) << std::hex << f32_to_bits(in[i]);
      continue;
    }
    ASSERT_EQ(got[i], f32_to_f16(in[i])) << std::hex << f32_to_bits(in[i]) << " = " << in[i];
  }
}

TEST(Fp16Rows, NarrowingRoundsAsF32ToF16AtEveryEdge) { expect_narrowed_as_f32_to_f16(narrowing_edges()); }

TEST(Fp16Rows, NarrowingMatchesF32ToF16OnRandomBitPatterns) {
  std::mt19937 rng(20261206);
  std::vector<float> in(1 << 20);
  for (float& f : in) {
    const uint32_t bits = rng();
    std::memcpy(&f, &bits, sizeof f);
  }
  expect_narrowed_as_f32_to_f16(in);  // NaNs among them stay NaN
}

TEST(Fp16Rows, NarrowingTailsAndOffsetsAndNothingPastTheEnd) {
  std::vector<float> f(40);
  for (size_t i = 0; i < f.size(); ++i) f[i] = 1.0f + 0.3337f * float(i);
  for (int64_t off = 0; off < 3; ++off) {
    for (int64_t n = 0; n <= 33; ++n) {
      std::vector<uint16_t> got(size_t(n) + 1, 0xbeef);
      f32_to_f16_n(f.data() + off, n, got.data());
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(got[size_t(i)], f32_to_f16(f[size_t(off + i)])) << n << " " << i;
      EXPECT_EQ(got[size_t(n)], 0xbeef) << "wrote past " << n;
    }
  }
}

}  // namespace
}  // namespace ork
