// Reference encoders of the K formats (256-element super-blocks).
//
// "Min" formats (Q2_K: 16 x 16, q 0..3, 4-bit sc/m; Q4_K / Q5_K: 8 x 32, q 0..15 / 0..31, 6-bit
// sc/m), decoded as x = (d*sc)*q - (dmin*m):
//   per sub-block j: mn_j = min(0, min x), mx_j = max x;
//   dmin = max_j(-mn_j) / smax rounded up to fp16;  m_j = ceil(-mn_j / dmin)  (offset M_j >= -mn_j);
//   s_j = (mx_j + M_j) / nmax;  d = max_j s_j / smax rounded up to fp16;  sc_j = ceil(s_j / d);
//   q = round((x + M_j) / (d*sc_j)) in [0, nmax].
// Symmetric formats (Q3_K: 16 x 16, q -4..3, 6-bit sc; Q6_K: 16 x 16, q -32..31, int8 sc),
// decoded as x = (d*sc)*q: s_j = amax_j / (L - 1/2) for levels -L..L-1; d = max_j s_j / smax rounded
// up to fp16; sc_j = ceil(s_j / d); q = round(x / (d*sc_j)).
// Rounding scales up means no element needs clamping by more than half a step.
// Q8_K: d = amax / 127 in f32, q = round(x / d), bsums = sums of 16 quants.
#include <algorithm>
#include <cmath>
#include <cstring>

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

// ceil(v / d) clamped to [0, cap], for v >= 0 and d > 0 (0 when d is 0).
int ceil_ratio(float v, float d, int cap) {
  if (d == 0.0f) return 0;
  return clamp_int(int(std::ceil(v / d)), 0, cap);
}

// A super-block quantized in a "min" format: codes per element, per-sub-block scale and min codes.
struct MinQuants {
  uint16_t d = 0, dmin = 0;  // fp16 bits
  int sc[16] = {}, m[16] = {};
  int q[kQK_K] = {};
};

MinQuants quantize_min_format(const float* x, int sub_len, int nmax, int smax, const char* format,
                              int64_t block) {
  const int n_sub = kQK_K / sub_len;
  MinQuants r;
  float neg_min[16], max_v[16];
  float max_neg_min = 0.0f;
  for (int j = 0; j < n_sub; ++j) {
    const float* xs = x + j * sub_len;
    float mn = 0.0f, mx = xs[0];
    for (int l = 0; l < sub_len; ++l) {
      mn = std::min(mn, xs[l]);
      mx = std::max(mx, xs[l]);
    }
    neg_min[j] = -mn;
    max_v[j] = mx;
    max_neg_min = std::max(max_neg_min, -mn);
  }
  if (max_neg_min > 0.0f) r.dmin = detail::f16_ceil(max_neg_min / float(smax));
  detail::check_f16_scale(r.dmin, format, "dmin", block);
  const float dmin = f16_to_f32(r.dmin);

  float offset[16], step_wanted[16];
  float max_step = 0.0f;
  for (int j = 0; j < n_sub; ++j) {
    r.m[j] = ceil_ratio(neg_min[j], dmin, smax);
    offset[j] = dmin * float(r.m[j]);  // as the decoder forms it
    step_wanted[j] = std::max(0.0f, max_v[j] + offset[j]) / float(nmax);
    max_step = std::max(max_step, step_wanted[j]);
  }
  if (max_step > 0.0f) r.d = detail::f16_ceil(max_step / float(smax));
  detail::check_f16_scale(r.d, format, "d", block);
  const float d = f16_to_f32(r.d);

  for (int j = 0; j < n_sub; ++j) {
    r.sc[j] = ceil_ratio(step_wanted[j], d, smax);
    const float step = d * float(r.sc[j]);
    for (int l = 0; l < sub_len; ++l) {
      const int e = j * sub_len + l;
      r.q[e] = step == 0.0f ? 0 : clamp_int(round_away((x[e] + offset[j]) / step), 0, nmax);
    }
  }
  return r;
}

// A super-block of 16 sub-blocks of 16 in a symmetric format with levels -levels..levels-1.
struct SymQuants {
  uint16_t d = 0;  // fp16 bits
  int sc[16] = {};
  int q[kQK_K] = {};  // signed levels
};

SymQuants quantize_sym_format(const float* x, int levels, int smax, const char* format,
                              int64_t block) {
  SymQuants r;
  float step_wanted[16];
  float max_step = 0.0f;
  for (int j = 0; j < 16; ++j) {
    float amax = 0.0f;
    for (int l = 0; l < 16; ++l) amax = std::max(amax, std::fabs(x[16 * j + l]));
    step_wanted[j] = amax / (float(levels) - 0.5f);
    max_step = std::max(max_step, step_wanted[j]);
  }
  if (max_step > 0.0f) r.d = detail::f16_ceil(max_step / float(smax));
  detail::check_f16_scale(r.d, format, "d", block);
  const float d = f16_to_f32(r.d);
  for (int j = 0; j < 16; ++j) {
    r.sc[j] = ceil_ratio(step_wanted[j], d, smax);
    const float step = d * float(r.sc[j]);
    for (int l = 0; l < 16; ++l) {
      const int e = 16 * j + l;
      r.q[e] = step == 0.0f ? 0 : clamp_int(round_away(x[e] / step), -levels, levels - 1);
    }
  }
  return r;
}

