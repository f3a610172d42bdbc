// Decoding of the K formats against values computed here from the format descriptions
// (docs/quant.md). Scales are chosen as numbers and packed into the block bytes by the test (the
// opposite direction of the decoder's unpacking), so the expected values use the chosen numbers.
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
using testing::put_u16;
using testing::random_bytes;
using testing::random_f16;

std::vector<float> decode(Type type, const Bytes& bytes, int64_t n) {
  std::vector<float> out(size_t(n), -12345.0f);
  decode_row(type, bytes.data(), out.data(), n);
  return out;
}

// Element e of a 256-element super-block as (h, g, l): e = 128*h + 32*g + l.
struct Hgl {
  int h, g, l;
};
Hgl hgl(int e) { return {e / 128, (e % 128) / 32, e % 32}; }

// Q4_K / Q5_K: packs 8 six-bit scales and mins into 12 bytes at `off`, as described:
// bytes 0-3: bits 0-5 scale[0..3], bits 6-7 the top 2 bits of scale[4..7];
// bytes 4-7: bits 0-5 min[0..3],   bits 6-7 the top 2 bits of min[4..7];
// bytes 8-11: low nibble the low 4 bits of scale[4..7], high nibble the low 4 bits of min[4..7].
void pack_k4_scales(Bytes& b, size_t off, const int (&sc)[8], const int (&m)[8]) {
  for (int k = 0; k < 4; ++k) {
    b[off + k] = uint8_t(sc[k] | (sc[k + 4] >> 4) << 6);
    b[off + 4 + k] = uint8_t(m[k] | (m[k + 4] >> 4) << 6);
    b[off + 8 + k] = uint8_t((sc[k + 4] & 15) | (m[k + 4] & 15) << 4);
  }
}

// Q3_K: packs 16 six-bit values into 12 bytes at `off`, as described: byte k (k < 8) holds the low
// 4 bits of v[k] in its low nibble and of v[k + 8] in its high nibble; byte 8 + k (k < 4) holds
// the top 2 bits of v[k], v[k + 4], v[k + 8], v[k + 12] at bits 0-1, 2-3, 4-5, 6-7.
void pack_q3_scales(Bytes& b, size_t off, const int (&v)[16]) {
  for (int k = 0; k < 8; ++k) b[off + k] = uint8_t((v[k] & 15) | (v[k + 8] & 15) << 4);
  for (int k = 0; k < 4; ++k) {
    b[off + 8 + k] = uint8_t((v[k] >> 4) | (v[k + 4] >> 4) << 2 | (v[k + 8] >> 4) << 4 |
                             (v[k + 12] >> 4) << 6);
  }
}

// ---- Q2_K: scales[16] @0, qs[64] @16, d @80, dmin @82.
std::vector<float> expected_q2_K(const Bytes& b, size_t off) {
  const float d = f16_to_f32(testing::get_u16(b, off + 80));
  const float dmin = f16_to_f32(testing::get_u16(b, off + 82));
  std::vector<float> y(256);
  for (int e = 0; e < 256; ++e) {
    const auto [h, g, l] = hgl(e);
    const int q = (b[off + 16 + 32 * h + l] >> (2 * g)) & 3;
    const int sc = b[off + e / 16] & 15, m = b[off + e / 16] >> 4;
    y[e] = d * float(sc) * float(q) - dmin * float(m);
  }
  return y;
}

TEST(DecodeK, Q2_KHandBuilt) {
  Bytes b(84, 0);
  for (int j = 0; j < 16; ++j) b[j] = uint8_t(j | (15 - j) << 4);  // sc = j, m = 15 - j
  put_u16(b, 80, 0x3800);  // d = 0.5
  put_u16(b, 82, 0x3400);  // dmin = 0.25
  // Element 37 = (h 0, g 1, l 5): q = 3 in bits 2-3 of qs[5]; sub-block 2: sc 2, m 13.
  b[16 + 5] = 0x0c;
  // Element 200 = (h 1, g 2, l 8): q = 2 in bits 4-5 of qs[40]; sub-block 12: sc 12, m 3.
  b[16 + 40] = 0x20;
  const auto y = decode(Type::Q2_K, b, 256);
  EXPECT_EQ(y[37], 0.5f * 2 * 3 - 0.25f * 13);   // -0.25
  EXPECT_EQ(y[200], 0.5f * 12 * 2 - 0.25f * 3);  // 11.25
  EXPECT_EQ(y[0], -0.25f * 15);                  // q 0, m 15
  EXPECT_EQ(y, expected_q2_K(b, 0));
}

