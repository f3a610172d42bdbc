// Inline f32 vector helpers shared by the CPU kernels (internal to src/ops/).
//
// Every reduction here uses a fixed lane layout and a fixed reduction tree, so its result depends
// only on the inputs (never on threads, tiling or the call site): element i is accumulated into lane
// i % kLanes in ascending order, then the lanes are summed pairwise (0+4, 1+5, ... then 0+2, 1+3,
// then 0+1). The inner loops are contiguous with no aliasing so the compiler vectorizes them.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

namespace ork::ops::vec {

inline constexpr int kLanes = 8;

// Sums kLanes partial sums with the fixed pairwise tree described above.
inline float reduce_lanes(const float* acc) {
  float t[kLanes];
  for (int l = 0; l < kLanes; ++l) t[l] = acc[l];
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) t[l] += t[l + w];
  return t[0];
}

// Σ a[i]·b[i] over i < n (f32 products, f32 accumulation in kLanes lanes).
inline float dot(const float* __restrict a, const float* __restrict b, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += a[i + l] * b[i + l];
  for (int l = 0; i + l < n; ++l) acc[l] += a[i + l] * b[i + l];
  return reduce_lanes(acc);
}

// Four dot products of one vector x against rows w0..w3, each bit-identical to dot(x, wr, n):
// the same lanes and order per output, only the loads of x are shared.
inline void dot4(const float* __restrict x, const float* __restrict w0, const float* __restrict w1,
                 const float* __restrict w2, const float* __restrict w3, int64_t n, float* out) {
  float a0[kLanes] = {}, a1[kLanes] = {}, a2[kLanes] = {}, a3[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      const float xv = x[i + l];
      a0[l] += xv * w0[i + l];
      a1[l] += xv * w1[i + l];
      a2[l] += xv * w2[i + l];
      a3[l] += xv * w3[i + l];
    }
  }
  for (int l = 0; i + l < n; ++l) {
    const float xv = x[i + l];
    a0[l] += xv * w0[i + l];
    a1[l] += xv * w1[i + l];
    a2[l] += xv * w2[i + l];
    a3[l] += xv * w3[i + l];
  }
  out[0] = reduce_lanes(a0);
  out[1] = reduce_lanes(a1);
  out[2] = reduce_lanes(a2);
  out[3] = reduce_lanes(a3);
}

// y[i] += a·x[i] for i < n.
inline void axpy(float a, const float* __restrict x, float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

// The attention's arithmetic (attention.h): dot's lanes and tree with each product added by a fused
// multiply-add (one rounding: the same bits on every ISA), and y[i] = fma(a, x[i], y[i]). Always
// inlined, so they are compiled for the clone of their caller (cpu_features.h, ORK_FMA_CLONES).
[[gnu::always_inline]] inline float dot_fma(const float* __restrict a, const float* __restrict b, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] = __builtin_fmaf(a[i + l], b[i + l], acc[l]);
  for (int l = 0; i + l < n; ++l) acc[l] = __builtin_fmaf(a[i + l], b[i + l], acc[l]);
  return reduce_lanes(acc);
}
[[gnu::always_inline]] inline void axpy_fma(float a, const float* __restrict x, float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = __builtin_fmaf(a, x[i], y[i]);
}

}  // namespace ork::ops::vec
