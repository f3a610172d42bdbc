// The Isa::kNeonDot panel kernels of qpanels.h (aarch64 with the dot-product extension, as the
// RK3588's Cortex-A76/A55): the panel quants back to signed bytes (Q8_0: XOR 0x80; Q4_0: nibble −
// 8; Q4_K / Q6_K / Q5_K / Q4_1 / Q5_0 / Q5_1: their 0..15 / 0..63 / 0..31 values, Q5_0's −16 as
// 16·Σx; Q2_K: 0..3; Q3_K: 0..7 − 4; IQ4_NL / IQ4_XS: the grid values by
// a table lookup, vqtbl1q_s8), then sdot by element (four rows' four quants against four activation bytes chosen by lane).
// Per block and output lane: the exact int32 dot, one f32 multiply of the scales and one FMA — the
// reference's operations.
#include "ops/qpanels.h"

#include "quant/blocks.h"

#include <cstring>
#include <utility>

#if defined(__aarch64__)
#pragma GCC push_options
#pragma GCC target("arch=armv8.2-a+dotprod+fp16")
#include <arm_neon.h>

namespace ork::ops {
namespace {

// Adds group G (quants 4G .. 4G+3 of 16 rows, as 4 signed vectors of 4 rows each) times lane
// G % 4 of activation half G / 4 (the lane must be a constant, hence the template).
template <int G, int RX>
inline void dot_group(const int8x16_t (&w)[4], const int8x16_t (&xv)[RX][2], int32x4_t (&s)[RX][4]) {
  for (int i = 0; i < RX; ++i)
    for (int q = 0; q < 4; ++q) s[i][q] = vdotq_laneq_s32(s[i][q], w[q], xv[i][G / 4], G % 4);
}

// Q8_0: group G of a block's panel quants, XOR 0x80 back to signed.
template <int G, int RX>
inline void q8_group(const uint8_t* u, const int8x16_t (&xv)[RX][2], int32x4_t (&s)[RX][4]) {
  const uint8x16_t flip = vdupq_n_u8(0x80);
  int8x16_t w[4];
  for (int q = 0; q < 4; ++q)
    w[q] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(u + G * kPanelGroupBytes + 16 * q), flip));
  dot_group<G, RX>(w, xv, s);
}

// Q4_0: byte group G holds groups G (low nibbles) and G + 4 (high nibbles); weights are nibble − 8.
template <int G, int RX>
inline void q4_group(const uint8_t* u, const int8x16_t (&xv)[RX][2], int32x4_t (&s)[RX][4]) {
  const uint8x16_t m4 = vdupq_n_u8(15);
  const int8x16_t eight = vdupq_n_s8(8);
  int8x16_t lo[4], hi[4];
  for (int q = 0; q < 4; ++q) {
    const uint8x16_t v = vld1q_u8(u + G * kPanelGroupBytes + 16 * q);
    lo[q] = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(v, m4)), eight);
    hi[q] = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(v, 4)), eight);
  }
  dot_group<G, RX>(lo, xv, s);
  dot_group<G + 4, RX>(hi, xv, s);
}

// Writes the ncol first of a panel's 16 columns for RX rows.
template <int RX>
inline void store_rows(const float32x4_t (&acc)[RX][4], int ncol, float* y, int64_t ys) {
  for (int i = 0; i < RX; ++i) {
    alignas(16) float out[kPanelRows];
    for (int q = 0; q < 4; ++q) vst1q_f32(out + 4 * q, acc[i][q]);
    std::memcpy(y + i * ys, out, sizeof(float) * size_t(ncol < kPanelRows ? ncol : kPanelRows));
  }
}

// IQ4_NL: as Q4_0, the nibbles mapped to the grid values (kIQ4NLValues) by a table lookup.
template <int G, int RX>
inline void iq4_group(const uint8_t* u, int8x16_t grid, const int8x16_t (&xv)[RX][2], int32x4_t (&s)[RX][4]) {
  const uint8x16_t m4 = vdupq_n_u8(15);
  int8x16_t lo[4], hi[4];
  for (int q = 0; q < 4; ++q) {
    const uint8x16_t v = vld1q_u8(u + G * kPanelGroupBytes + 16 * q);
    lo[q] = vqtbl1q_s8(grid, vandq_u8(v, m4));
    hi[q] = vqtbl1q_s8(grid, vshrq_n_u8(v, 4));
  }
  dot_group<G, RX>(lo, xv, s);
  dot_group<G + 4, RX>(hi, xv, s);
}

