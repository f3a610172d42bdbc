// Reference encoders of the legacy 32-element formats.
//
// Symmetric (Q4_0, Q5_0: levels -L..L-1; Q8_0, Q8_1: -127..127): d = amax / (L - 1/2) (Q8: amax/127)
// rounded up to fp16, q = round(x / d), so |x / d| <= L - 1/2 and no element is clamped by more
// than the half step. With min (Q4_1, Q5_1): m = the block minimum rounded down to fp16,
// d = (max - m) / nmax rounded up to fp16, q = round((x - m) / d) in [0, nmax].
#include <algorithm>
#include <cmath>

#include "core/fp16.h"
#include "quant/block_io.h"
#include "quant/blocks.h"
#include "quant/quantize.h"
#include "quant/rounding.h"
#include "quant/types.h"

namespace ork::quant {
namespace {

using detail::clamp_int;
using detail::round_away;

constexpr int kHalf = kQK / 2;

float max_abs(const float* x, int n) {
  float amax = 0.0f;
  for (int j = 0; j < n; ++j) amax = std::max(amax, std::fabs(x[j]));
  return amax;
}

// Symmetric scale for a block: fp16 bits of d >= amax / divisor (0 when amax is 0).
uint16_t symmetric_scale(float amax, float divisor, const char* format, int64_t block) {
  if (amax == 0.0f) return 0;
  const uint16_t d = detail::f16_ceil(amax / divisor);
  detail::check_f16_scale(d, format, "scale", block);
  return d;
}

// q[j] = round(x[j] / d) clamped to [lo, hi] (0 when d is 0).
void quantize_symmetric(const float* x, float d, int lo, int hi, int* q) {
  for (int j = 0; j < kQK; ++j) q[j] = d == 0.0f ? 0 : clamp_int(round_away(x[j] / d), lo, hi);
}

// Offset and scale of a _1 block: m <= min(x) and d >= (max(x) - m) / nmax, both fp16 bits.
void min_scale(const float* x, int nmax, const char* format, int64_t block, uint16_t& d_bits,
               uint16_t& m_bits) {
  float mn = x[0], mx = x[0];
  for (int j = 1; j < kQK; ++j) {
    mn = std::min(mn, x[j]);
    mx = std::max(mx, x[j]);
  }
  m_bits = detail::f16_floor(mn);
  detail::check_f16_scale(m_bits, format, "min", block);
  const float range = mx - f16_to_f32(m_bits);
  d_bits = range > 0.0f ? detail::f16_ceil(range / float(nmax)) : uint16_t(0);
  detail::check_f16_scale(d_bits, format, "scale", block);
}

// q[j] = round((x[j] - m) / d) clamped to [0, nmax] (0 when d is 0).
void quantize_with_min(const float* x, float d, float m, int nmax, int* q) {
  for (int j = 0; j < kQK; ++j) {
    q[j] = d == 0.0f ? 0 : clamp_int(round_away((x[j] - m) / d), 0, nmax);
  }
}

// 4-bit nibbles of 32 quants in 0..15 (element j < 16 low nibble of byte j, j + 16 high nibble).
void pack_nibbles(const int* q, uint8_t* qs) {
  for (int j = 0; j < kHalf; ++j) qs[j] = uint8_t((q[j] & 0x0f) | (q[j + kHalf] & 0x0f) << 4);
}

// The 5th bits of 32 quants in 0..31, as the 4 little-endian bytes of Q5_0 / Q5_1.
void pack_high_bits(const int* q, uint8_t* qh) {
  uint32_t bits = 0;
  for (int j = 0; j < kQK; ++j) bits |= uint32_t((q[j] >> 4) & 1) << j;
  for (int k = 0; k < 4; ++k) qh[k] = uint8_t(bits >> (8 * k));
}

}  // namespace

void quantize_q4_0(const float* src, void* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q4_0, n);
  detail::check_finite(src, n, "q4_0", 0);
  for (int64_t i = 0; i < nb; ++i) {
    const float* x = src + i * kQK;
    BlockQ4_0 b{};
    b.d = symmetric_scale(max_abs(x, kQK), 7.5f, "q4_0", i);
    int q[kQK];
    quantize_symmetric(x, f16_to_f32(b.d), -8, 7, q);
    for (int& v : q) v += 8;
    pack_nibbles(q, b.qs);
    detail::store_block(dst, i, b);
  }
}

void quantize_q4_1(const float* src, void* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q4_1, n);
  detail::check_finite(src, n, "q4_1", 0);
  for (int64_t i = 0; i < nb; ++i) {
    const float* x = src + i * kQK;
    BlockQ4_1 b{};
    min_scale(x, 15, "q4_1", i, b.d, b.m);
    int q[kQK];
    quantize_with_min(x, f16_to_f32(b.d), f16_to_f32(b.m), 15, q);
    pack_nibbles(q, b.qs);
    detail::store_block(dst, i, b);
  }
}

void quantize_q5_0(const float* src, void* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q5_0, n);
  detail::check_finite(src, n, "q5_0", 0);
  for (int64_t i = 0; i < nb; ++i) {
    const float* x = src + i * kQK;
    BlockQ5_0 b{};
    b.d = symmetric_scale(max_abs(x, kQK), 15.5f, "q5_0", i);
    int q[kQK];
    quantize_symmetric(x, f16_to_f32(b.d), -16, 15, q);
    for (int& v : q) v += 16;
    pack_nibbles(q, b.qs);
    pack_high_bits(q, b.qh);
    detail::store_block(dst, i, b);
  }
}

void quantize_q5_1(const float* src, void* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q5_1, n);
  detail::check_finite(src, n, "q5_1", 0);
  for (int64_t i = 0; i < nb; ++i) {
    const float* x = src + i * kQK;
    BlockQ5_1 b{};
    min_scale(x, 31, "q5_1", i, b.d, b.m);
    int q[kQK];
    quantize_with_min(x, f16_to_f32(b.d), f16_to_f32(b.m), 31, q);
    pack_nibbles(q, b.qs);
    pack_high_bits(q, b.qh);
    detail::store_block(dst, i, b);
  }
}

void quantize_q8_0(const float* src, void* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q8_0, n);
  detail::check_finite(src, n, "q8_0", 0);
  for (int64_t i = 0; i < nb; ++i) {
    const float* x = src + i * kQK;
    BlockQ8_0 b{};
    b.d = symmetric_scale(max_abs(x, kQK), 127.0f, "q8_0", i);
    int q[kQK];
    quantize_symmetric(x, f16_to_f32(b.d), -127, 127, q);
    for (int j = 0; j < kQK; ++j) b.qs[j] = int8_t(q[j]);
    detail::store_block(dst, i, b);
  }
}

void quantize_q8_1(const float* src, void* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q8_1, n);
  detail::check_finite(src, n, "q8_1", 0);
  for (int64_t i = 0; i < nb; ++i) {
    const float* x = src + i * kQK;
    BlockQ8_1 b{};
    b.d = symmetric_scale(max_abs(x, kQK), 127.0f, "q8_1", i);
    const float d = f16_to_f32(b.d);
    int q[kQK];
    quantize_symmetric(x, d, -127, 127, q);
    int sum = 0;
    for (int j = 0; j < kQK; ++j) {
      b.qs[j] = int8_t(q[j]);
      sum += q[j];
    }
    b.s = f32_to_f16(float(sum) * d);
    detail::store_block(dst, i, b);
  }
}

}  // namespace ork::quant
