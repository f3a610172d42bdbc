// Isa::kNeonDot kernels (aarch64 Advanced SIMD + the dot-product extension, sdot). Only intrinsics
// and POD headers are used under the target pragma; every kernel has internal linkage.
//
// Numerics per output: per block the exact integer dot (sdot into int32 lanes, reduced exactly),
// scaled by the block's combined f32 scale and accumulated in a 4-lane f32 vector (FMA), summed at
// the end; K formats subtract their min term in a separate scalar f32 sum. f16 follows vec::dot
// (8 lanes as two vectors, separate multiply and add, the same reduction tree), so it equals the
// exact path on the same compiler settings.
#include "ops/qkernels.h"

#if defined(__aarch64__)
#pragma GCC push_options
#pragma GCC target("arch=armv8.2-a+dotprod+fp16")
#include <arm_neon.h>

#include <cstring>

namespace ork::ops {
namespace {

using quant::BlockQ8_K;

constexpr int kQ4KScales = 4, kQ4KQs = 16;                // BlockQ4_K: d, dmin, scales, qs
constexpr int kQ6KQh = 128, kQ6KScales = 192, kQ6KD = 208;  // BlockQ6_K: ql, qh, scales, d

inline float f16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0);
}

float dot_q8_0(int64_t nb, const uint8_t* w, const uint8_t* x) {
  float32x4_t acc = vdupq_n_f32(0.0f);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* wb = w + b * int64_t(sizeof(quant::BlockQ8_0));
    const auto* xb = reinterpret_cast<const BlockQ8A*>(x) + b;
    const int8x16_t w0 = vld1q_s8(reinterpret_cast<const int8_t*>(wb + 2));
    const int8x16_t w1 = vld1q_s8(reinterpret_cast<const int8_t*>(wb + 18));
    int32x4_t s = vdotq_s32(vdupq_n_s32(0), w0, vld1q_s8(xb->qs));
    s = vdotq_s32(s, w1, vld1q_s8(xb->qs + 16));
    acc = vfmaq_f32(acc, vcvtq_f32_s32(s), vdupq_n_f32(f16(wb) * xb->d));
  }
  return vaddvq_f32(acc);
}

float dot_q4_0(int64_t nb, const uint8_t* w, const uint8_t* x) {
  float32x4_t acc = vdupq_n_f32(0.0f);
  const uint8x16_t m4 = vdupq_n_u8(15);
  const int8x16_t eight = vdupq_n_s8(8);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* wb = w + b * int64_t(sizeof(quant::BlockQ4_0));
    const auto* xb = reinterpret_cast<const BlockQ8A*>(x) + b;
    const uint8x16_t q = vld1q_u8(wb + 2);
    const int8x16_t lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, m4)), eight);
    const int8x16_t hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), eight);
    int32x4_t s = vdotq_s32(vdupq_n_s32(0), lo, vld1q_s8(xb->qs));
    s = vdotq_s32(s, hi, vld1q_s8(xb->qs + 16));
    acc = vfmaq_f32(acc, vcvtq_f32_s32(s), vdupq_n_f32(f16(wb) * xb->d));
  }
  return vaddvq_f32(acc);
}

float dot_q4_k(int64_t nb, const uint8_t* w, const uint8_t* x) {
  float acc = 0.0f;
  const uint8x16_t m4 = vdupq_n_u8(15);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* wb = w + b * int64_t(sizeof(quant::BlockQ4_K));
    const auto* xb = reinterpret_cast<const BlockQ8_K*>(x) + b;
    const uint8_t* s = wb + kQ4KScales;
    int32_t sc[8], m[8];
    for (int j = 0; j < 4; ++j) {
      sc[j] = s[j] & 63;
      m[j] = s[j + 4] & 63;
    }
    for (int j = 4; j < 8; ++j) {
      sc[j] = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
      m[j] = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
    int32_t sumi = 0, summ = 0;
    for (int p = 0; p < 4; ++p) {
      int32x4_t lo = vdupq_n_s32(0), hi = vdupq_n_s32(0);
      for (int h = 0; h < 2; ++h) {
        const uint8x16_t q = vld1q_u8(wb + kQ4KQs + 32 * p + 16 * h);
        lo = vdotq_s32(lo, vreinterpretq_s8_u8(vandq_u8(q, m4)), vld1q_s8(xb->qs + 64 * p + 16 * h));
        hi = vdotq_s32(hi, vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), vld1q_s8(xb->qs + 64 * p + 32 + 16 * h));
      }
      sumi += sc[2 * p] * vaddvq_s32(lo) + sc[2 * p + 1] * vaddvq_s32(hi);
    }
    for (int j = 0; j < 8; ++j) summ += m[j] * (xb->bsums[2 * j] + xb->bsums[2 * j + 1]);
    acc += xb->d * f16(wb) * float(sumi) - xb->d * f16(wb + 2) * float(summ);
  }
  return acc;
}