// Q4_1 / Q5_0 / Q5_1: byte group G's nibbles (0..15), with the 5th bits (bits G and 4 + G of the
// 5th group's bytes) at bit 4 for the Q5 types: 0..31, valid as signed.
template <int G, bool Q5, int RX>
inline void q5_group(const uint8_t* u, const int8x16_t (&xv)[RX][2], int32x4_t (&s)[RX][4]) {
  const uint8x16_t m4 = vdupq_n_u8(15), bit4 = vdupq_n_u8(16);
  int8x16_t lo[4], hi[4];
  for (int q = 0; q < 4; ++q) {
    const uint8x16_t v = vld1q_u8(u + G * kPanelGroupBytes + 16 * q);
    uint8x16_t l = vandq_u8(v, m4), h = vshrq_n_u8(v, 4);
    if constexpr (Q5) {
      const uint8x16_t b = vld1q_u8(u + 4 * kPanelGroupBytes + 16 * q);
      l = vorrq_u8(l, vandq_u8(vshlq_n_u8(b, 4 - G), bit4));
      if constexpr (G == 0)
        h = vorrq_u8(h, vandq_u8(b, bit4));
      else
        h = vorrq_u8(h, vandq_u8(vshrq_n_u8(b, G == 0 ? 1 : G), bit4));
    }
    lo[q] = vreinterpretq_s8_u8(l);
    hi[q] = vreinterpretq_s8_u8(h);
  }
  dot_group<G, RX>(lo, xv, s);
  dot_group<G + 4, RX>(hi, xv, s);
}

// The 32-element panel types: their quants per block and how they become signed bytes.
enum class Kind32 { kQ8_0, kQ4_0, kIQ4_NL, kQ4_1, kQ5_0, kQ5_1 };

// Two activation rows (RX = 1 or 2) × one panel: 16 int32 + 16 f32 lanes per row. Q8_0 and Q4_0
// (panels in pairs, qpanels.h): `panel` is the pair and `sb` the panel's index in it (0 or 1).
template <Kind32 Kind, int RX>
void panel_rows(int64_t nb, const uint8_t* panel, int64_t sb, int ncol, const uint8_t* x,
                int64_t xs, float* y, int64_t ys) {
  float32x4_t acc[RX][4];
  for (int i = 0; i < RX; ++i)
    for (int q = 0; q < 4; ++q) acc[i][q] = vdupq_n_f32(0.0f);
  for (int64_t b = 0; b < nb; ++b) {
    int32x4_t s[RX][4];
    for (int i = 0; i < RX; ++i)
      for (int q = 0; q < 4; ++q) s[i][q] = vdupq_n_s32(0);
    int8x16_t xv[RX][2];
    for (int i = 0; i < RX; ++i) {
      const auto* xb = reinterpret_cast<const BlockQ8A*>(x + i * xs) + b;
      xv[i][0] = vld1q_s8(xb->qs);
      xv[i][1] = vld1q_s8(xb->qs + 16);
    }
    if constexpr (Kind == Kind32::kQ4_0) {
      const uint8_t* u = kQ4_0Pairs.quants(panel, b, int(sb));
      [&]<int... G>(std::integer_sequence<int, G...>) {
        (q4_group<G, RX>(u, xv, s), ...);
      }(std::make_integer_sequence<int, 4>());
    } else if constexpr (Kind == Kind32::kIQ4_NL) {
      const uint8_t* u = panel + sb + b * 4 * kPanelGroupBytes;
      const int8x16_t grid = vld1q_s8(quant::kIQ4NLValues);
      [&]<int... G>(std::integer_sequence<int, G...>) {
        (iq4_group<G, RX>(u, grid, xv, s), ...);
      }(std::make_integer_sequence<int, 4>());
    } else if constexpr (Kind == Kind32::kQ4_1 || Kind == Kind32::kQ5_0 || Kind == Kind32::kQ5_1) {
      constexpr bool kQ5 = Kind != Kind32::kQ4_1;
      const uint8_t* u = panel + sb + b * (kQ5 ? 5 : 4) * kPanelGroupBytes;
      [&]<int... G>(std::integer_sequence<int, G...>) {
        (q5_group<G, kQ5, RX>(u, xv, s), ...);
      }(std::make_integer_sequence<int, 4>());
    } else {
      const uint8_t* u = kQ8_0Pairs.quants(panel, b, int(sb));
      [&]<int... G>(std::integer_sequence<int, G...>) {
        (q8_group<G, RX>(u, xv, s), ...);
      }(std::make_integer_sequence<int, 8>());
    }
    // Q4_1 / Q5_1: d[16] then m[16] per block; the others d[16].
    constexpr bool kOffset = Kind == Kind32::kQ4_1 || Kind == Kind32::kQ5_1;
    float32x4_t dw[4], mw[4];
    const uint8_t* scales = Kind == Kind32::kQ4_0   ? kQ4_0Pairs.scales(panel, b, int(sb))
                            : Kind == Kind32::kQ8_0 ? kQ8_0Pairs.scales(panel, b, int(sb))
                                                    : panel + b * kPanelRows * (kOffset ? 4 : 2);
    const auto* dh = reinterpret_cast<const float16_t*>(scales);
    for (int q = 0; q < 4; ++q) {
      dw[q] = vcvt_f32_f16(vld1_f16(dh + 4 * q));
      if constexpr (kOffset) mw[q] = vcvt_f32_f16(vld1_f16(dh + kPanelRows + 4 * q));
    }
    for (int i = 0; i < RX; ++i) {
      const auto* xb = reinterpret_cast<const BlockQ8A*>(x + i * xs) + b;
      const float32x4_t dx = vdupq_n_f32(xb->d);
      if constexpr (Kind == Kind32::kQ5_0)
        for (int q = 0; q < 4; ++q) s[i][q] = vsubq_s32(s[i][q], vdupq_n_s32(16 * xb->sum));
      for (int q = 0; q < 4; ++q) {
        acc[i][q] = vfmaq_f32(acc[i][q], vmulq_f32(dw[q], dx), vcvtq_f32_s32(s[i][q]));
        if constexpr (kOffset)
          acc[i][q] = vfmaq_f32(acc[i][q], vmulq_f32(mw[q], dx), vdupq_n_f32(float(xb->sum)));
      }
    }
  }
  store_rows<RX>(acc, ncol, y, ys);
}