TEST(DecodeK, Q2_KRandom) {
  std::mt19937 rng(210);
  Bytes b = random_bytes(rng, 84 * 2);
  for (int i = 0; i < 2; ++i) {
    put_u16(b, 84 * i + 80, random_f16(rng, false));
    put_u16(b, 84 * i + 82, random_f16(rng, false));
  }
  const auto y = decode(Type::Q2_K, b, 512);
  for (int i = 0; i < 2; ++i) {
    const auto ex = expected_q2_K(b, 84 * i);
    for (int e = 0; e < 256; ++e) EXPECT_EQ(y[256 * i + e], ex[e]) << i << " " << e;
  }
}

// ---- Q3_K: hmask[32] @0, qs[64] @32, scales[12] @96, d @108.
std::vector<float> expected_q3_K(const Bytes& b, size_t off, const int (&v)[16]) {
  const float d = f16_to_f32(testing::get_u16(b, off + 108));
  std::vector<float> y(256);
  for (int e = 0; e < 256; ++e) {
    const auto [h, g, l] = hgl(e);
    const int low = (b[off + 32 + 32 * h + l] >> (2 * g)) & 3;
    const int high = (b[off + l] >> (4 * h + g)) & 1;
    const int q = low - (high ? 0 : 4);
    y[e] = d * float(v[e / 16] - 32) * float(q);
  }
  return y;
}

TEST(DecodeK, Q3_KAllSixteenScalesDistinct) {
  int v[16];
  for (int j = 0; j < 16; ++j) v[j] = 4 * j + 1 + (j % 3);  // 1, 6, 11, ... all distinct, 6-bit
  Bytes b(110, 0);
  pack_q3_scales(b, 96, v);
  put_u16(b, 108, 0x3c00);  // d = 1
  // Every element gets q = 1 (low 1, high bit set) except element 16*j + 1 which gets q = -4
  // (low 0, high bit clear), so each sub-block's scale shows up twice with different values.
  for (int e = 0; e < 256; ++e) {
    const auto [h, g, l] = hgl(e);
    if (e % 16 == 1) continue;
    b[32 + 32 * h + l] |= uint8_t(1 << (2 * g));
    b[l] |= uint8_t(1 << (4 * h + g));
  }
  const auto y = decode(Type::Q3_K, b, 256);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[16 * j], float(v[j] - 32)) << j;
    EXPECT_EQ(y[16 * j + 1], -4.0f * float(v[j] - 32)) << j;
    EXPECT_EQ(y[16 * j + 15], float(v[j] - 32)) << j;
  }
  EXPECT_EQ(y, expected_q3_K(b, 0, v));
}

TEST(DecodeK, Q3_KRandom) {
  std::mt19937 rng(310);
  Bytes b = random_bytes(rng, 110 * 2);
  int v[2][16];
  for (int i = 0; i < 2; ++i) {
    for (int& x : v[i]) x = int(rng() % 64);
    pack_q3_scales(b, 110 * i + 96, v[i]);
    put_u16(b, 110 * i + 108, random_f16(rng, true));
  }
  const auto y = decode(Type::Q3_K, b, 512);
  for (int i = 0; i < 2; ++i) {
    const auto ex = expected_q3_K(b, 110 * i, v[i]);
    for (int e = 0; e < 256; ++e) EXPECT_EQ(y[256 * i + e], ex[e]) << i << " " << e;
  }
}

