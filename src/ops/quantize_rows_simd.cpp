// Activation quantizers on AVX2 (x86-64) and NEON (AArch64): quantize_rows_simd.h.
// Per 32 values, two primitives: amax32 (max |x|) and round32 (the 32 integers, and the sums of
// each half of 16). A Q8A row takes every block's scale first, then rounds: each block's scale is a
// chain of a horizontal maximum and two divisions, which the first loop overlaps across blocks
// (one block after the other, each chain held up the next block's rounding: 0.9 µs a row of 1024
// on this development machine, 0.23 µs so — docs/ops.md).
#include "ops/quantize_rows_simd.h"

#include <algorithm>

#include "core/error.h"

#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2")
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace ork::ops::detail {

#if defined(__x86_64__) || defined(__aarch64__)
namespace {

constexpr float kRound = 12582912.0f;         // 1.5 · 2^23
constexpr uint32_t kRoundBits = 0x4b400000u;  // its bits: x · id + kRound holds the integer below them

#if defined(__x86_64__)
inline __m256 abs8(const float* x) {
  return _mm256_and_ps(_mm256_loadu_ps(x), _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
}
inline float hmax8(__m256 m) {
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_max_ss(h, _mm_shuffle_ps(h, h, 1)));
}
inline int32_t hsum8(__m256i s) {
  __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4e));
  return _mm_cvtsi128_si32(_mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xb1)));
}
// max |x[i]| over 32 values.
inline __m256 amax32_v(const float* x) {
  return _mm256_max_ps(_mm256_max_ps(abs8(x), abs8(x + 8)), _mm256_max_ps(abs8(x + 16), abs8(x + 24)));
}
inline float amax32(const float* x) { return hmax8(amax32_v(x)); }
inline float amax256(const float* x) {
  __m256 m = amax32_v(x);
  for (int i = 32; i < 256; i += 32) m = _mm256_max_ps(m, amax32_v(x + i));
  return hmax8(m);
}
// q[0..32) = round-half-even(x · id); sums[0], sums[1]: Σ of q[0..16), q[16..32).
inline void round32(const float* x, float id, int8_t* q, int32_t* sums) {
  const __m256 idv = _mm256_set1_ps(id), r = _mm256_set1_ps(kRound);
  const __m256i bits = _mm256_set1_epi32(int32_t(kRoundBits));
  __m256i v[4];
  for (int i = 0; i < 4; ++i)
    v[i] = _mm256_sub_epi32(_mm256_castps_si256(_mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * i), idv), r)), bits);
  // Within ±127, so the saturating packs keep every value; they interleave 128-bit lanes, undone
  // by the permutation.
  const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(v[0], v[1]), _mm256_packs_epi32(v[2], v[3]));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q),
                      _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  sums[0] = hsum8(_mm256_add_epi32(v[0], v[1]));
  sums[1] = hsum8(_mm256_add_epi32(v[2], v[3]));
}
#else  // AArch64
inline float32x4_t abs4(const float* x) { return vabsq_f32(vld1q_f32(x)); }
inline float32x4_t amax32_v(const float* x) {
  const float32x4_t a = vmaxq_f32(vmaxq_f32(abs4(x), abs4(x + 4)), vmaxq_f32(abs4(x + 8), abs4(x + 12)));
  const float32x4_t b = vmaxq_f32(vmaxq_f32(abs4(x + 16), abs4(x + 20)), vmaxq_f32(abs4(x + 24), abs4(x + 28)));
  return vmaxq_f32(a, b);
}
inline float amax32(const float* x) { return vmaxvq_f32(amax32_v(x)); }
inline float amax256(const float* x) {
  float32x4_t m = amax32_v(x);
  for (int i = 32; i < 256; i += 32) m = vmaxq_f32(m, amax32_v(x + i));
  return vmaxvq_f32(m);
}
inline void round32(const float* x, float id, int8_t* q, int32_t* sums) {
  const float32x4_t idv = vdupq_n_f32(id), r = vdupq_n_f32(kRound);
  const uint32x4_t bits = vdupq_n_u32(kRoundBits);
  int32x4_t v[8];
  for (int i = 0; i < 8; ++i)
    v[i] = vreinterpretq_s32_u32(vsubq_u32(vreinterpretq_u32_f32(vaddq_f32(vmulq_f32(vld1q_f32(x + 4 * i), idv), r)), bits));
  for (int h = 0; h < 2; ++h) {  // within ±127: the narrowing moves keep every value
    const int32x4_t* w = v + 4 * h;
    const int16x8_t lo = vcombine_s16(vmovn_s32(w[0]), vmovn_s32(w[1]));
    const int16x8_t hi = vcombine_s16(vmovn_s32(w[2]), vmovn_s32(w[3]));
    vst1q_s8(q + 16 * h, vcombine_s8(vmovn_s16(lo), vmovn_s16(hi)));
    sums[h] = vaddvq_s32(vaddq_s32(vaddq_s32(w[0], w[1]), vaddq_s32(w[2], w[3])));
  }
}
#endif

inline float inverse(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }

}  // namespace

bool quantize_rows_simd_available() {
#if defined(__x86_64__)
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
#else
  return true;  // AArch64: NEON is part of the base instruction set
#endif
}

void quantize_row_q8a_simd(const float* x, int64_t k, BlockQ8A* y) {
  constexpr int64_t kChunk = 64;  // blocks whose scales are taken before their rounding
  const int64_t nb = k / quant::kQK;
  float ids[kChunk];
  for (int64_t b0 = 0; b0 < nb; b0 += kChunk) {
    const int64_t b1 = std::min(nb, b0 + kChunk);
    for (int64_t b = b0; b < b1; ++b) {
      const float d = amax32(x + b * quant::kQK) / 127.0f;
      y[b].d = d;
      ids[b - b0] = inverse(d);
    }
    for (int64_t b = b0; b < b1; ++b) {
      int32_t sums[2];
      round32(x + b * quant::kQK, ids[b - b0], y[b].qs, sums);
      y[b].sum = sums[0] + sums[1];
    }
  }
}

void quantize_row_q8k_simd(const float* x, int64_t k, quant::BlockQ8_K* y) {
  for (int64_t b = 0; b < k / quant::kQK_K; ++b) {
    const float* xb = x + b * quant::kQK_K;
    quant::BlockQ8_K& blk = y[b];
    blk.d = amax256(xb) / 127.0f;
    const float id = inverse(blk.d);
    for (int i = 0; i < quant::kQK_K / 32; ++i) {
      int32_t sums[2];
      round32(xb + 32 * i, id, blk.qs + 32 * i, sums);
      blk.bsums[2 * i] = int16_t(sums[0]);
      blk.bsums[2 * i + 1] = int16_t(sums[1]);
    }
  }
}

#else  // other CPUs: the portable functions only
bool quantize_rows_simd_available() { return false; }
void quantize_row_q8a_simd(const float*, int64_t, BlockQ8A*) {
  ORK_CHECK(false, "ops::detail::quantize_row_q8a_simd: no kernel for this CPU");
}
void quantize_row_q8k_simd(const float*, int64_t, quant::BlockQ8_K*) {
  ORK_CHECK(false, "ops::detail::quantize_row_q8k_simd: no kernel for this CPU");
}
#endif

}  // namespace ork::ops::detail

#if defined(__x86_64__)
#pragma GCC pop_options
#endif