// ---- Q4_K: group G of the current sub-block pair; nibble half H (0: sub-block 2j, 1: 2j+1). ----
template <int G, int H, int RX>
inline void q4_k_group(const uint8_t* qj, const int8x16_t (&xv)[RX][2], int32x4_t (&s)[RX][4]) {
  const uint8x16_t m4 = vdupq_n_u8(15);
  int8x16_t w[4];
  for (int q = 0; q < 4; ++q) {
    const uint8x16_t v = vld1q_u8(qj + G * kPanelGroupBytes + 16 * q);
    w[q] = vreinterpretq_s8_u8(H ? vshrq_n_u8(v, 4) : vandq_u8(v, m4));  // 0..15: valid as signed
  }
  dot_group<G, RX>(w, xv, s);
}

// The 16 lanes of a byte row (16 rows' sub-block scale or min) as four int32x4.
inline void widen16(const uint8_t* p, int32x4_t (&out)[4]) {
  const uint8x16_t v = vld1q_u8(p);
  const uint16x8_t lo = vmovl_u8(vget_low_u8(v)), hi = vmovl_u8(vget_high_u8(v));
  out[0] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(lo)));
  out[1] = vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(lo)));
  out[2] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(hi)));
  out[3] = vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(hi)));
}
// 16 int8 bytes (one per row) → 4 × 4 int32 lanes: rows' signed sub-block scales.
inline void widen16_s8(const uint8_t* p, int32x4_t (&out)[4]) {
  const int8x16_t v = vld1q_s8(reinterpret_cast<const int8_t*>(p));
  const int16x8_t lo = vmovl_s8(vget_low_s8(v)), hi = vmovl_s8(vget_high_s8(v));
  out[0] = vmovl_s16(vget_low_s16(lo));
  out[1] = vmovl_s16(vget_high_s16(lo));
  out[2] = vmovl_s16(vget_low_s16(hi));
  out[3] = vmovl_s16(vget_high_s16(hi));
}

template <int H, int RX>
inline void q4_k_sub(const uint8_t* qj, const uint8_t* sc, int sub, const quant::BlockQ8_K* const (&xr)[RX],
                     int64_t b, int32x4_t (&isum)[RX][4]) {
  int8x16_t xv[RX][2];
  int32x4_t p[RX][4];
  for (int i = 0; i < RX; ++i) {
    xv[i][0] = vld1q_s8(xr[i][b].qs + 32 * sub);
    xv[i][1] = vld1q_s8(xr[i][b].qs + 32 * sub + 16);
    for (int q = 0; q < 4; ++q) p[i][q] = vdupq_n_s32(0);
  }
  [&]<int... G>(std::integer_sequence<int, G...>) {
    (q4_k_group<G, H, RX>(qj, xv, p), ...);
  }(std::make_integer_sequence<int, 8>());
  int32x4_t scv[4];
  widen16(sc + 64 + 16 * sub, scv);
  for (int i = 0; i < RX; ++i)
    for (int q = 0; q < 4; ++q) isum[i][q] = vmlaq_s32(isum[i][q], p[i][q], scv[q]);
}

// ---- Q5_K: the Q4_K nibbles of sub-block SUB (group G) | bit SUB of qh group G, shifted to bit 4
// (0..31, valid as signed). ----
template <int G, int SUB, int RX>
inline void q5_k_group(const uint8_t* qj, const uint8_t* qh, const int8x16_t (&xv)[RX][2],
                       int32x4_t (&s)[RX][4]) {
  const uint8x16_t m4 = vdupq_n_u8(15), bit4 = vdupq_n_u8(16);
  int8x16_t w[4];
  for (int q = 0; q < 4; ++q) {
    const uint8x16_t v = vld1q_u8(qj + G * kPanelGroupBytes + 16 * q);
    const uint8x16_t h = vld1q_u8(qh + G * kPanelGroupBytes + 16 * q);
    const uint8x16_t lo = SUB % 2 ? vshrq_n_u8(v, 4) : vandq_u8(v, m4);
    uint8x16_t hb = h;  // bit SUB of h moved to bit 4
    if constexpr (SUB < 4)
      hb = vshlq_n_u8(h, 4 - SUB);
    else if constexpr (SUB > 4)
      hb = vshrq_n_u8(h, SUB - 4);
    w[q] = vreinterpretq_s8_u8(vorrq_u8(lo, vandq_u8(hb, bit4)));
  }
  dot_group<G, RX>(w, xv, s);
}

