#include "ops/activation.h"

#include <cmath>

namespace ork::ops {

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void geglu(const float* gate, const float* up, int64_t n, float* out) {
  constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
  constexpr float kCoef = 0.044715f;
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = 0.5f * g * (1.0f + std::tanh(kSqrt2OverPi * g * (1.0f + kCoef * g * g))) * up[i];
  }
}

void glu(Glu kind, const float* gate, const float* up, int64_t n, float* out) {
  kind == Glu::kGeglu ? geglu(gate, up, n, out) : swiglu(gate, up, n, out);
}

}  // namespace ork::ops
