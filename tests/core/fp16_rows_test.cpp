// f16_to_f32_n (fp16_rows.h): every half converts to f16_to_f32's value bit for bit, at every length
// and offset (the vector body and the scalar tail), and a NaN stays a NaN.
#include "core/fp16_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
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

}  // namespace
}  // namespace ork
