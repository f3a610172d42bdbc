// Gated activations.
#pragma once

#include <cstdint>

namespace ork::ops {

// out[i] = silu(gate[i]) · up[i] with silu(g) = g / (1 + expf(−g)), for i < n (n >= 0).
// out may be gate or up (in place) but must not partially overlap them. Thread-safety: pure.
void swiglu(const float* gate, const float* up, int64_t n, float* out);

// out[i] = gelu(gate[i]) · up[i] with ggml's tanh approximation
//   gelu(g) = 0.5·g·(1 + tanhf(sqrt(2/π)·g·(1 + 0.044715·g²)))
// (ggml_gelu; Gemma's GeGLU, llama.cpp's LLM_FFN_GELU + LLM_FFN_PAR). Same aliasing rules as swiglu.
// Thread-safety: pure.
void geglu(const float* gate, const float* up, int64_t n, float* out);

// Which gated activation an FFN applies (Config::geglu).
enum class Glu { kSwiglu, kGeglu };
// swiglu or geglu, as `kind` says; same contract.
void glu(Glu kind, const float* gate, const float* up, int64_t n, float* out);

}  // namespace ork::ops
