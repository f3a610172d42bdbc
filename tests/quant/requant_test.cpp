// Requantization to the device formats: exact expected values for hand cases (docs/quant.md,
// "Requantization").
#include "quant/requant.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"

namespace ork::quant {
namespace {

TEST(Requant, WeightsPerRowScaleAndRounding) {
  // Row 0: amax 127 → scale 1; 0.5 → 1 and -2.5 → -3 (ties away from zero), 1.49 → 1.
  // Row 1: amax 254 → scale 2; 3 → 1.5 → 2, -1 → -0.5 → -1, 0.9 → 0.45 → 0.
  // Row 2: all zero → scale 0, codes 0.
  const std::vector<float> w = {0.5f, -2.5f, 1.49f, 127.0f,  //
                                3.0f, -1.0f, 0.9f, -254.0f,  //
                                0.0f, -0.0f, 0.0f, 0.0f};
  std::vector<int8_t> q(12, 99);
  std::vector<float> s(3, -1.0f);
  quantize_weights_i8(w.data(), 3, 4, q.data(), s.data());
  EXPECT_EQ(s, (std::vector<float>{1.0f, 2.0f, 0.0f}));
  EXPECT_EQ(q, (std::vector<int8_t>{1, -3, 1, 127, 2, -1, 0, -127, 0, 0, 0, 0}));
}

TEST(Requant, ScaleIsAmaxOver127InF32) {
  const std::vector<float> w = {0.3f, -1.7f, 0.1f};
  std::vector<int8_t> q(3);
  float s = 0;
  quantize_weights_i8(w.data(), 1, 3, q.data(), &s);
  EXPECT_EQ(s, 1.7f / 127.0f);
  EXPECT_EQ(q[1], -127);
  EXPECT_EQ(q[0], int8_t(std::round(0.3f / (1.7f / 127.0f))));  // 22.41... → 22
  EXPECT_EQ(q[0], 22);
  EXPECT_EQ(q[2], 7);  // 7.47 → 7
}

TEST(Requant, UsesExactDivisionNotReciprocal) {
  // amax = 0x1.4f025ep+6, x = amax / 2: x / scale = 63.4999962 rounds to 63, while
  // x * (1 / scale) would give exactly 63.5 and round to 64.
  const float amax = 0x1.4f025ep+6f;
  const std::vector<float> x = {amax, 0x1.4f025ep+5f};
  std::vector<int8_t> q(2);
  float s = 0;
  quantize_rows_i8(x.data(), 1, 2, q.data(), &s);
  EXPECT_EQ(s, amax / 127.0f);
  EXPECT_EQ(q, (std::vector<int8_t>{127, 63}));
}

TEST(Requant, TinyRowWhoseScaleUnderflowsIsZero) {
  const std::vector<float> x = {1e-44f, -1e-45f};  // subnormal amax / 127 underflows to 0
  std::vector<int8_t> q(2, 5);
  float s = -1;
  quantize_rows_i8(x.data(), 1, 2, q.data(), &s);
  EXPECT_EQ(s, 0.0f);
  EXPECT_EQ(q, (std::vector<int8_t>{0, 0}));
}

TEST(Requant, ActivationRowsIndependent) {
  const std::vector<float> x = {-4.0f, 2.0f, 1.0f,   // scale 4/127
                                0.0f, 0.0f, 0.0f,    // scale 0
                                1.27f, -0.635f, 0.0f};  // scale 0.01
  std::vector<int8_t> q(9);
  std::vector<float> s(3);
  quantize_rows_i8(x.data(), 3, 3, q.data(), s.data());
  EXPECT_EQ(s[0], 4.0f / 127.0f);
  EXPECT_EQ(s[1], 0.0f);
  EXPECT_EQ(s[2], 1.27f / 127.0f);
  EXPECT_EQ(q[0], -127);
  EXPECT_EQ(q[1], 64);  // 63.5 (up to f32 rounding of the scale) → 64
  EXPECT_EQ(q[2], 32);  // 31.75 → 32
  EXPECT_EQ(q[3], 0);
  EXPECT_EQ(q[6], 127);
  EXPECT_EQ(q[7], int8_t(std::round(-0.635f / (1.27f / 127.0f))));
  EXPECT_EQ(q[8], 0);
}

TEST(Requant, RejectsNonFinite) {
  std::vector<float> x = {1.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f, 3.0f};
  std::vector<int8_t> q(4);
  std::vector<float> s(2);
  try {
    quantize_rows_i8(x.data(), 2, 2, q.data(), s.data());
    FAIL() << "expected ork::Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("row 0 column 1"));
  }
  x[1] = 0;
  x[3] = -std::numeric_limits<float>::infinity();
  EXPECT_THROW(quantize_weights_i8(x.data(), 2, 2, q.data(), s.data()), Error);
}

TEST(Requant, ToF16RoundsToNearestEven) {
  const std::vector<float> x = {1.0f, -2.0f, 65504.0f, 65520.0f, 1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f,
                                0x1p-24f, 0x1p-26f, 0.0f};
  std::vector<uint16_t> h(x.size());
  to_f16(x.data(), int64_t(x.size()), h.data());
  EXPECT_EQ(h, (std::vector<uint16_t>{0x3c00, 0xc000, 0x7bff, 0x7c00, 0x3c00, 0x3c02, 0x0001,
                                      0x0000, 0x0000}));
}

TEST(Requant, DequantizeI32) {
  const std::vector<int32_t> c = {3, -4, 0, 7, 100, -1};  // 2 x 3
  const std::vector<float> sa = {0.5f, 2.0f};
  const std::vector<float> sb = {0.25f, 3.0f, -1.0f};
  std::vector<float> y(6);
  dequantize_i32(c.data(), 2, 3, sa.data(), sb.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{0.375f, -6.0f, -0.0f, 3.5f, 600.0f, 2.0f}));
}

TEST(Requant, DequantizeI32OperationOrder) {
  // (float(c) * sa) * sb differs from float(c) * (sa * sb) here.
  const int32_t c = 60149;
  const float sa = 0x1.258d68p-3f, sb = 0x1.8ca1e8p-3f;
  float y = 0;
  dequantize_i32(&c, 1, 1, &sa, &sb, &y);
  EXPECT_EQ(y, 0x1.a16dc2p+10f);
  EXPECT_NE(y, float(c) * (sa * sb));
}

TEST(Requant, DecodeRowIsReachableFromRequantHeader) {
  const uint16_t h[2] = {0x3c00, 0xc000};
  float y[2];
  decode_row(Type::F16, h, y, 2);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], -2.0f);
}

}  // namespace
}  // namespace ork::quant
