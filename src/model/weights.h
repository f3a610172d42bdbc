// model::Weights — the tensors of a Llama-family model, bound by name and checked against Config.
//
// Matmul weights stay in the GGUF mapping (no copies); the small 1-D tensors (norm weights, biases)
// are decoded to f32 once and owned here. Ownership: pointers into the gguf::File, which must outlive
// the Weights. Thread-safety: immutable after bind().
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "gguf/file.h"
#include "model/config.h"

namespace ork::model {

// A linear layer's weight: N output rows of K inputs (GGUF dims {K, N}), y = x·Wᵀ (+ bias).
struct Linear {
  const gguf::TensorInfo* w = nullptr;
  const float* bias = nullptr;  // [n] or null
  int64_t k = 0;
  int64_t n = 0;
  int32_t index = -1;  // position of this weight in the forward pass's order (0, 1, ...)
  std::string_view name() const { return w->name; }
};

struct LayerWeights {
  const float* attn_norm = nullptr;  // [n_embd]
  Linear wq, wk, wv, wo;             // q: n_embd → q_dim; k, v: n_embd → kv_dim; o: q_dim → n_embd
  const float* q_norm = nullptr;     // [head_dim] (qwen3) or null
  const float* k_norm = nullptr;     // [head_dim] (qwen3) or null
  const float* ffn_norm = nullptr;   // [n_embd]
  Linear gate, up, down;             // gate, up: n_embd → n_ff; down: n_ff → n_embd
};

class Weights {
 public:
  // Binds every tensor the architecture needs, and rope_freqs.weight when present; throws ork::Error
  // naming the tensor when one is missing, has the wrong shape, or a type or values that cannot be
  // used there (rope_freqs.weight: f32 or f16, {n_rot/2}, finite and > 0; per-layer
  // blk.N.rope_freqs.weight is refused).
  static std::unique_ptr<Weights> bind(const gguf::File& file, const Config& config);

  const gguf::TensorInfo* token_embd = nullptr;  // {n_embd, n_vocab}
  const float* output_norm = nullptr;            // [n_embd]
  Linear output;                                 // n_embd → n_vocab (token_embd when tied)
  // RoPE frequency factors [n_rot/2] from rope_freqs.weight (Llama 3.1/3.2 "llama3" rope scaling),
  // shared by every layer; null when the file has none. Each is finite and > 0.
  const float* rope_freqs = nullptr;
  std::vector<LayerWeights> layers;

  // Every linear weight in forward-pass order (layer by layer: q, k, v, o, gate, up, down; then
  // output). linears()[i]->index == i.
  const std::vector<const Linear*>& linears() const { return linears_; }

  Weights(const Weights&) = delete;  // linears() points into this object
  Weights& operator=(const Weights&) = delete;

 private:
  Weights() = default;
  std::vector<std::unique_ptr<std::vector<float>>> small_;  // decoded 1-D tensors
  std::vector<const Linear*> linears_;
};

}  // namespace ork::model
