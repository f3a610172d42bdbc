// The portable reference kernels of qkernels.h (Isa::kScalar).
#include <cstring>

#include "core/fp16.h"
#include "ops/qkernels.h"
#include "ops/vec.h"

namespace ork::ops {
namespace {

using quant::BlockQ4_0;
using quant::BlockQ4_K;
using quant::BlockQ6_K;
using quant::BlockQ8_0;
using quant::BlockQ8_K;

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Σ_blocks f32(d_w·d_x) · f32(exact integer block dot), accumulated in f32 in ascending blocks.
float dot_q8_0(int64_t nb, const uint8_t* w, const uint8_t* x) {
  float acc = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    const auto wb = load<BlockQ8_0>(w + b * sizeof(BlockQ8_0));
    const auto xb = load<BlockQ8A>(x + b * sizeof(BlockQ8A));
    int32_t s = 0;
    for (int i = 0; i < quant::kQK; ++i) s += int32_t(wb.qs[i]) * xb.qs[i];
    acc += f16_to_f32(wb.d) * xb.d * float(s);
  }
  return acc;
}

float dot_q4_0(int64_t nb, const uint8_t* w, const uint8_t* x) {
  float acc = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    const auto wb = load<BlockQ4_0>(w + b * sizeof(BlockQ4_0));
    const auto xb = load<BlockQ8A>(x + b * sizeof(BlockQ8A));
    int32_t s = 0;
    for (int i = 0; i < quant::kQK / 2; ++i) {
      s += int32_t(wb.qs[i] & 15) * xb.qs[i];
      s += int32_t(wb.qs[i] >> 4) * xb.qs[i + 16];
    }
    s -= 8 * xb.sum;
    acc += f16_to_f32(wb.d) * xb.d * float(s);
  }
  return acc;
}

// 6-bit scale and min of sub-block j of a Q4_K/Q5_K super-block (layout in quant/blocks.h).
void k_scale_min(const uint8_t* s, int j, int& sc, int& m) {
  if (j < 4) {
    sc = s[j] & 63;
    m = s[j + 4] & 63;
  } else {
    sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
    m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

float dot_q4_k(int64_t nb, const uint8_t* w, const uint8_t* x) {
  float acc = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    const auto wb = load<BlockQ4_K>(w + b * sizeof(BlockQ4_K));  // GGUF data may be unaligned
    const auto* xb = reinterpret_cast<const BlockQ8_K*>(x + b * sizeof(BlockQ8_K));
    const uint8_t* scales = wb.scales;
    int32_t sumi = 0, summ = 0;
    for (int p = 0; p < 4; ++p) {
      int32_t lo = 0, hi = 0;
      for (int l = 0; l < 32; ++l) {
        const uint8_t q = wb.qs[32 * p + l];
        lo += int32_t(q & 15) * xb->qs[64 * p + l];
        hi += int32_t(q >> 4) * xb->qs[64 * p + 32 + l];
      }
      int sc0, m0, sc1, m1;
      k_scale_min(scales, 2 * p, sc0, m0);
      k_scale_min(scales, 2 * p + 1, sc1, m1);
      sumi += sc0 * lo + sc1 * hi;
      summ += m0 * (xb->bsums[4 * p] + xb->bsums[4 * p + 1]) +
              m1 * (xb->bsums[4 * p + 2] + xb->bsums[4 * p + 3]);
    }
    const float d = xb->d * f16_to_f32(wb.d);
    const float dmin = xb->d * f16_to_f32(wb.dmin);
    acc += d * float(sumi) - dmin * float(summ);
  }
  return acc;
}

float dot_q6_k(int64_t nb, const uint8_t* w, const uint8_t* x) {
  float acc = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    const auto wb = load<BlockQ6_K>(w + b * sizeof(BlockQ6_K));
    const auto* xb = reinterpret_cast<const BlockQ8_K*>(x + b * sizeof(BlockQ8_K));
    int32_t sumi = 0;
    for (int h = 0; h < 2; ++h)
      for (int g = 0; g < 4; ++g)
        for (int half = 0; half < 2; ++half) {
          int32_t s = 0;
          for (int l = 16 * half; l < 16 * half + 16; ++l) {
            const int low = (wb.ql[64 * h + 32 * (g % 2) + l] >> (4 * (g / 2))) & 15;
            const int high = (wb.qh[32 * h + l] >> (2 * g)) & 3;
            s += (low | high << 4) * xb->qs[128 * h + 32 * g + l];
          }
          const int j = 8 * h + 2 * g + half;  // sub-block of 16
          sumi += int32_t(wb.scales[j]) * (s - 32 * xb->bsums[j]);
        }
    acc += xb->d * f16_to_f32(wb.d) * float(sumi);
  }
  return acc;
}

// fp16 row decoded in chunks, then vec::dot's lane layout (bit-identical to decode + vec::dot).
float dot_f16(int64_t n, const uint8_t* w, const uint8_t* x) {
  const auto* xf = reinterpret_cast<const float*>(x);
  float acc[vec::kLanes] = {};
  int64_t i = 0;
  for (; i + vec::kLanes <= n; i += vec::kLanes)
    for (int l = 0; l < vec::kLanes; ++l)
      acc[l] += f16_to_f32(load<uint16_t>(w + 2 * (i + l))) * xf[i + l];
  for (int l = 0; i + l < n; ++l) acc[l] += f16_to_f32(load<uint16_t>(w + 2 * (i + l))) * xf[i + l];
  return vec::reduce_lanes(acc);
}

template <float (*Dot)(int64_t, const uint8_t*, const uint8_t*)>
void tile(int64_t nb, const uint8_t* w, int64_t ws, int nw, const uint8_t* x, int64_t xs, int nx,
          float* y, int64_t ys) {
  for (int i = 0; i < nx; ++i)
    for (int j = 0; j < nw; ++j) y[i * ys + j] = Dot(nb, w + j * ws, x + i * xs);
}

int32_t dot_i8(const int8_t* a, const int8_t* b, int64_t k) {
  int32_t s = 0;
  for (int64_t i = 0; i < k; ++i) s += int32_t(a[i]) * int32_t(b[i]);
  return s;
}

const QKernels kScalar = {tile<dot_q8_0>, tile<dot_q4_0>, tile<dot_q4_k>, tile<dot_q6_k>,
                          tile<dot_f16>, dot_i8};

}  // namespace

const QKernels* qkernels_scalar() { return &kScalar; }

}  // namespace ork::ops
