// Rotary position embedding (RoPE).
#pragma once

#include <cstdint>

namespace ork::ops {

// Which dimensions form a rotated pair.
enum class RopeMode {
  kNormal,  // (2i, 2i+1) — llama (GGML_ROPE_TYPE_NORMAL)
  kNeox,    // (i, i + n_rot/2) — qwen2, qwen3, gpt-neox (GGML_ROPE_TYPE_NEOX)
};

// Rotates, in place, n_heads heads of head_dim floats laid out contiguously ([n_heads][head_dim]) for
// position `pos`. Only the first n_rot dims of each head are rotated; dims n_rot..head_dim-1 are left
// unchanged. Pair i (0 <= i < n_rot/2) is rotated by angle θ_i:
//   (a, b) -> (a·cos θ_i − b·sin θ_i,  a·sin θ_i + b·cos θ_i).
// Angles are computed in f32 exactly as ggml's CPU rope (ggml_rope_cache_init + rope_yarn without
// YaRN): t_0 = float(pos); t_{i+1} = t_i · s with s = powf(freq_base, -2.0f / n_rot);
// θ_i = freq_scale · (t_i / ff_i); cos/sin by cosf/sinf. Mathematically
// θ_i = pos·freq_scale·base^(−2i/n_rot) / ff_i.
// freq_factors: null (every ff_i = 1: bit-identical to no factors) or ff_0..ff_{n_rot/2−1}, one per
// rotated pair whichever the mode (Llama 3.1's rope_freqs.weight, ggml_rope_ext's tensor c); each
// must be finite and > 0. Not retained.
// Requires n_heads >= 0, head_dim >= 1, 0 < n_rot <= head_dim, n_rot even, pos >= 0, freq_base > 0
// (ork::Error naming the value otherwise). Thread-safety: pure.
void rope(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, int64_t pos, float freq_base,
          float freq_scale, RopeMode mode, const float* freq_factors = nullptr);

// The rotation step of rope() and rope_ext(): rotates pair i of each of n_heads heads (head_dim
// floats apart, pairs chosen by `mode`) by cs[2i] = cos θ_i, cs[2i+1] = sin θ_i, i < half.
void rope_rotate(float* x, int64_t n_heads, int64_t head_dim, int64_t half, RopeMode mode, const float* cs);

}  // namespace ork::ops
