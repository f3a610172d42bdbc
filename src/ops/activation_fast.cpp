#include "ops/activation_fast.h"

#include <bit>
#include <cstring>

#include "ops/cpu_features.h"

// V8 values cross only always_inline helpers, never a call: GCC's note that a 32-byte vector argument
// has no fixed ABI without AVX (-Wpsabi) does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ork::ops {
namespace {

// Eight lanes (GCC vector extension: one AVX2 register in the AVX2 clone, two SSE or NEON registers
// otherwise); every operation is the per-lane IEEE one, so each lane's value does not depend on the ISA.
typedef float V8 __attribute__((vector_size(32)));
typedef int32_t I8 __attribute__((vector_size(32)));
constexpr int kLanes = 8;

__attribute__((always_inline)) inline V8 splat(float f) { return V8{f, f, f, f, f, f, f, f}; }

// exp_fast of activation_fast.h, per lane.
__attribute__((always_inline)) inline V8 exp_fast(V8 x) {
  const float kLog2e = 1.44269504088896341f;
  const float kLn2Hi = 0.693359375f;     // 8 significant bits: n · kLn2Hi is exact for |n| <= 2^15
  const float kLn2Lo = -2.12194440e-4f;  // ln 2 − kLn2Hi
  const V8 kRound = splat(12582912.0f);  // 1.5 · 2^23: adding it rounds to an integer
  x = x < splat(-87.0f) ? splat(-87.0f) : x;
  x = x > splat(88.0f) ? splat(88.0f) : x;
  const V8 t = x * kLog2e + kRound;
  const V8 n = t - kRound;                                // round(x / ln 2), in [−126, 127]
  const I8 ni = std::bit_cast<I8>(t) - 0x4B400000;  // the same n (the low bits of t)
  const V8 r = (x - n * kLn2Hi) - n * kLn2Lo;
  V8 p = splat(1.0f / 720.0f);
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const I8 sb = (ni + 127) << 23;
  return p * std::bit_cast<V8>(sb);
}

__attribute__((always_inline)) inline V8 load(const float* p) {
  V8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
__attribute__((always_inline)) inline void store(float* p, V8 v) { std::memcpy(p, &v, sizeof v); }

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
