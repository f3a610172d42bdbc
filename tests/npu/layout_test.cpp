// Native layouts against their formulas (rknn matmul API / mtx512), round trips, padding.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/error.h"
#include "npu/cbuf_budget.h"
#include "npu/layout.h"

namespace ork::npu {
namespace {

int8_t val8(int64_t r, int64_t c) { return int8_t((r * 31 + c * 7 + 3) % 251 - 125); }
uint16_t val16(int64_t r, int64_t c) { return uint16_t(0x3c00 + (r * 131 + c * 17) % 977); }

TEST(LayoutTest, PaddedSizes) {
  EXPECT_EQ(pad_m(1), 1);
  EXPECT_EQ(pad_m(2), 4);
  EXPECT_EQ(pad_m(7), 8);
  EXPECT_EQ(pad_m(64), 64);
  EXPECT_EQ(pad_k(1), 32);
  EXPECT_EQ(pad_k(33), 64);
  EXPECT_EQ(pad_n(17, Dtype::kI8), 32);
  EXPECT_EQ(pad_n(17, Dtype::kF16), 32);
  EXPECT_EQ(pad_n(16, Dtype::kF16), 16);
  EXPECT_EQ(packed_weight_bytes(17, 33, Dtype::kI8), 32u * 64u);
  EXPECT_EQ(packed_weight_bytes(17, 33, Dtype::kF16), 32u * 64u * 2u);
  EXPECT_THROW(packed_weight_bytes(0, 3, Dtype::kI8), Error);
}

// A: (K/C2, M, C2): element (m, k) at (k / C2)·M·C2 + m·C2 + k % C2.
TEST(LayoutTest, AInt8MatchesFormula) {
  const int64_t m = 7, k = 45, mp = pad_m(m), kp = pad_k(k);
  std::vector<int8_t> a(size_t(m * k));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < k; ++c) a[size_t(r * k + c)] = val8(r, c);
  std::vector<int8_t> packed(size_t(mp * kp), 99);
  pack_a(Dtype::kI8, a.data(), k, m, k, mp, kp, packed.data());
  for (int64_t r = 0; r < mp; ++r)
    for (int64_t c = 0; c < kp; ++c) {
      const int64_t idx = (c / 16) * mp * 16 + r * 16 + c % 16;
      EXPECT_EQ(a_index(r, c, mp, Dtype::kI8), idx);
      const int8_t want = (r < m && c < k) ? val8(r, c) : 0;
      ASSERT_EQ(packed[size_t(idx)], want) << r << "," << c;
    }
  std::vector<int8_t> back(size_t(m * k));
  unpack_a(Dtype::kI8, packed.data(), mp, kp, m, k, back.data(), k);
  EXPECT_EQ(back, a);
}

TEST(LayoutTest, AFp16MatchesFormula) {
  const int64_t m = 5, k = 40, mp = pad_m(m), kp = pad_k(k);
  std::vector<uint16_t> a(size_t(m * k));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < k; ++c) a[size_t(r * k + c)] = val16(r, c);
  std::vector<uint16_t> packed(size_t(mp * kp), 1);
  pack_a(Dtype::kF16, a.data(), k, m, k, mp, kp, packed.data());
  for (int64_t r = 0; r < mp; ++r)
    for (int64_t c = 0; c < kp; ++c) {
      const int64_t idx = (c / 8) * mp * 8 + r * 8 + c % 8;
      const uint16_t want = (r < m && c < k) ? val16(r, c) : 0;
      ASSERT_EQ(packed[size_t(idx)], want) << r << "," << c;
    }
  std::vector<uint16_t> back(size_t(m * k));
  unpack_a(Dtype::kF16, packed.data(), mp, kp, m, k, back.data(), k);
  EXPECT_EQ(back, a);
}

// B int8: (N/32, K/32, 32, 32) — mtx512 weight_int8(C, k, c).
TEST(LayoutTest, BInt8MatchesFormula) {
  const int64_t n = 45, k = 70, np = pad_n(n, Dtype::kI8), kp = pad_k(k);
  std::vector<int8_t> b(size_t(n * k));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) b[size_t(r * k + c)] = val8(r, c);
  std::vector<int8_t> packed(packed_weight_bytes(n, k, Dtype::kI8), 77);
  pack_b(Dtype::kI8, b.data(), n, k, packed.data());
  for (int64_t r = 0; r < np; ++r)
    for (int64_t c = 0; c < kp; ++c) {
      const int64_t idx = (r / 32) * 32 * kp + (c / 32) * 32 * 32 + (r % 32) * 32 + c % 32;
      EXPECT_EQ(b_index(r, c, np, kp, Dtype::kI8), idx);
      const int8_t want = (r < n && c < k) ? val8(r, c) : 0;
      ASSERT_EQ(packed[size_t(idx)], want) << r << "," << c;
    }
  std::vector<int8_t> back(size_t(n * k));
  unpack_b(Dtype::kI8, packed.data(), n, k, back.data());
  EXPECT_EQ(back, b);
}