// One Q5_K sub-block: isum += sc_SUB · Σ q·x.
template <int SUB, int RX>
inline void q5_k_sub(const uint8_t* qb, const uint8_t* sc, const quant::BlockQ8_K* const (&xr)[RX], int64_t b,
                     int32x4_t (&isum)[RX][4]) {
  const uint8_t* qj = qb + (SUB / 2) * 8 * kPanelGroupBytes;
  const uint8_t* qh = qb + 32 * kPanelGroupBytes;
  int8x16_t xv[RX][2];
  int32x4_t p[RX][4];
  for (int i = 0; i < RX; ++i) {
    xv[i][0] = vld1q_s8(xr[i][b].qs + 32 * SUB);
    xv[i][1] = vld1q_s8(xr[i][b].qs + 32 * SUB + 16);
    for (int q = 0; q < 4; ++q) p[i][q] = vdupq_n_s32(0);
  }
  [&]<int... G>(std::integer_sequence<int, G...>) {
    (q5_k_group<G, SUB, RX>(qj, qh, xv, p), ...);
  }(std::make_integer_sequence<int, 8>());
  int32x4_t scv[4];
  widen16(sc + 64 + 16 * SUB, scv);
  for (int i = 0; i < RX; ++i)
    for (int q = 0; q < 4; ++q) isum[i][q] = vmlaq_s32(isum[i][q], p[i][q], scv[q]);
}

// acc += f32(d)·d_x·f32(t) per row and activation row: the last step of the K types with one scale
// d per row and super-block (Q3_K, Q6_K, IQ4_XS), d the f16 d[16] at the start of `sc`.
template <int RX>
inline void add_super_block(const uint8_t* sc, const int32x4_t (&t)[RX][4], const quant::BlockQ8_K* const (&xr)[RX],
                            int64_t b, float32x4_t (&acc)[RX][4]) {
  const auto* dh = reinterpret_cast<const float16_t*>(sc);
  for (int q = 0; q < 4; ++q) {
    const float32x4_t d = vcvt_f32_f16(vld1_f16(dh + 4 * q));
    for (int i = 0; i < RX; ++i)
      acc[i][q] = vfmaq_f32(acc[i][q], vmulq_f32(d, vdupq_n_f32(xr[i][b].d)), vcvtq_f32_s32(t[i][q]));
  }
}

// ---- Q2_K: sub-block SUB = 8h + 2g + u: groups 8h + 4u + k (k < 4), bits 2g, 2g+1 (0..3, valid as
// signed), against activation bytes 16·SUB + 4k .. (lane k); isum += sc·p, msum += m·bsums[SUB]. ----
template <int SUB, int RX>
inline void q2_k_sub(const uint8_t* qb, const uint8_t* sc, const quant::BlockQ8_K* const (&xr)[RX], int64_t b,
                     int32x4_t (&isum)[RX][4], int32x4_t (&msum)[RX][4]) {
  constexpr int kShift = 2 * ((SUB % 8) / 2);
  const uint8_t* qg = qb + (8 * (SUB / 8) + 4 * (SUB % 2)) * kPanelGroupBytes;
  const uint8x16_t m3 = vdupq_n_u8(3);
  int8x16_t xv[RX][2];
  int32x4_t p[RX][4];
  for (int i = 0; i < RX; ++i) {
    xv[i][0] = xv[i][1] = vld1q_s8(xr[i][b].qs + 16 * SUB);
    for (int q = 0; q < 4; ++q) p[i][q] = vdupq_n_s32(0);
  }
  [&]<int... K>(std::integer_sequence<int, K...>) {
    (([&] {
       int8x16_t w[4];
       for (int q = 0; q < 4; ++q) {
         const uint8x16_t v = vld1q_u8(qg + K * kPanelGroupBytes + 16 * q);
         uint8x16_t t = v;
         if constexpr (kShift > 0) t = vshrq_n_u8(v, kShift > 0 ? kShift : 1);
         w[q] = vreinterpretq_s8_u8(vandq_u8(t, m3));
       }
       dot_group<K, RX>(w, xv, p);
     }()),
     ...);
  }(std::make_integer_sequence<int, 4>());
  int32x4_t scv[4], mv[4];
  widen16(sc + 64 + 16 * SUB, scv);
  widen16(sc + 320 + 16 * SUB, mv);
  for (int i = 0; i < RX; ++i)
    for (int q = 0; q < 4; ++q) {
      isum[i][q] = vmlaq_s32(isum[i][q], p[i][q], scv[q]);
      msum[i][q] = vmlaq_n_s32(msum[i][q], mv[q], int32_t(xr[i][b].bsums[SUB]));
    }
}

template <int RX>
void q2_k_rows(int64_t nb, const uint8_t* panel, int64_t sb, int ncol, const uint8_t* x, int64_t xs,
               float* y, int64_t ys) {
  float32x4_t acc[RX][4];
  const quant::BlockQ8_K* xr[RX];
  for (int i = 0; i < RX; ++i) {
    xr[i] = reinterpret_cast<const quant::BlockQ8_K*>(x + i * xs);
    for (int q = 0; q < 4; ++q) acc[i][q] = vdupq_n_f32(0.0f);
  }
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* qb = panel + sb + b * kPanelQ2KQuantBytes;
    const uint8_t* sc = panel + b * kPanelQ2KScaleBytes;
    int32x4_t isum[RX][4], msum[RX][4];
    for (int i = 0; i < RX; ++i)
      for (int q = 0; q < 4; ++q) isum[i][q] = msum[i][q] = vdupq_n_s32(0);
    [&]<int... S>(std::integer_sequence<int, S...>) {
      (q2_k_sub<S, RX>(qb, sc, xr, b, isum, msum), ...);
    }(std::make_integer_sequence<int, 16>());
    const auto* dh = reinterpret_cast<const float16_t*>(sc);
    for (int q = 0; q < 4; ++q) {
      const float32x4_t d = vcvt_f32_f16(vld1_f16(dh + 4 * q));
      const float32x4_t dmin = vcvt_f32_f16(vld1_f16(dh + 16 + 4 * q));
      for (int i = 0; i < RX; ++i) {
        const float32x4_t dx = vdupq_n_f32(xr[i][b].d);
        acc[i][q] = vfmaq_f32(acc[i][q], vmulq_f32(d, dx), vcvtq_f32_s32(isum[i][q]));
        acc[i][q] = vfmsq_f32(acc[i][q], vmulq_f32(dmin, dx), vcvtq_f32_s32(msum[i][q]));
      }
    }
  }
  store_rows<RX>(acc, ncol, y, ys);
}

