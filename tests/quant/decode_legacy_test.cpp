// Decoding of the plain and legacy formats against values computed here from the format
// descriptions (docs/quant.md), on blocks built byte by byte.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "block_bytes.h"
#include "core/fp16.h"
#include "quant/decode.h"
#include "quant/types.h"

namespace ork::quant {
namespace {

using testing::Bytes;
using testing::get_u16;
using testing::put_u16;
using testing::random_bytes;
using testing::random_f16;

std::vector<float> decode(Type type, const Bytes& bytes, int64_t n) {
  std::vector<float> out(size_t(n), -12345.0f);
  decode_row(type, bytes.data(), out.data(), n);
  return out;
}

// The 4-bit code of element j of a 32-element block whose nibbles start at byte `qs`:
// element j < 16 is the low nibble of byte j, element j >= 16 the high nibble of byte j - 16.
int nibble(const Bytes& b, size_t qs, int j) {
  return j < 16 ? b[qs + j] & 0x0f : b[qs + j - 16] >> 4;
}

// Bit j of the 4 little-endian bytes at `qh`.
int bit(const Bytes& b, size_t qh, int j) { return (b[qh + j / 8] >> (j % 8)) & 1; }

TEST(DecodeLegacy, F32F16Bf16) {
  Bytes f32(8);
  testing::put_f32(f32, 0, 1.5f);
  testing::put_f32(f32, 4, -0.125f);
  EXPECT_EQ(decode(Type::F32, f32, 2), (std::vector<float>{1.5f, -0.125f}));

  Bytes f16(6);
  put_u16(f16, 0, 0x3c00);  // 1
  put_u16(f16, 2, 0xc100);  // -2.5
  put_u16(f16, 4, 0x0001);  // 2^-24
  EXPECT_EQ(decode(Type::F16, f16, 3), (std::vector<float>{1.0f, -2.5f, 0x1p-24f}));

  Bytes bf16(4);
  put_u16(bf16, 0, 0x3f80);  // 1
  put_u16(bf16, 2, 0xc0a0);  // -5
  EXPECT_EQ(decode(Type::BF16, bf16, 2), (std::vector<float>{1.0f, -5.0f}));
}

TEST(DecodeLegacy, Q4_0HandBuilt) {
  Bytes b(18, 0);
  put_u16(b, 0, 0x3800);  // d = 0.5
  for (int j = 0; j < 16; ++j) b[2 + j] = uint8_t(j | (15 - j) << 4);
  const auto y = decode(Type::Q4_0, b, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.5f * float(j - 8)) << j;
    EXPECT_EQ(y[j + 16], 0.5f * float(7 - j)) << j;
  }
  EXPECT_EQ(y[0], -4.0f);
  EXPECT_EQ(y[16], 3.5f);
}

TEST(DecodeLegacy, Q4_0Random) {
  std::mt19937 rng(40);
  const int nb = 3;
  Bytes b = random_bytes(rng, 18 * nb);
  for (int i = 0; i < nb; ++i) put_u16(b, 18 * i, random_f16(rng, true));
  const auto y = decode(Type::Q4_0, b, 32 * nb);
  for (int i = 0; i < nb; ++i) {
    const float d = f16_to_f32(get_u16(b, 18 * i));
    for (int j = 0; j < 32; ++j) EXPECT_EQ(y[32 * i + j], float(nibble(b, 18 * i + 2, j) - 8) * d);
  }
}

TEST(DecodeLegacy, Q4_1) {
  std::mt19937 rng(41);
  const int nb = 3;
  Bytes b = random_bytes(rng, 20 * nb);
  for (int i = 0; i < nb; ++i) {
    put_u16(b, 20 * i, random_f16(rng, false));
    put_u16(b, 20 * i + 2, random_f16(rng, true));
  }
  put_u16(b, 0, 0x3400);  // block 0: d = 0.25, m = -1
  put_u16(b, 2, 0xbc00);
  b[4] = 0xf0;            // element 0: q 0 → -1; element 16: q 15 → 2.75
  const auto y = decode(Type::Q4_1, b, 32 * nb);
  EXPECT_EQ(y[0], -1.0f);
  EXPECT_EQ(y[16], 2.75f);
  for (int i = 0; i < nb; ++i) {
    const float d = f16_to_f32(get_u16(b, 20 * i));
    const float m = f16_to_f32(get_u16(b, 20 * i + 2));
    for (int j = 0; j < 32; ++j) {
      EXPECT_EQ(y[32 * i + j], float(nibble(b, 20 * i + 4, j)) * d + m) << i << " " << j;
    }
  }
}

TEST(DecodeLegacy, Q5_0) {
  std::mt19937 rng(50);
  const int nb = 3;
  Bytes b = random_bytes(rng, 22 * nb);
  for (int i = 0; i < nb; ++i) put_u16(b, 22 * i, random_f16(rng, true));
  // Block 0 by hand: d = 2; element 0: low 0xf, 5th bit 1 → q 31 → 30; element 31: q 0 → -32;
  // element 16: low 0, 5th bit 1 → q 16 → 0.
  put_u16(b, 0, 0x4000);
  b[2] = 0x01;  // qh bit 0 = element 0
  b[3] = 0x00;
  b[4] = 0x01;  // qh bit 16 = element 16
  b[5] = 0x00;  // qh bit 31 = element 31 clear
  b[6] = 0x0f;   // qs[0]: element 0 low nibble 15, element 16 high nibble 0
  b[6 + 15] = 0x00;  // qs[15]: element 15 low 0, element 31 high 0
  const auto y = decode(Type::Q5_0, b, 32 * nb);
  EXPECT_EQ(y[0], 30.0f);
  EXPECT_EQ(y[16], 0.0f);
  EXPECT_EQ(y[31], -32.0f);
  EXPECT_EQ(y[15], -32.0f);
  for (int i = 0; i < nb; ++i) {
    const float d = f16_to_f32(get_u16(b, 22 * i));
    for (int j = 0; j < 32; ++j) {
      const int q = nibble(b, 22 * i + 6, j) | bit(b, 22 * i + 2, j) << 4;
      EXPECT_EQ(y[32 * i + j], float(q - 16) * d) << i << " " << j;
    }
  }
}

TEST(DecodeLegacy, Q5_1) {
  std::mt19937 rng(51);
  const int nb = 3;
  Bytes b = random_bytes(rng, 24 * nb);
  for (int i = 0; i < nb; ++i) {
    put_u16(b, 24 * i, random_f16(rng, false));
    put_u16(b, 24 * i + 2, random_f16(rng, true));
  }
  // Block 0 by hand: d = 0.5, m = 1; element 17: low nibble 3 (high nibble of qs[1]), 5th bit
  // (bit 17) set → q 19 → 10.5.
  put_u16(b, 0, 0x3800);
  put_u16(b, 2, 0x3c00);
  b[4 + 2] |= 0x02;
  b[8 + 1] = uint8_t((b[8 + 1] & 0x0f) | 0x30);
  const auto y = decode(Type::Q5_1, b, 32 * nb);
  EXPECT_EQ(y[17], 10.5f);
  for (int i = 0; i < nb; ++i) {
    const float d = f16_to_f32(get_u16(b, 24 * i));
    const float m = f16_to_f32(get_u16(b, 24 * i + 2));
    for (int j = 0; j < 32; ++j) {
      const int q = nibble(b, 24 * i + 8, j) | bit(b, 24 * i + 4, j) << 4;
      EXPECT_EQ(y[32 * i + j], float(q) * d + m) << i << " " << j;
    }
  }
}

TEST(DecodeLegacy, Q8_0AndQ8_1) {
  std::mt19937 rng(80);
  const int nb = 3;
  Bytes b0 = random_bytes(rng, 34 * nb);
  Bytes b1 = random_bytes(rng, 36 * nb);
  for (int i = 0; i < nb; ++i) {
    put_u16(b0, 34 * i, random_f16(rng, true));
    put_u16(b1, 36 * i, random_f16(rng, true));
    put_u16(b1, 36 * i + 2, random_f16(rng, true));  // s is not used to decode
  }
  put_u16(b0, 0, 0x3800);  // d = 0.5
  b0[2] = 0x80;            // -128 → -64
  b0[3] = 0x7f;            // 127 → 63.5
  const auto y0 = decode(Type::Q8_0, b0, 32 * nb);
  const auto y1 = decode(Type::Q8_1, b1, 32 * nb);
  EXPECT_EQ(y0[0], -64.0f);
  EXPECT_EQ(y0[1], 63.5f);
  for (int i = 0; i < nb; ++i) {
    const float d0 = f16_to_f32(get_u16(b0, 34 * i));
    const float d1 = f16_to_f32(get_u16(b1, 36 * i));
    for (int j = 0; j < 32; ++j) {
      EXPECT_EQ(y0[32 * i + j], float(int8_t(b0[34 * i + 2 + j])) * d0);
      EXPECT_EQ(y1[32 * i + j], float(int8_t(b1[36 * i + 4 + j])) * d1);
    }
  }
}

TEST(DecodeLegacy, UnalignedSource) {
  std::mt19937 rng(7);
  Bytes b = random_bytes(rng, 34 * 2 + 1);
  put_u16(b, 1, 0x3c00);
  put_u16(b, 35, 0x4000);
  std::vector<float> y(64);
  decode_row(Type::Q8_0, b.data() + 1, y.data(), 64);  // odd address
  EXPECT_EQ(y[0], float(int8_t(b[3])));
  EXPECT_EQ(y[32], 2.0f * float(int8_t(b[37])));
}

}  // namespace
}  // namespace ork::quant