float dot_q6_k(int64_t nb, const uint8_t* w, const uint8_t* x) {
  float acc = 0.0f;
  const uint8x16_t m4 = vdupq_n_u8(15), m2 = vdupq_n_u8(3);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* wb = w + b * int64_t(sizeof(quant::BlockQ6_K));
    const auto* xb = reinterpret_cast<const BlockQ8_K*>(x) + b;
    const auto* sc = reinterpret_cast<const int8_t*>(wb + kQ6KScales);
    int32_t sumi = 0;
    for (int h = 0; h < 2; ++h)
      for (int g = 0; g < 4; ++g)
        for (int half = 0; half < 2; ++half) {
          const uint8x16_t ql = vld1q_u8(wb + 64 * h + 32 * (g % 2) + 16 * half);
          const uint8x16_t qh = vld1q_u8(wb + kQ6KQh + 32 * h + 16 * half);
          const uint8x16_t low = g / 2 ? vshrq_n_u8(ql, 4) : vandq_u8(ql, m4);
          uint8x16_t high;
          switch (g) {
            case 0: high = vandq_u8(qh, m2); break;
            case 1: high = vandq_u8(vshrq_n_u8(qh, 2), m2); break;
            case 2: high = vandq_u8(vshrq_n_u8(qh, 4), m2); break;
            default: high = vshrq_n_u8(qh, 6); break;
          }
          const int8x16_t q = vreinterpretq_s8_u8(vorrq_u8(low, vshlq_n_u8(high, 4)));
          const int32_t s =
              vaddvq_s32(vdotq_s32(vdupq_n_s32(0), q, vld1q_s8(xb->qs + 128 * h + 32 * g + 16 * half)));
          const int j = 8 * h + 2 * g + half;
          sumi += int32_t(sc[j]) * (s - 32 * xb->bsums[j]);
        }
    acc += xb->d * f16(wb + kQ6KD) * float(sumi);
  }
  return acc;
}

float dot_f16(int64_t n, const uint8_t* w, const uint8_t* x) {
  const auto* xf = reinterpret_cast<const float*>(x);
  float32x4_t a0 = vdupq_n_f32(0.0f), a1 = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint16_t h[8];
    std::memcpy(h, w + 2 * i, 16);
    const float16x8_t hv = vreinterpretq_f16_u16(vld1q_u16(h));
    a0 = vaddq_f32(a0, vmulq_f32(vcvt_f32_f16(vget_low_f16(hv)), vld1q_f32(xf + i)));
    a1 = vaddq_f32(a1, vmulq_f32(vcvt_high_f32_f16(hv), vld1q_f32(xf + i + 4)));
  }
  float lanes[8];
  vst1q_f32(lanes, a0);
  vst1q_f32(lanes + 4, a1);
  for (int l = 0; i + l < n; ++l) lanes[l] += f16(w + 2 * (i + l)) * xf[i + l];
  for (int l = 0; l < 4; ++l) lanes[l] += lanes[l + 4];
  lanes[0] += lanes[2];
  lanes[1] += lanes[3];
  return lanes[0] + lanes[1];
}

template <float (*Dot)(int64_t, const uint8_t*, const uint8_t*)>
void tile(int64_t nb, const uint8_t* w, int64_t ws, int nw, const uint8_t* x, int64_t xs, int nx,
          float* y, int64_t ys) {
  for (int i = 0; i < nx; ++i)
    for (int j = 0; j < nw; ++j) y[i * ys + j] = Dot(nb, w + j * ws, x + i * xs);
}

// Exact: each sdot lane adds 4 products (|.| <= 65536) per step; k <= kGemmI8MaxK keeps lanes in int32.
int32_t dot_i8(const int8_t* a, const int8_t* b, int64_t k) {
  int32x4_t acc = vdupq_n_s32(0);
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) acc = vdotq_s32(acc, vld1q_s8(a + i), vld1q_s8(b + i));
  int32_t s = vaddvq_s32(acc);
  for (; i < k; ++i) s += int32_t(a[i]) * int32_t(b[i]);
  return s;
}

const QKernels kTable = {tile<dot_q8_0>, tile<dot_q4_0>, tile<dot_q4_k>, tile<dot_q6_k>,
                         tile<dot_f16>, dot_i8};

}  // namespace

const QKernels* qkernels_neon() { return &kTable; }

}  // namespace ork::ops
#pragma GCC pop_options
#else
namespace ork::ops {
const QKernels* qkernels_neon() { return nullptr; }
}  // namespace ork::ops
#endif
