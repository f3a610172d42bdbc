// The Isa::kNeonDot panel kernels of qpanels.h (aarch64 with the dot-product extension, as the
// RK3588's Cortex-A76/A55): the panel quants back to signed bytes (Q8_0: XOR 0x80; Q4_0: nibble −
// 8), then sdot by element (four rows' four quants against four activation bytes chosen by lane).
// Per block and output lane: the exact int32 dot, one f32 multiply of the scales and one FMA — the
// reference's operations.
#include "ops/qpanels.h"

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

// Two activation rows (RX = 1 or 2) × one panel: 16 int32 + 16 f32 lanes per row.
template <bool Q4, int RX>
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
    if constexpr (Q4) {
      const uint8_t* u = panel + sb + b * 4 * kPanelGroupBytes;
      [&]<int... G>(std::integer_sequence<int, G...>) {
        (q4_group<G, RX>(u, xv, s), ...);
      }(std::make_integer_sequence<int, 4>());
    } else {
      const uint8_t* u = panel + sb + b * 8 * kPanelGroupBytes;
      [&]<int... G>(std::integer_sequence<int, G...>) {
        (q8_group<G, RX>(u, xv, s), ...);
      }(std::make_integer_sequence<int, 8>());
    }
    float32x4_t dw[4];
    const auto* dh = reinterpret_cast<const float16_t*>(panel + b * kPanelRows * 2);
    for (int q = 0; q < 4; ++q) dw[q] = vcvt_f32_f16(vld1_f16(dh + 4 * q));
    for (int i = 0; i < RX; ++i) {
      const auto* xb = reinterpret_cast<const BlockQ8A*>(x + i * xs) + b;
      const float32x4_t dx = vdupq_n_f32(xb->d);
      for (int q = 0; q < 4; ++q)
        acc[i][q] = vfmaq_f32(acc[i][q], vmulq_f32(dw[q], dx), vcvtq_f32_s32(s[i][q]));
    }
  }
  for (int i = 0; i < RX; ++i) {
    alignas(16) float out[kPanelRows];
    for (int q = 0; q < 4; ++q) vst1q_f32(out + 4 * q, acc[i][q]);
    std::memcpy(y + i * ys, out, sizeof(float) * size_t(ncol < kPanelRows ? ncol : kPanelRows));
  }
}

template <bool Q4>
void tile(int64_t nb, const uint8_t* panels, int64_t pb, int64_t sb, int np, int ncol,
          const uint8_t* x, int64_t xs, int nx, float* y, int64_t ys) {
  for (int c = 0; c < np; ++c) {
    const int cols = ncol - c * kPanelRows;
    for (int i = 0; i < nx; i += 2) {
      if (nx - i >= 2)
        panel_rows<Q4, 2>(nb, panels + c * pb, sb, cols, x + i * xs, xs, y + i * ys + c * kPanelRows, ys);
      else
        panel_rows<Q4, 1>(nb, panels + c * pb, sb, cols, x + i * xs, xs, y + i * ys + c * kPanelRows, ys);
    }
  }
}

const PanelKernels kTable = {tile<false>, tile<true>};

}  // namespace

const PanelKernels* panel_kernels_neon() { return &kTable; }

}  // namespace ork::ops
#pragma GCC pop_options
#else
namespace ork::ops {
const PanelKernels* panel_kernels_neon() { return nullptr; }
}  // namespace ork::ops
#endif
