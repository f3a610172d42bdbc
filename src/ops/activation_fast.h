// Gated activations for the fast CPU path (MatmulMode::kFast): swiglu / geglu with a vectorizable
// exp in place of the C library's expf, as llama.cpp's CPU backend does (ggml_v_expf).
//
// exp_fast(x): x clamped to [−87, 88], split as n·ln 2 + r (n = round(x / ln 2), |r| <= ln 2 / 2,
// ln 2 in two parts so n·ln 2 is exact), e^r by its degree-6 Taylor polynomial in Horner form, times
// 2^n built in the exponent bits. Relative error below 4e-7 (about 3 ulp) over the clamp range; the
// result is the same on every ISA (no FMA contraction: the project builds with -ffp-contract=off).
//
//   swiglu_fast: out = g / (1 + exp_fast(−g)) · up
//   geglu_fast:  out = g / (1 + exp_fast(−2y)) · up with y = sqrt(2/π)·g·(1 + 0.044715·g²), i.e.
//                0.5·g·(1 + tanh y) written as g·σ(2y), which has no cancellation near y = 0.
// Each within 1e-6 relative (plus 1e-7 absolute) of the exact functions of activation.h
// (tests/ops/activation_fast_test.cpp). Same aliasing rules as activation.h. Thread-safety: pure.
#pragma once

#include <cstdint>

#include "ops/activation.h"

namespace ork::ops {

void swiglu_fast(const float* gate, const float* up, int64_t n, float* out);
void geglu_fast(const float* gate, const float* up, int64_t n, float* out);
void glu_fast(Glu kind, const float* gate, const float* up, int64_t n, float* out);

}  // namespace ork::ops