// ---- Q3_K: sub-block SUB = 8h + 2g + u: q groups 8h + 4u + k (bits 2g, 2g+1) and h groups 4u + k
// (bit 4h + g, vtst into 4), minus 4: the signed weight (−4..3), so t += sc·p needs no Σx term. ----
template <int SUB, int RX>
inline void q3_k_sub(const uint8_t* qb, const uint8_t* sc, const quant::BlockQ8_K* const (&xr)[RX], int64_t b,
                     int32x4_t (&t)[RX][4]) {
  constexpr int kH = SUB / 8, kG = (SUB % 8) / 2, kU = SUB % 2;
  const uint8_t* qg = qb + (8 * kH + 4 * kU) * kPanelGroupBytes;
  const uint8_t* hg = qb + (16 + 4 * kU) * kPanelGroupBytes;
  const uint8x16_t m3 = vdupq_n_u8(3), four = vdupq_n_u8(4), bit = vdupq_n_u8(uint8_t(1u << (4 * kH + kG)));
  int8x16_t xv[RX][2];
  int32x4_t p[RX][4];
  for (int i = 0; i < RX; ++i) {
    xv[i][0] = xv[i][1] = vld1q_s8(xr[i][b].qs + 16 * SUB);
    for (int q = 0; q < 4; ++q) p[i][q] = vdupq_n_s32(0);
  }
  [&]<int... K>(std::integer_sequence<int, K...>) {
    (([&] {
       int8x16_t w[4];
       for (int q = 0; q < 4; ++q) {
         const uint8x16_t v = vld1q_u8(qg + K * kPanelGroupBytes + 16 * q);
         const uint8x16_t hv = vld1q_u8(hg + K * kPanelGroupBytes + 16 * q);
         uint8x16_t lo = v;
         if constexpr (kG > 0) lo = vshrq_n_u8(v, kG > 0 ? 2 * kG : 1);
         lo = vorrq_u8(vandq_u8(lo, m3), vandq_u8(vtstq_u8(hv, bit), four));
         w[q] = vsubq_s8(vreinterpretq_s8_u8(lo), vreinterpretq_s8_u8(four));
       }
       dot_group<K, RX>(w, xv, p);
     }()),
     ...);
  }(std::make_integer_sequence<int, 4>());
  int32x4_t scv[4];
  widen16_s8(sc + 32 + 16 * SUB, scv);
  for (int i = 0; i < RX; ++i)
    for (int q = 0; q < 4; ++q) t[i][q] = vmlaq_s32(t[i][q], p[i][q], scv[q]);
}

template <int RX>
void q3_k_rows(int64_t nb, const uint8_t* panel, int64_t sb, int ncol, const uint8_t* x, int64_t xs,
               float* y, int64_t ys) {
  float32x4_t acc[RX][4];
  const quant::BlockQ8_K* xr[RX];
  for (int i = 0; i < RX; ++i) {
    xr[i] = reinterpret_cast<const quant::BlockQ8_K*>(x + i * xs);
    for (int q = 0; q < 4; ++q) acc[i][q] = vdupq_n_f32(0.0f);
  }
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* qb = panel + sb + b * kPanelQ3KQuantBytes;
    const uint8_t* sc = panel + b * kPanelQ3KScaleBytes;
    int32x4_t t[RX][4];
    for (int i = 0; i < RX; ++i)
      for (int q = 0; q < 4; ++q) t[i][q] = vdupq_n_s32(0);
    [&]<int... S>(std::integer_sequence<int, S...>) {
      (q3_k_sub<S, RX>(qb, sc, xr, b, t), ...);
    }(std::make_integer_sequence<int, 16>());
    add_super_block<RX>(sc, t, xr, b, acc);
  }
  store_rows<RX>(acc, ncol, y, ys);
}

