// RMS normalization.
#pragma once

#include <cstdint>

namespace ork::ops {

// y[i] = (x[i] · s) · weight[i] with s = 1 / sqrtf(mean + eps), mean = Σ x[j]² / n.
//   x, y: n >= 1 floats; y may be x (in place) but must not partially overlap it.
//   weight: n floats, or null for no scale (y = x · s).
// Numerics as ggml's rms_norm: squares in f32, summed in double (4 lanes), mean rounded to f32,
// s = 1.0f / sqrtf(mean + eps). ork::Error when n < 1. Thread-safety: pure.
void rmsnorm(const float* x, const float* weight, int64_t n, float eps, float* y);

}  // namespace ork::ops
