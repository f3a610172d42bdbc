// Gated activations.
#pragma once

#include <cstdint>

namespace ork::ops {

// out[i] = silu(gate[i]) · up[i] with silu(g) = g / (1 + expf(−g)), for i < n (n >= 0).
// out may be gate or up (in place) but must not partially overlap them. Thread-safety: pure.
void swiglu(const float* gate, const float* up, int64_t n, float* out);

}  // namespace ork::ops
