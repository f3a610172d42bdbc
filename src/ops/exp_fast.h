// exp_fast on eight f32 lanes — the numerics activation_fast.h documents — and the lane helpers
// around it, for functions built with ORK_VECTOR_CLONES (cpu_features.h): every operation is the
// per-lane IEEE one (no FMA contraction: the build passes -ffp-contract=off), so a lane's value does
// not depend on the ISA a clone was compiled for. Everything here is always inlined into its caller,
// so it is compiled for the caller's clone. Thread-safety: pure.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

// V8 values cross only always_inline helpers, never a call: GCC's note that a 32-byte vector argument
// has no fixed ABI without AVX (-Wpsabi) does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ork::ops::lanes {

// Eight lanes (GCC vector extension: one AVX2 register in the AVX2 clone, two SSE or NEON registers
// otherwise).
typedef float V8 __attribute__((vector_size(32)));
typedef int32_t I8 __attribute__((vector_size(32)));
inline constexpr int kLanes = 8;

[[gnu::always_inline]] inline V8 splat(float f) { return V8{f, f, f, f, f, f, f, f}; }

[[gnu::always_inline]] inline V8 load(const float* p) {
  V8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store(float* p, V8 v) { std::memcpy(p, &v, sizeof v); }

// x clamped to [−87, 88], split as n·ln 2 + r (n = round(x / ln 2), |r| <= ln 2 / 2, ln 2 in two
// parts so n·ln 2 is exact), e^r by its degree-6 Taylor polynomial in Horner form, times 2^n built in
// the exponent bits. Relative error below 4e-7 over the clamp range (tests/ops/activation_fast_test.cpp).
[[gnu::always_inline]] inline V8 exp_fast(V8 x) {
  const float kLog2e = 1.44269504088896341f;
  const float kLn2Hi = 0.693359375f;     // 8 significant bits: n · kLn2Hi is exact for |n| <= 2^15
  const float kLn2Lo = -2.12194440e-4f;  // ln 2 − kLn2Hi
  const V8 kRound = splat(12582912.0f);  // 1.5 · 2^23: adding it rounds to an integer
  x = x < splat(-87.0f) ? splat(-87.0f) : x;
  x = x > splat(88.0f) ? splat(88.0f) : x;
  const V8 t = x * kLog2e + kRound;
  const V8 n = t - kRound;                          // round(x / ln 2), in [−126, 127]
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

}  // namespace ork::ops::lanes
