// RoPE with ggml's full rope_ext parameters: YaRN's ramp between interpolated and extrapolated
// angles and a magnitude scale on cos/sin (YaRN's and LongRoPE's attention factor).
#pragma once

#include <cstdint>

#include "ops/rope.h"

namespace ork::ops {

struct RopeExt {
  float ext_factor = 0.0f;   // YaRN extrapolation mix (llama.cpp: 1 for rope.scaling.type yarn, else 0)
  float attn_factor = 1.0f;  // cos/sin multiplier before YaRN's own 1 + 0.1·ln(1/freq_scale)
  int64_t n_ctx_orig = 0;    // context the model was trained with before scaling (> 0)
  float beta_fast = 32.0f;   // YaRN correction range, in rotations over n_ctx_orig
  float beta_slow = 1.0f;
};

// ggml_rope_yarn_corr_dims: the pair range [dims[0], dims[1]] over which YaRN's ramp moves from
// extrapolation to interpolation, for n_rot rotated dims:
//   corr(β) = n_rot · ln(n_ctx_orig / (2π·β)) / (2·ln(base)); dims = {max(0, ⌊corr(β_fast)⌋),
//   min(n_rot − 1, ⌈corr(β_slow)⌉)}. In f32, as ggml.
void rope_yarn_corr_dims(int64_t n_rot, int64_t n_ctx_orig, float freq_base, float beta_fast, float beta_slow,
                         float dims[2]);

// As ops::rope, with ggml's rope_yarn per pair i (i0 = 2i):
//   θ_extrap = t_i / ff_i (t_i as in ops::rope), θ_interp = freq_scale · θ_extrap;
//   ext_factor == 0: θ = θ_interp, m = attn_factor;
//   else ramp = 1 − clamp((i − dims[0]) / max(0.001, dims[1] − dims[0]), 0, 1),
//        mix = ramp · ext_factor, θ = θ_interp·(1 − mix) + θ_extrap·mix,
//        m = attn_factor · (1 + 0.1·ln(1/freq_scale));
//   (a, b) → (a·m·cos θ − b·m·sin θ, a·m·sin θ + b·m·cos θ).
// With ext_factor 0 and attn_factor 1 the result is bit-identical to ops::rope. Same requirements
// as ops::rope, plus finite ext_factor, attn_factor > 0 and n_ctx_orig > 0 when ext_factor != 0
// (ork::Error otherwise). Thread-safety: pure.
void rope_ext(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, int64_t pos, float freq_base,
              float freq_scale, RopeMode mode, const float* freq_factors, const RopeExt& ext);

}  // namespace ork::ops