// ---- IQ4_XS: sub-block J's 4 byte groups (4J .. 4J+3) give its elements 4g.. (low nibbles) and
// 16+4g.. (high nibbles) as grid values; t += l_J · Σ grid·x. ----
template <int J, int RX>
inline void iq4_xs_sub(const uint8_t* qb, const uint8_t* sc, int8x16_t grid, const quant::BlockQ8_K* const (&xr)[RX],
                       int64_t b, int32x4_t (&t)[RX][4]) {
  const uint8_t* u = qb + 4 * J * kPanelGroupBytes;
  int8x16_t xv[RX][2];
  int32x4_t p[RX][4];
  for (int i = 0; i < RX; ++i) {
    xv[i][0] = vld1q_s8(xr[i][b].qs + 32 * J);
    xv[i][1] = vld1q_s8(xr[i][b].qs + 32 * J + 16);
    for (int q = 0; q < 4; ++q) p[i][q] = vdupq_n_s32(0);
  }
  [&]<int... G>(std::integer_sequence<int, G...>) {
    (iq4_group<G, RX>(u, grid, xv, p), ...);
  }(std::make_integer_sequence<int, 4>());
  int32x4_t lv[4];
  widen16_s8(sc + 32 + 16 * J, lv);
  for (int i = 0; i < RX; ++i)
    for (int q = 0; q < 4; ++q) t[i][q] = vmlaq_s32(t[i][q], p[i][q], lv[q]);
}

template <int RX>
void iq4_xs_rows(int64_t nb, const uint8_t* panel, int64_t sb, int ncol, const uint8_t* x, int64_t xs,
                 float* y, int64_t ys) {
  float32x4_t acc[RX][4];
  const quant::BlockQ8_K* xr[RX];
  for (int i = 0; i < RX; ++i) {
    xr[i] = reinterpret_cast<const quant::BlockQ8_K*>(x + i * xs);
    for (int q = 0; q < 4; ++q) acc[i][q] = vdupq_n_f32(0.0f);
  }
  const int8x16_t grid = vld1q_s8(quant::kIQ4NLValues);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* qb = panel + sb + b * kPanelQ4KQuantBytes;
    const uint8_t* sc = panel + b * kPanelIQ4XSScaleBytes;
    int32x4_t t[RX][4];
    for (int i = 0; i < RX; ++i)
      for (int q = 0; q < 4; ++q) t[i][q] = vdupq_n_s32(0);
    [&]<int... J>(std::integer_sequence<int, J...>) {
      (iq4_xs_sub<J, RX>(qb, sc, grid, xr, b, t), ...);
    }(std::make_integer_sequence<int, 8>());
    add_super_block<RX>(sc, t, xr, b, acc);
  }
  store_rows<RX>(acc, ncol, y, ys);
}

// Q4_K (Q5 = false) and Q5_K (Q5 = true): the same scales, mins and f32 steps.
template <bool Q5, int RX>
void q4_k_rows(int64_t nb, const uint8_t* panel, int64_t sb, int ncol, const uint8_t* x, int64_t xs,
               float* y, int64_t ys) {
  float32x4_t acc[RX][4];
  const quant::BlockQ8_K* xr[RX];
  for (int i = 0; i < RX; ++i) {
    xr[i] = reinterpret_cast<const quant::BlockQ8_K*>(x + i * xs);
    for (int q = 0; q < 4; ++q) acc[i][q] = vdupq_n_f32(0.0f);
  }
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* qb = panel + sb + b * (Q5 ? kPanelQ5KQuantBytes : kPanelQ4KQuantBytes);
    const uint8_t* sc = panel + b * kPanelQ4KScaleBytes;
    int32x4_t isum[RX][4], msum[RX][4];
    for (int i = 0; i < RX; ++i)
      for (int q = 0; q < 4; ++q) isum[i][q] = msum[i][q] = vdupq_n_s32(0);
    if constexpr (Q5) {
      [&]<int... S>(std::integer_sequence<int, S...>) {
        (q5_k_sub<S, RX>(qb, sc, xr, b, isum), ...);
      }(std::make_integer_sequence<int, 8>());
    } else {
      for (int j = 0; j < 4; ++j) {
        const uint8_t* qj = qb + j * 8 * kPanelGroupBytes;
        q4_k_sub<0, RX>(qj, sc, 2 * j, xr, b, isum);
        q4_k_sub<1, RX>(qj, sc, 2 * j + 1, xr, b, isum);
      }
    }
    for (int sub = 0; sub < 8; ++sub) {
      int32x4_t mv[4];
      widen16(sc + 192 + 16 * sub, mv);
      for (int i = 0; i < RX; ++i) {
        const int32_t bs = int32_t(xr[i][b].bsums[2 * sub]) + xr[i][b].bsums[2 * sub + 1];
        for (int q = 0; q < 4; ++q) msum[i][q] = vmlaq_n_s32(msum[i][q], mv[q], bs);
      }
    }
    const auto* dh = reinterpret_cast<const float16_t*>(sc);
    for (int q = 0; q < 4; ++q) {
      const float32x4_t d = vcvt_f32_f16(vld1_f16(dh + 4 * q));
      const float32x4_t dmin = vcvt_f32_f16(vld1_f16(dh + 16 + 4 * q));
      for (int i = 0; i < RX; ++i) {
        const float32x4_t dx = vdupq_n_f32(xr[i][b].d);
        acc[i][q] = vfmaq_f32(acc[i][q], vmulq_f32(d, dx), vcvtq_f32_s32(isum[i][q]));
        acc[i][q] = vfmsq_f32(acc[i][q], vmulq_f32(dmin, dx), vcvtq_f32_s32(msum[i][q]));
      }
    }
  }
  store_rows<RX>(acc, ncol, y, ys);
}

