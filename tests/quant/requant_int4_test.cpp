// quant/requant_int4.h against values computed by hand from its stated formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "quant/requant_int4.h"

namespace ork::quant {
namespace {

TEST(RequantInt4, PerRowScaleIsMaxOverSevenAndCodesRoundHalfAway) {
  // max 3.5 → scale 0.5: 3.5 → 7, −1.25 → −2.5 → −3 (half away), 0.75 → 1.5 → 2, 0 → 0.
  const std::vector<float> w = {3.5f, -1.25f, 0.75f, 0.0f};
  std::vector<int8_t> q(4);
  std::vector<float> s(1);
  quantize_weights_i4(w.data(), 1, 4, 4, q.data(), s.data());
  EXPECT_EQ(s[0], 0.5f);
  EXPECT_EQ(q, (std::vector<int8_t>{7, -3, 2, 0}));
}

TEST(RequantInt4, GroupsHaveTheirOwnScalesAndAZeroGroupGivesZeroCodes) {
  // Two groups of 2 and a short last group of 1: [7, −0.7] [0, 0] [−14].
  const std::vector<float> w = {7.0f, -0.7f, 0.0f, 0.0f, -14.0f};
  std::vector<int8_t> q(5);
  std::vector<float> s(3);
  ASSERT_EQ(int4_groups(5, 2), 3);
  quantize_weights_i4(w.data(), 1, 5, 2, q.data(), s.data());
  EXPECT_EQ(s[0], 1.0f);
  EXPECT_EQ(s[1], 0.0f);
  EXPECT_EQ(s[2], 2.0f);
  EXPECT_EQ(q, (std::vector<int8_t>{7, -1, 0, 0, -7}));
}

TEST(RequantInt4, CodesNeverLeaveMinusSevenToSeven) {
  std::vector<float> w(256);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(float(i) * 0.37f) * float(i % 17);
  std::vector<int8_t> q(256);
  std::vector<float> s(int4_groups(256, 32) * 1);
  quantize_weights_i4(w.data(), 1, 256, 32, q.data(), s.data());
  for (int8_t v : q) EXPECT_TRUE(v >= -7 && v <= 7);
  std::vector<float> sa(2);
  quantize_rows_i4(w.data(), 2, 128, q.data(), sa.data());
  for (int8_t v : q) EXPECT_TRUE(v >= -7 && v <= 7);
}

TEST(RequantInt4, NonFiniteInputsNameTheirPosition) {
  std::vector<float> w = {1.0f, 2.0f, std::numeric_limits<float>::quiet_NaN(), 0.0f};
  std::vector<int8_t> q(4);
  std::vector<float> s(2);
  try {
    quantize_weights_i4(w.data(), 2, 2, 2, q.data(), s.data());
    FAIL() << "accepted NaN";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 1, column 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(quantize_rows_i4(w.data(), 1, 4, q.data(), s.data()), Error);
}

TEST(RequantInt4, GroupDequantizationSumsGroupsInOrder) {
  // 1 row, 1 column, 2 groups: (3 · 0.5) · 0.25 + (−2 · 0.5) · 4 = 0.375 − 4.
  const std::vector<int32_t> c = {3, -2};
  const float sa = 0.5f;
  const std::vector<float> sw = {0.25f, 4.0f};
  float y = 0;
  dequantize_i32_groups(c.data(), 2, 1, 1, &sa, sw.data(), &y);
  EXPECT_EQ(y, (float(3) * 0.5f) * 0.25f + (float(-2) * 0.5f) * 4.0f);
}

}  // namespace
}  // namespace ork::quant
