// Numerically stable softmax.
#pragma once

#include <cstdint>

namespace ork::ops {

// In place: x[i] = exp(x[i] − max) / Σ_j exp(x[j] − max), n >= 1 (ork::Error otherwise).
// Numerics as ggml's soft_max: expf in f32, the sum accumulated in double in ascending order, then
// every element multiplied by float(1 / sum). Entries equal to −inf become 0; at least one entry must
// be finite for a meaningful result. Thread-safety: pure.
void softmax(float* x, int64_t n);

}  // namespace ork::ops