// ---- Q4_K: d @0, dmin @2, scales[12] @4, qs[128] @16.
// ---- Q5_K: d @0, dmin @2, scales[12] @4, qh[32] @16, qs[128] @48.
std::vector<float> expected_q45_K(const Bytes& b, size_t off, bool five, const int (&sc)[8],
                                  const int (&m)[8]) {
  const float d = f16_to_f32(testing::get_u16(b, off));
  const float dmin = f16_to_f32(testing::get_u16(b, off + 2));
  const size_t qs = off + (five ? 48 : 16);
  std::vector<float> y(256);
  for (int e = 0; e < 256; ++e) {
    const int p = e / 64, u = (e % 64) / 32, l = e % 32;
    int q = (b[qs + 32 * p + l] >> (4 * u)) & 15;
    if (five) q |= ((b[off + 16 + l] >> (2 * p + u)) & 1) << 4;
    y[e] = d * float(sc[e / 32]) * float(q) - dmin * float(m[e / 32]);
  }
  return y;
}

TEST(DecodeK, Q4_KScalePackingIncludingIndicesFourToSeven) {
  const int sc[8] = {5, 17, 33, 63, 7, 22, 45, 60};  // j >= 4 need the top bits in bytes 0-3
  const int m[8] = {0, 9, 31, 48, 3, 19, 40, 62};
  Bytes b(144, 0);
  put_u16(b, 0, 0x3c00);  // d = 1
  put_u16(b, 2, 0x3800);  // dmin = 0.5
  pack_k4_scales(b, 4, sc, m);
  // q = 1 everywhere except q = 15 for the first element of each sub-block.
  for (int e = 0; e < 256; ++e) {
    const int p = e / 64, u = (e % 64) / 32, l = e % 32;
    b[16 + 32 * p + l] |= uint8_t((l == 0 ? 15 : 1) << (4 * u));
  }
  const auto y = decode(Type::Q4_K, b, 256);
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(y[32 * j], float(sc[j]) * 15 - 0.5f * float(m[j])) << j;
    EXPECT_EQ(y[32 * j + 1], float(sc[j]) - 0.5f * float(m[j])) << j;
  }
  EXPECT_EQ(y, expected_q45_K(b, 0, false, sc, m));
}

TEST(DecodeK, Q5_KScalePackingAndHighBits) {
  const int sc[8] = {63, 1, 16, 32, 48, 63, 31, 47};
  const int m[8] = {1, 63, 32, 16, 63, 48, 47, 31};
  Bytes b(176, 0);
  put_u16(b, 0, 0x3800);  // d = 0.5
  put_u16(b, 2, 0x3400);  // dmin = 0.25
  pack_k4_scales(b, 4, sc, m);
  // Element 32*j + 3 gets q = 16 + j (5th bit set); all others q = 2.
  for (int e = 0; e < 256; ++e) {
    const int p = e / 64, u = (e % 64) / 32, l = e % 32;
    const int q = l == 3 ? 16 + e / 32 : 2;
    b[48 + 32 * p + l] |= uint8_t((q & 15) << (4 * u));
    if (q & 16) b[16 + l] |= uint8_t(1 << (2 * p + u));
  }
  const auto y = decode(Type::Q5_K, b, 256);
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(y[32 * j + 3], 0.5f * float(sc[j]) * float(16 + j) - 0.25f * float(m[j])) << j;
    EXPECT_EQ(y[32 * j + 4], 0.5f * float(sc[j]) * 2 - 0.25f * float(m[j])) << j;
  }
  EXPECT_EQ(y, expected_q45_K(b, 0, true, sc, m));
}