// B fp16: (N/16, K/32, 16, 32) — mtx512 weight_fp16(C, k, c).
TEST(LayoutTest, BFp16MatchesFormula) {
  const int64_t n = 20, k = 64, np = pad_n(n, Dtype::kF16), kp = pad_k(k);
  std::vector<uint16_t> b(size_t(n * k));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) b[size_t(r * k + c)] = val16(r, c);
  std::vector<uint16_t> packed(packed_weight_bytes(n, k, Dtype::kF16) / 2, 5);
  pack_b(Dtype::kF16, b.data(), n, k, packed.data());
  for (int64_t r = 0; r < np; ++r)
    for (int64_t c = 0; c < kp; ++c) {
      const int64_t idx = (r / 16) * 16 * kp + (c / 32) * 16 * 32 + (r % 16) * 32 + c % 32;
      const uint16_t want = (r < n && c < k) ? val16(r, c) : 0;
      ASSERT_EQ(packed[size_t(idx)], want) << r << "," << c;
    }
  std::vector<uint16_t> back(size_t(n * k));
  unpack_b(Dtype::kF16, packed.data(), n, k, back.data());
  EXPECT_EQ(back, b);
}

// K wider than one segment: segments of k_segment_width(d) columns (2048 int8, 1024 fp16), each its
// own native block, one after another; the last one narrower.
template <typename T>
void check_segments(Dtype d, T (*val)(int64_t, int64_t)) {
  const int64_t w = k_segment_width(d), g = b_n_group(d);
  const int64_t n = 33, k = 2 * w + 100, np = pad_n(n, d), kp = pad_k(k);
  EXPECT_EQ(k_segments(kp, d), 3);
  EXPECT_EQ(b_segment_width(2, kp, d), kp - 2 * w);
  std::vector<T> b(size_t(n * k));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) b[size_t(r * k + c)] = val(r, c);
  std::vector<T> packed(packed_weight_bytes(n, k, d) / sizeof(T));
  pack_b(d, b.data(), n, k, packed.data());
  for (int64_t r : {int64_t(0), int64_t(5), g - 1, g}) {
    for (int64_t c : {int64_t(0), int64_t(31), w - 1, w, w + 3, 2 * w + 1, k - 1}) {
      const int64_t s = c / w, ks = s < 2 ? w : kp - 2 * w, cc = c % w;
      const int64_t idx = s * np * w + (r / g) * g * ks + (cc / 32) * g * 32 + (r % g) * 32 + cc % 32;
      ASSERT_EQ(packed[size_t(idx)], val(r, c)) << r << "," << c;
      ASSERT_EQ(b_index(r, c, np, kp, d), idx);
    }
  }
  std::vector<T> back(size_t(n * k));
  unpack_b(d, packed.data(), n, k, back.data());
  EXPECT_EQ(back, b);
}

TEST(LayoutTest, BSegmentsInt8) { check_segments<int8_t>(Dtype::kI8, val8); }
TEST(LayoutTest, BSegmentsFp16) { check_segments<uint16_t>(Dtype::kF16, val16); }

// The segment width is chosen so that a prefill tile of kPrefillTileRows rows fits the CBUF beside a
// weight atom (cbuf_budget.h), and is at most the widest K of one task.
TEST(LayoutTest, SegmentWidthLetsOnePrefillTileTakeEveryRow) {
  for (Dtype d : {Dtype::kI8, Dtype::kF16}) {
    EXPECT_GE(max_m_tile(d, k_segment_width(d)), kPrefillTileRows) << dtype_name(d);
    EXPECT_LE(k_segment_width(d), kKSegmentMax);
    EXPECT_EQ(k_segment_width(d) % kKAlign, 0);
  }
}

// C: (N/4, M, 4).
TEST(LayoutTest, COutputFormulaAndAccumulate) {
  const int64_t m = 3, n = 10, mp = pad_m(m), np = 12;
  std::vector<int32_t> c(size_t(m * n));
  for (int64_t i = 0; i < m * n; ++i) c[size_t(i)] = int32_t(i * 3 - 7);
  std::vector<int32_t> packed(size_t(mp * np));
  pack_c_i32(c.data(), m, n, mp, np, packed.data());
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < n; ++j)
      ASSERT_EQ(packed[size_t((j / 4) * mp * 4 + r * 4 + j % 4)], c[size_t(r * n + j)]);
  std::vector<int32_t> back(size_t(m * n), 0);
  unpack_c_i32(packed.data(), mp, m, n, back.data(), n, false);
  EXPECT_EQ(back, c);
  unpack_c_i32(packed.data(), mp, m, n, back.data(), n, true);
  for (int64_t i = 0; i < m * n; ++i) EXPECT_EQ(back[size_t(i)], 2 * c[size_t(i)]);
}

}  // namespace
}  // namespace ork::npu
