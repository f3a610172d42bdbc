#include "ops/activation_fast.h"

#include <cstring>

#include "ops/cpu_features.h"
#include "ops/exp_fast.h"

namespace ork::ops {
namespace {

using lanes::exp_fast;
using lanes::kLanes;
using lanes::load;
using lanes::store;
using lanes::V8;

// out = f(gate, up) over n values, 8 at a time; the last partial group goes through the same vector
// code on a padded copy, so every element gets the same operations wherever it sits.
template <typename F>
__attribute__((always_inline)) inline void map8(const float* gate, const float* up, int64_t n, float* out, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(out + i, f(load(gate + i), load(up + i)));
  if (i < n) {
    float g[kLanes] = {}, u[kLanes] = {}, o[kLanes];
    std::memcpy(g, gate + i, size_t(n - i) * sizeof(float));
    std::memcpy(u, up + i, size_t(n - i) * sizeof(float));
    store(o, f(load(g), load(u)));
    std::memcpy(out + i, o, size_t(n - i) * sizeof(float));
  }
}

}  // namespace

ORK_VECTOR_CLONES void swiglu_fast(const float* gate, const float* up, int64_t n, float* out) {
  map8(gate, up, n, out, [](V8 g, V8 u) __attribute__((always_inline)) { return g / (1.0f + exp_fast(-g)) * u; });
}

ORK_VECTOR_CLONES void geglu_fast(const float* gate, const float* up, int64_t n, float* out) {
  map8(gate, up, n, out, [](V8 g, V8 u) __attribute__((always_inline)) {
    const float kSqrt2OverPi = 0.79788456080286535587989211986876f;
    const float kCoef = 0.044715f;
    const V8 y = kSqrt2OverPi * g * (1.0f + kCoef * g * g);
    return g / (1.0f + exp_fast(-2.0f * y)) * u;
  });
}

void glu_fast(Glu kind, const float* gate, const float* up, int64_t n, float* out) {
  kind == Glu::kGeglu ? geglu_fast(gate, up, n, out) : swiglu_fast(gate, up, n, out);
}

}  // namespace ork::ops