// ---- Q6_K: group G of quarter K of half H: q = ql nibble | qh bits << 4 (0..63, valid as signed). ----
template <int G, int K, int RX>
inline void q6_k_group(const uint8_t* ql, const uint8_t* qh, const int8x16_t (&xv)[RX][2],
                       int32x4_t (&s)[RX][4]) {
  const uint8x16_t m4 = vdupq_n_u8(15), m3 = vdupq_n_u8(3);
  int8x16_t w[4];
  for (int q = 0; q < 4; ++q) {
    const uint8x16_t lv = vld1q_u8(ql + G * kPanelGroupBytes + 16 * q);
    const uint8x16_t hv = vld1q_u8(qh + G * kPanelGroupBytes + 16 * q);
    const uint8x16_t lo = K / 2 ? vshrq_n_u8(lv, 4) : vandq_u8(lv, m4);
    const uint8x16_t hi = vandq_u8(K == 0 ? hv : vshrq_n_u8(hv, K == 0 ? 1 : 2 * K), m3);
    w[q] = vreinterpretq_s8_u8(vorrq_u8(lo, vshlq_n_u8(hi, 4)));
  }
  dot_group<G % 8, RX>(w, xv, s);
}

// One quarter (32 elements, sub-blocks 2·(4H+K) and +1) of a super-block: t += sc·(Σqx − 32·Σx).
template <int H, int K, int RX>
inline void q6_k_quarter(const uint8_t* qb, const uint8_t* sc, const quant::BlockQ8_K* const (&xr)[RX],
                         int64_t b, int32x4_t (&t)[RX][4]) {
  const uint8_t* ql = qb + (16 * H + 8 * (K % 2)) * kPanelGroupBytes;
  const uint8_t* qh = qb + (32 + 8 * H) * kPanelGroupBytes;
  int8x16_t xv[RX][2];
  for (int i = 0; i < RX; ++i) {
    xv[i][0] = vld1q_s8(xr[i][b].qs + 128 * H + 32 * K);
    xv[i][1] = vld1q_s8(xr[i][b].qs + 128 * H + 32 * K + 16);
  }
  for (int half = 0; half < 2; ++half) {
    const int sub = 8 * H + 2 * K + half;
    int32x4_t p[RX][4];
    for (int i = 0; i < RX; ++i)
      for (int q = 0; q < 4; ++q) p[i][q] = vdupq_n_s32(0);
    if (half == 0) {
      q6_k_group<0, K, RX>(ql, qh, xv, p);
      q6_k_group<1, K, RX>(ql, qh, xv, p);
      q6_k_group<2, K, RX>(ql, qh, xv, p);
      q6_k_group<3, K, RX>(ql, qh, xv, p);
    } else {
      q6_k_group<4, K, RX>(ql, qh, xv, p);
      q6_k_group<5, K, RX>(ql, qh, xv, p);
      q6_k_group<6, K, RX>(ql, qh, xv, p);
      q6_k_group<7, K, RX>(ql, qh, xv, p);
    }
    int32x4_t scv[4];
    widen16_s8(sc + 32 + 16 * sub, scv);
    for (int i = 0; i < RX; ++i) {
      const int32x4_t corr = vdupq_n_s32(32 * int32_t(xr[i][b].bsums[sub]));
      for (int q = 0; q < 4; ++q) t[i][q] = vmlaq_s32(t[i][q], vsubq_s32(p[i][q], corr), scv[q]);
    }
  }
}

// Panels in pairs (qpanels.h): `panel` is the pair and `sb` the panel's index in it (0 or 1).
template <int RX>
void q6_k_rows(int64_t nb, const uint8_t* panel, int64_t sb, int ncol, const uint8_t* x, int64_t xs,
               float* y, int64_t ys) {
  float32x4_t acc[RX][4];
  const quant::BlockQ8_K* xr[RX];
  for (int i = 0; i < RX; ++i) {
    xr[i] = reinterpret_cast<const quant::BlockQ8_K*>(x + i * xs);
    for (int q = 0; q < 4; ++q) acc[i][q] = vdupq_n_f32(0.0f);
  }
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* qb = kQ6_KPairs.quants(panel, b, int(sb));
    const uint8_t* sc = kQ6_KPairs.scales(panel, b, int(sb));
    int32x4_t t[RX][4];
    for (int i = 0; i < RX; ++i)
      for (int q = 0; q < 4; ++q) t[i][q] = vdupq_n_s32(0);
    q6_k_quarter<0, 0, RX>(qb, sc, xr, b, t);
    q6_k_quarter<0, 1, RX>(qb, sc, xr, b, t);
    q6_k_quarter<0, 2, RX>(qb, sc, xr, b, t);
    q6_k_quarter<0, 3, RX>(qb, sc, xr, b, t);
    q6_k_quarter<1, 0, RX>(qb, sc, xr, b, t);
    q6_k_quarter<1, 1, RX>(qb, sc, xr, b, t);
    q6_k_quarter<1, 2, RX>(qb, sc, xr, b, t);
    q6_k_quarter<1, 3, RX>(qb, sc, xr, b, t);
    add_super_block<RX>(sc, t, xr, b, acc);
  }
  store_rows<RX>(acc, ncol, y, ys);
}