TEST(DecodeK, Q4_KAndQ5_KRandom) {
  std::mt19937 rng(450);
  for (const bool five : {false, true}) {
    SCOPED_TRACE(five ? "q5_K" : "q4_K");
    const size_t bs = five ? 176 : 144;
    Bytes b = random_bytes(rng, bs * 2);
    int sc[2][8], m[2][8];
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 8; ++j) {
        sc[i][j] = int(rng() % 64);
        m[i][j] = int(rng() % 64);
      }
      put_u16(b, bs * i, random_f16(rng, false));
      put_u16(b, bs * i + 2, random_f16(rng, false));
      pack_k4_scales(b, bs * i + 4, sc[i], m[i]);
    }
    const auto y = decode(five ? Type::Q5_K : Type::Q4_K, b, 512);
    for (int i = 0; i < 2; ++i) {
      const auto ex = expected_q45_K(b, bs * i, five, sc[i], m[i]);
      for (int e = 0; e < 256; ++e) EXPECT_EQ(y[256 * i + e], ex[e]) << i << " " << e;
    }
  }
}

// ---- Q6_K: ql[128] @0, qh[64] @128, scales[16] (int8) @192, d @208.
std::vector<float> expected_q6_K(const Bytes& b, size_t off) {
  const float d = f16_to_f32(testing::get_u16(b, off + 208));
  std::vector<float> y(256);
  for (int e = 0; e < 256; ++e) {
    const auto [h, g, l] = hgl(e);
    const int low = (b[off + 64 * h + 32 * (g % 2) + l] >> (4 * (g / 2))) & 15;
    const int high = (b[off + 128 + 32 * h + l] >> (2 * g)) & 3;
    const int q = (low | high << 4) - 32;
    y[e] = d * float(int8_t(b[off + 192 + e / 16])) * float(q);
  }
  return y;
}

TEST(DecodeK, Q6_KHandBuilt) {
  Bytes b(210, 0);
  for (int j = 0; j < 16; ++j) b[192 + j] = uint8_t(int8_t(j % 2 ? -(j + 1) : j + 1));
  put_u16(b, 208, 0x3800);  // d = 0.5
  // Element 100 = (h 0, g 3, l 4): low nibble = high nibble of ql[32 + 4], high bits 6-7 of
  // qh[4]; q = 0b10'0101 = 37 → 5. Sub-block 6: scale 7.
  b[32 + 4] = 0x50;
  b[128 + 4] = 0x80;
  // Element 130 = (h 1, g 0, l 2): low nibble of ql[64 + 2], bits 0-1 of qh[32 + 2]; q = 0 → -32.
  // Sub-block 8: scale 9.
  const auto y = decode(Type::Q6_K, b, 256);
  EXPECT_EQ(y[100], 0.5f * 7 * 5);
  EXPECT_EQ(y[130], 0.5f * 9 * -32);
  EXPECT_EQ(y[16], 0.5f * -2 * -32);  // sub-block 1: scale -2
  EXPECT_EQ(y, expected_q6_K(b, 0));
}

TEST(DecodeK, Q6_KRandom) {
  std::mt19937 rng(610);
  Bytes b = random_bytes(rng, 210 * 2);
  for (int i = 0; i < 2; ++i) put_u16(b, 210 * i + 208, random_f16(rng, true));
  const auto y = decode(Type::Q6_K, b, 512);
  for (int i = 0; i < 2; ++i) {
    const auto ex = expected_q6_K(b, 210 * i);
    for (int e = 0; e < 256; ++e) EXPECT_EQ(y[256 * i + e], ex[e]) << i << " " << e;
  }
}

// ---- Q8_K: f32 d @0, qs[256] @4, bsums[16] @260 (not used to decode).
TEST(DecodeK, Q8_K) {
  std::mt19937 rng(810);
  Bytes b = random_bytes(rng, 292 * 2);
  testing::put_f32(b, 0, 0.25f);
  testing::put_f32(b, 292, -3.0e-3f);
  b[4] = 0x80;  // -128
  b[5] = 0x7f;  // 127
  const auto y = decode(Type::Q8_K, b, 512);
  EXPECT_EQ(y[0], -32.0f);
  EXPECT_EQ(y[1], 31.75f);
  for (int e = 0; e < 256; ++e) {
    EXPECT_EQ(y[e], 0.25f * float(int8_t(b[4 + e])));
    EXPECT_EQ(y[256 + e], -3.0e-3f * float(int8_t(b[292 + 4 + e])));
  }
}

}  // namespace
}  // namespace ork::quant
