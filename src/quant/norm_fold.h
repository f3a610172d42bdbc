// Folding an RMSNorm weight into the int4 linears it feeds (the int4 paths' smoothing).
//
// A linear whose input is x = n ⊙ g (n the normalized row, g the norm weight, model::Linear::in_norm)
// computes x · Wᵀ = (x ⊘ s) · (W diag(s))ᵀ for any positive per-channel s, exactly in real arithmetic.
// With s = |g| the activation that is quantized is the normalized row itself (±n) and the weight
// columns carry the norm's scale — so outlier channels made by the norm weight leave the
// activations (where one int4 or int8 scale per token would spend its range on them) and go into
// the weights, whose block-Hadamard rotation and per-row scale absorb them (QuaRot, arXiv:2404.00456,
// fuses the norm weights into the next linears the same way). s_j = |g_j|, or 1 where g_j is 0 or
// not finite (a zero g_j makes x_j zero: the weight column's scale does not matter).
// The int4 paths fold (weights/packed_int4.h packs W diag(s); runtime::ActivationSource::unfold_norm
// divides the rows); int8 does not (its rotation alone met the accuracy target, docs/quant.md).
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <vector>

namespace ork::quant {

// s for one norm weight entry (see above).
float norm_fold_factor(float g);
// w[j] *= s(g[j]) for j < k: one weight row with the norm folded in.
void fold_norm_into_row(float* w, const float* g, int64_t k);
// y[j] = x[j] / s(g[j]) for j < k: one row with the norm divided out (y may be x).
void unfold_norm_row(const float* x, int64_t k, const float* g, float* y);
// buf (m × k) = x with each row divided by s(g) element-wise; returns buf.data().
const float* unfold_norm_rows(const float* x, int64_t m, int64_t k, const float* g, std::vector<float>& buf);

}  // namespace ork::quant