// Q4_K / Q5_K 12-byte packing of 8 6-bit scales and mins (blocks.h).
void pack_scales_6bit(const int* sc, const int* m, uint8_t (&s)[kKScaleBytes]) {
  std::memset(s, 0, sizeof s);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      s[j] |= uint8_t(sc[j] & 63);
      s[j + 4] |= uint8_t(m[j] & 63);
    } else {
      s[j + 4] = uint8_t((sc[j] & 0x0f) | (m[j] & 0x0f) << 4);
      s[j - 4] |= uint8_t((sc[j] >> 4) << 6);
      s[j] |= uint8_t((m[j] >> 4) << 6);
    }
  }
}

}  // namespace

void quantize_q2_K(const float* src, void* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q2_K, n);
  detail::check_finite(src, n, "q2_K", 0);
  for (int64_t i = 0; i < nb; ++i) {
    const MinQuants r = quantize_min_format(src + i * kQK_K, 16, 3, 15, "q2_K", i);
    BlockQ2_K b{};
    b.d = r.d;
    b.dmin = r.dmin;
    for (int j = 0; j < 16; ++j) b.scales[j] = uint8_t(r.sc[j] | r.m[j] << 4);
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, g = (e % 128) / 32, l = e % 32;
      b.qs[32 * h + l] |= uint8_t(r.q[e] << (2 * g));
    }
    detail::store_block(dst, i, b);
  }
}

void quantize_q3_K(const float* src, void* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q3_K, n);
  detail::check_finite(src, n, "q3_K", 0);
  for (int64_t i = 0; i < nb; ++i) {
    const SymQuants r = quantize_sym_format(src + i * kQK_K, 4, 31, "q3_K", i);
    BlockQ3_K b{};
    b.d = r.d;
    int biased[16];
    for (int j = 0; j < 16; ++j) biased[j] = r.sc[j] + 32;  // stored biased by 32
    pack_q3_K_scales(biased, b.scales);
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, g = (e % 128) / 32, l = e % 32;
      const int u = r.q[e] + 4;  // 0..7: low 2 bits in qs, bit 2 in hmask
      b.qs[32 * h + l] |= uint8_t((u & 3) << (2 * g));
      if (u & 4) b.hmask[l] |= uint8_t(1u << (4 * h + g));
    }
    detail::store_block(dst, i, b);
  }
}

void quantize_q4_K(const float* src, void* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q4_K, n);
  detail::check_finite(src, n, "q4_K", 0);
  for (int64_t i = 0; i < nb; ++i) {
    const MinQuants r = quantize_min_format(src + i * kQK_K, 32, 15, 63, "q4_K", i);
    BlockQ4_K b{};
    b.d = r.d;
    b.dmin = r.dmin;
    pack_scales_6bit(r.sc, r.m, b.scales);
    for (int e = 0; e < kQK_K; ++e) {
      const int p = e / 64, u = (e % 64) / 32, l = e % 32;
      b.qs[32 * p + l] |= uint8_t(r.q[e] << (4 * u));
    }
    detail::store_block(dst, i, b);
  }
}

void quantize_q5_K(const float* src, void* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q5_K, n);
  detail::check_finite(src, n, "q5_K", 0);
  for (int64_t i = 0; i < nb; ++i) {
    const MinQuants r = quantize_min_format(src + i * kQK_K, 32, 31, 63, "q5_K", i);
    BlockQ5_K b{};
    b.d = r.d;
    b.dmin = r.dmin;
    pack_scales_6bit(r.sc, r.m, b.scales);
    for (int e = 0; e < kQK_K; ++e) {
      const int p = e / 64, u = (e % 64) / 32, l = e % 32;
      b.qs[32 * p + l] |= uint8_t((r.q[e] & 0x0f) << (4 * u));
      if (r.q[e] & 16) b.qh[l] |= uint8_t(1u << (2 * p + u));
    }
    detail::store_block(dst, i, b);
  }
}

void quantize_q6_K(const float* src, void* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q6_K, n);
  detail::check_finite(src, n, "q6_K", 0);
  for (int64_t i = 0; i < nb; ++i) {
    const SymQuants r = quantize_sym_format(src + i * kQK_K, 32, 127, "q6_K", i);
    BlockQ6_K b{};
    b.d = r.d;
    for (int j = 0; j < 16; ++j) b.scales[j] = int8_t(r.sc[j]);
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, g = (e % 128) / 32, l = e % 32;
      const int u = r.q[e] + 32;  // 0..63: low 4 bits in ql, high 2 bits in qh
      b.ql[64 * h + 32 * (g % 2) + l] |= uint8_t((u & 0x0f) << (4 * (g / 2)));
      b.qh[32 * h + l] |= uint8_t((u >> 4) << (2 * g));
    }
    detail::store_block(dst, i, b);
  }
}

void quantize_q8_K(const float* src, void* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q8_K, n);
  detail::check_finite(src, n, "q8_K", 0);
  for (int64_t i = 0; i < nb; ++i) {
    const float* x = src + i * kQK_K;
    float amax = 0.0f;
    for (int j = 0; j < kQK_K; ++j) amax = std::max(amax, std::fabs(x[j]));
    BlockQ8_K b{};
    b.d = amax / 127.0f;
    for (int j = 0; j < kQK_K; ++j) {
      b.qs[j] = int8_t(b.d == 0.0f ? 0 : clamp_int(round_away(x[j] / b.d), -127, 127));
    }
    for (int j = 0; j < kQK_K / 16; ++j) {
      int sum = 0;
      for (int l = 0; l < 16; ++l) sum += b.qs[16 * j + l];
      b.bsums[j] = int16_t(sum);
    }
    detail::store_block(dst, i, b);
  }
}

}  // namespace ork::quant
