// Decoders of the legacy 32-element formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1), with ggml's
// dequantize_row_* arithmetic: an int quant converted to f32, times the f32 scale, plus the offset.
#include "core/fp16.h"
#include "quant/block_io.h"
#include "quant/blocks.h"
#include "quant/decode.h"

namespace ork::quant {
namespace {

constexpr int kHalf = kQK / 2;

// The 5th bits of Q5_0 / Q5_1 as one little-endian word: bit j belongs to element j.
uint32_t high_bits(const uint8_t (&qh)[4]) {
  return uint32_t(qh[0]) | uint32_t(qh[1]) << 8 | uint32_t(qh[2]) << 16 | uint32_t(qh[3]) << 24;
}

}  // namespace

void decode_q4_0(const void* src, float* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q4_0, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK) {
    const auto b = detail::load_block<BlockQ4_0>(src, i);
    const float d = f16_to_f32(b.d);
    for (int j = 0; j < kHalf; ++j) {
      dst[j] = float((b.qs[j] & 0x0f) - 8) * d;
      dst[j + kHalf] = float((b.qs[j] >> 4) - 8) * d;
    }
  }
}

void decode_q4_1(const void* src, float* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q4_1, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK) {
    const auto b = detail::load_block<BlockQ4_1>(src, i);
    const float d = f16_to_f32(b.d);
    const float m = f16_to_f32(b.m);
    for (int j = 0; j < kHalf; ++j) {
      dst[j] = float(b.qs[j] & 0x0f) * d + m;
      dst[j + kHalf] = float(b.qs[j] >> 4) * d + m;
    }
  }
}

void decode_q5_0(const void* src, float* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q5_0, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK) {
    const auto b = detail::load_block<BlockQ5_0>(src, i);
    const float d = f16_to_f32(b.d);
    const uint32_t qh = high_bits(b.qh);
    for (int j = 0; j < kHalf; ++j) {
      const int lo = (b.qs[j] & 0x0f) | int((qh >> j) & 1) << 4;
      const int hi = (b.qs[j] >> 4) | int((qh >> (j + kHalf)) & 1) << 4;
      dst[j] = float(lo - 16) * d;
      dst[j + kHalf] = float(hi - 16) * d;
    }
  }
}

void decode_q5_1(const void* src, float* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q5_1, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK) {
    const auto b = detail::load_block<BlockQ5_1>(src, i);
    const float d = f16_to_f32(b.d);
    const float m = f16_to_f32(b.m);
    const uint32_t qh = high_bits(b.qh);
    for (int j = 0; j < kHalf; ++j) {
      const int lo = (b.qs[j] & 0x0f) | int((qh >> j) & 1) << 4;
      const int hi = (b.qs[j] >> 4) | int((qh >> (j + kHalf)) & 1) << 4;
      dst[j] = float(lo) * d + m;
      dst[j + kHalf] = float(hi) * d + m;
    }
  }
}

void decode_q8_0(const void* src, float* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q8_0, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK) {
    const auto b = detail::load_block<BlockQ8_0>(src, i);
    const float d = f16_to_f32(b.d);
    for (int j = 0; j < kQK; ++j) dst[j] = float(b.qs[j]) * d;
  }
}

void decode_q8_1(const void* src, float* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q8_1, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK) {
    const auto b = detail::load_block<BlockQ8_1>(src, i);
    const float d = f16_to_f32(b.d);
    for (int j = 0; j < kQK; ++j) dst[j] = float(b.qs[j]) * d;
  }
}

}  // namespace ork::quant