// The row kernels of one type as Rows<RX>::run (one panel, RX = 1 or 2 activation rows).
template <int RX>
struct Q8_0Rows {
  static void run(int64_t nb, const uint8_t* p, int64_t sb, int ncol, const uint8_t* x, int64_t xs, float* y,
                  int64_t ys) {
    panel_rows<Kind32::kQ8_0, RX>(nb, p, sb, ncol, x, xs, y, ys);
  }
};
template <int RX>
struct Q4_0Rows {
  static void run(int64_t nb, const uint8_t* p, int64_t sb, int ncol, const uint8_t* x, int64_t xs, float* y,
                  int64_t ys) {
    panel_rows<Kind32::kQ4_0, RX>(nb, p, sb, ncol, x, xs, y, ys);
  }
};
template <int RX>
struct Q4_KRows {
  static void run(int64_t nb, const uint8_t* p, int64_t sb, int ncol, const uint8_t* x, int64_t xs, float* y,
                  int64_t ys) {
    q4_k_rows<false, RX>(nb, p, sb, ncol, x, xs, y, ys);
  }
};
template <int RX>
struct Q6_KRows {
  static void run(int64_t nb, const uint8_t* p, int64_t sb, int ncol, const uint8_t* x, int64_t xs, float* y,
                  int64_t ys) {
    q6_k_rows<RX>(nb, p, sb, ncol, x, xs, y, ys);
  }
};

template <int RX>
struct Q5_KRows {
  static void run(int64_t nb, const uint8_t* p, int64_t sb, int ncol, const uint8_t* x, int64_t xs, float* y,
                  int64_t ys) {
    q4_k_rows<true, RX>(nb, p, sb, ncol, x, xs, y, ys);
  }
};
template <int RX>
struct IQ4_NLRows {
  static void run(int64_t nb, const uint8_t* p, int64_t sb, int ncol, const uint8_t* x, int64_t xs, float* y,
                  int64_t ys) {
    panel_rows<Kind32::kIQ4_NL, RX>(nb, p, sb, ncol, x, xs, y, ys);
  }
};
template <int RX>
struct IQ4_XSRows {
  static void run(int64_t nb, const uint8_t* p, int64_t sb, int ncol, const uint8_t* x, int64_t xs, float* y,
                  int64_t ys) {
    iq4_xs_rows<RX>(nb, p, sb, ncol, x, xs, y, ys);
  }
};

template <int RX>
struct Q2_KRows {
  static void run(int64_t nb, const uint8_t* p, int64_t sb, int ncol, const uint8_t* x, int64_t xs, float* y,
                  int64_t ys) {
    q2_k_rows<RX>(nb, p, sb, ncol, x, xs, y, ys);
  }
};
template <int RX>
struct Q3_KRows {
  static void run(int64_t nb, const uint8_t* p, int64_t sb, int ncol, const uint8_t* x, int64_t xs, float* y,
                  int64_t ys) {
    q3_k_rows<RX>(nb, p, sb, ncol, x, xs, y, ys);
  }
};
template <Kind32 Kind>
struct Legacy {
  template <int RX>
  struct Rows {
    static void run(int64_t nb, const uint8_t* p, int64_t sb, int ncol, const uint8_t* x, int64_t xs, float* y,
                    int64_t ys) {
      panel_rows<Kind, RX>(nb, p, sb, ncol, x, xs, y, ys);
    }
  };
};

// A PanelTileFn: panel by panel, activation rows two at a time. Paired types (Q8_0, Q4_0, Q6_K:
// panels in pairs, qpanels.h): each panel addressed as its pair and, as the scale_bytes argument,
// its index in the pair.
template <template <int> class Rows, bool Paired = false>
void dispatch(int64_t nb, const uint8_t* panels, int64_t pb, int64_t sb, int np, int ncol,
              const uint8_t* x, int64_t xs, int nx, float* y, int64_t ys) {
  for (int c = 0; c < np; ++c) {
    const int cols = ncol - c * kPanelRows;
    const uint8_t* p = Paired ? panels : panels + c * pb;
    const int64_t s = Paired ? c : sb;
    for (int i = 0; i < nx; i += 2) {
      if (nx - i >= 2)
        Rows<2>::run(nb, p, s, cols, x + i * xs, xs, y + i * ys + c * kPanelRows, ys);
      else
        Rows<1>::run(nb, p, s, cols, x + i * xs, xs, y + i * ys + c * kPanelRows, ys);
    }
  }
}

const PanelKernels kTable = {dispatch<Q8_0Rows, true>,   dispatch<Q4_0Rows, true>,   dispatch<Q4_KRows>,  dispatch<Q6_KRows, true>,
                             dispatch<Q5_KRows>,   dispatch<IQ4_NLRows>, dispatch<IQ4_XSRows>,
                             dispatch<Legacy<Kind32::kQ4_1>::Rows>, dispatch<Legacy<Kind32::kQ5_0>::Rows>,
                             dispatch<Legacy<Kind32::kQ5_1>::Rows>, dispatch<Q2_KRows>, dispatch<Q3_KRows>};

}  // namespace

const PanelKernels* panel_kernels_neon() { return &kTable; }

}  // namespace ork::ops
#pragma GCC pop_options
#else
namespace ork::ops {
const PanelKernels* panel_kernels_neon() { return nullptr; }
}  // namespace ork::ops
#endif
