#include "core/fp16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ork {
namespace {

// Independent reference: the nearest fp16 value found by exhaustive search over all finite fp16s.
uint16_t nearest_f16_reference(float f) {
  double best_err = INFINITY;
  uint16_t best = 0;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if (((h >> 10) & 0x1f) == 0x1f) continue;  // skip inf/NaN
    const double v = double(f16_to_f32(uint16_t(h)));
    const double err = std::fabs(v - double(f));
    if (err < best_err || (err == best_err && (h & 1) == 0 && std::signbit(v) == std::signbit(f))) {
      best_err = err;
      best = uint16_t(h);
    }
  }
  return best;
}

TEST(Fp16, KnownValues) {
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0xc000), -2.0f);
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(f16_to_f32(0x0400), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_TRUE(std::isinf(f16_to_f32(0x7c00)));
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7e00)));
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(1e6f), 0x7c00);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Fp16, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if (((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff) != 0) continue;  // NaN payloads may change
    EXPECT_EQ(f32_to_f16(f16_to_f32(uint16_t(h))), h) << std::hex << h;
  }
}

TEST(Fp16, RoundsToNearestLikeExhaustiveSearch) {
  const float samples[] = {1.0f + 1.0f / 2048,  1.0f + 3.0f / 2048, 0.1f, -3.14159f, 6.1e-5f,
                           5.96e-8f,            2.98e-8f,           2.99e-8f, 1e-6f, 12345.678f,
                           65519.0f,            -0.000123f};
  for (float f : samples) EXPECT_EQ(f32_to_f16(f), nearest_f16_reference(f)) << f;
}

TEST(Bf16, RoundTripAndRounding) {
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0x3f808000u)), 0x3f80);  // tie → even
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0x3f818000u)), 0x3f82);  // tie → even (up)
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0x3f808001u)), 0x3f81);
}

}  // namespace
}  // namespace ork
