// Decoding of IQ4_NL and IQ4_XS against values computed here from the format descriptions: the grid
// is written out below as llama.cpp defines it (kvalues_iq4nl in ggml/src/ggml-common.h), the block
// bytes are packed by the test from chosen indices and scales (the decoder's opposite direction).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "block_bytes.h"
#include "core/error.h"
#include "core/fp16.h"
#include "quant/decode.h"
#include "quant/quantize.h"
#include "quant/types.h"

namespace ork::quant {
namespace {

using testing::Bytes;
using testing::put_u16;

// ggml-common.h: GGML_TABLE_BEGIN(int8_t, kvalues_iq4nl, 16) ... GGML_TABLE_END().
const int kGrid[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

std::vector<float> decode(Type type, const Bytes& bytes, int64_t n) {
  std::vector<float> out(size_t(n), -12345.0f);
  decode_row(type, bytes.data(), out.data(), n);
  return out;
}

TEST(DecodeIQ4, NlBlockIsScaleTimesGridValue) {
  std::mt19937 rng(5);
  const int nb = 3;
  Bytes b(size_t(18 * nb));
  int idx[nb][32];
  float d[nb];
  for (int i = 0; i < nb; ++i) {
    const uint16_t h = testing::random_f16(rng, true);
    d[i] = f16_to_f32(h);
    put_u16(b, size_t(18 * i), h);
    for (int e = 0; e < 32; ++e) idx[i][e] = int(rng() % 16);
    for (int l = 0; l < 16; ++l) b[size_t(18 * i + 2 + l)] = uint8_t(idx[i][l] | idx[i][l + 16] << 4);
  }
  const std::vector<float> y = decode(Type::IQ4_NL, b, 32 * nb);
  for (int i = 0; i < nb; ++i)
    for (int e = 0; e < 32; ++e) EXPECT_EQ(y[size_t(32 * i + e)], d[i] * float(kGrid[idx[i][e]])) << i << " " << e;
}

TEST(DecodeIQ4, XsSubBlockScalesFromLowNibblesAndHighBitPairs) {
  std::mt19937 rng(6);
  Bytes b(136);
  const uint16_t h = testing::random_f16(rng, true);
  put_u16(b, 0, h);
  int ls[8], idx[256];
  uint16_t scales_h = 0;
  for (int j = 0; j < 8; ++j) {
    ls[j] = j == 0 ? 0 : (j == 1 ? 63 : int(rng() % 64));  // both ends of the 6-bit range
    b[size_t(4 + j / 2)] = uint8_t(b[size_t(4 + j / 2)] | (ls[j] & 15) << (4 * (j % 2)));
    scales_h = uint16_t(scales_h | (ls[j] >> 4) << (2 * j));
  }
  put_u16(b, 2, scales_h);
  for (int e = 0; e < 256; ++e) idx[e] = int(rng() % 16);
  for (int j = 0; j < 8; ++j)
    for (int l = 0; l < 16; ++l) b[size_t(8 + 16 * j + l)] = uint8_t(idx[32 * j + l] | idx[32 * j + l + 16] << 4);
  const std::vector<float> y = decode(Type::IQ4_XS, b, 256);
  const float d = f16_to_f32(h);
  for (int e = 0; e < 256; ++e) {
    const float dl = d * float(ls[e / 32] - 32);
    EXPECT_EQ(y[size_t(e)], dl * float(kGrid[idx[e]])) << "element " << e;
  }
}

// Values on the grid times a representable scale come back exactly.
TEST(DecodeIQ4, GridValuesRoundTripExactly) {
  std::vector<float> x(256);
  for (int e = 0; e < 256; ++e) x[size_t(e)] = 0.25f * float(kGrid[(e * 7) % 16]);
  for (int e = 0; e < 32; ++e) x[size_t(e)] = 0.25f * float(kGrid[e % 2 ? 0 : 15]);  // both extremes
  for (Type t : {Type::IQ4_NL, Type::IQ4_XS}) {
    Bytes b(size_t(row_bytes(t, 256)));
    traits(t).quantize(x.data(), b.data(), 256);
    const std::vector<float> y = decode(t, b, 256);
    if (t == Type::IQ4_NL) {
      EXPECT_EQ(y, x);
    } else {  // IQ4_XS: dl = 31·d with d = 0.25/31 rounded up to fp16: the same indices, dl ≈ 0.25
      for (int e = 0; e < 256; ++e) EXPECT_NEAR(y[size_t(e)], x[size_t(e)], 1e-3 * std::fabs(x[size_t(e)])) << e;
    }
  }
}

TEST(DecodeIQ4, PartialBlocksThrow) {
  Bytes b(136);
  std::vector<float> y(256);
  EXPECT_THROW(decode_row(Type::IQ4_NL, b.data(), y.data(), 31), Error);
  EXPECT_THROW(decode_row(Type::IQ4_XS, b.data(), y.data(), 128), Error);
}

}  // namespace
}  // namespace ork::quant
