// Numerically stable softmax.
#pragma once

#include <cstdint>

namespace ork::ops {

// In place: x[i] = exp(x[i] − max) / Σ_j exp(x[j] − max), n >= 1 (ork::Error otherwise).
// Numerics: exp as activation_fast.h's exp_fast (ops/exp_fast.h: a vectorized exp, as ggml's soft_max
// uses ggml_v_expf; within 4e-7 of expf) of x[i] − max in f32; the sum in double over eight lanes
// (element i into lane i mod 8, ascending) added as ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7));
// then every element multiplied by float(1 / sum). The same bits on every ISA. Entries equal to −inf
// become 0; at least one entry must be finite for a meaningful result. Thread-safety: pure.
void softmax(float* x, int64_t n);

}  // namespace ork::ops
