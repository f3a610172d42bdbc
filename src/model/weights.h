// model::Weights — the tensors of a decoder model, bound by name and checked against Config.
//
// Matmul weights stay in the GGUF mapping (no copies); the small 1-D tensors (norm weights, biases)
// are decoded to f32 once and owned here. Fused tensors (phi3's attn_qkv.weight and its
// ffn_up.weight of 2·n_ff rows) are split into row-range views — gguf::TensorInfo records owned here
// that point into the mapping, named "<tensor>:q", ":k", ":v", ":gate", ":up" — so every backend and
// the NPU planner see the same seven linears per layer as for llama. Ownership: pointers into the gguf::File, which must outlive
// the Weights. Thread-safety: immutable after bind().
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
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
  // Placement group: the device planner keeps a group's weights in one IOMMU domain. A dense layer's
  // seven linears share one (its layer number); a MoE layer's attention (and shared expert) one, and
  // each expert's gate/up/down one of its own; the output weight its own. Groups ascend along
  // linears().
  int32_t group = -1;
  // [k]: the RMSNorm weight g the forward pass applies to this linear's input just before it
  // (input = rmsnorm(…) ⊙ g: Q/K/V, gate/up, the experts' and the shared expert's gate/up, the
  // output); null for the others. The int4 paths fold it into the weights (quant/norm_fold.h).
  const float* in_norm = nullptr;
  std::string_view name() const { return w->name; }
};

struct LayerWeights {
  const float* attn_norm = nullptr;  // [n_embd]
  Linear wq, wk, wv, wo;             // q: n_embd → q_dim; k, v: n_embd → kv_dim; o: q_dim → n_embd
  const float* q_norm = nullptr;     // [head_dim] (qwen3) or null
  const float* k_norm = nullptr;     // [head_dim] (qwen3) or null
  const float* ffn_norm = nullptr;   // [n_embd]
  Linear gate, up, down;             // gate, up: n_embd → n_ff; down: n_ff → n_embd
  const float* post_attn_norm = nullptr;  // [n_embd] (gemma) or null
  const float* post_ffn_norm = nullptr;   // [n_embd] (gemma) or null

  // Mixture of experts (Config::is_moe(); model/moe_weights.cpp binds them). gate/up/down above are
  // then unset: the layer's FFN is the routed experts (model/moe_ffn.h), plus the shared expert.
  const float* router = nullptr;          // [n_expert][n_embd] f32: ffn_gate_inp, decoded
  std::vector<Linear> exp_gate, exp_up;   // [n_expert]: n_embd → n_ff_exp, slices of ffn_{gate,up}_exps
  std::vector<Linear> exp_down;           // [n_expert]: n_ff_exp → n_embd, slices of ffn_down_exps
  Linear sh_gate, sh_up, sh_down;         // qwen2moe's shared expert (n_ff_shexp wide), else unset
  const float* sh_router = nullptr;       // [n_embd] ffn_gate_inp_shexp (qwen2moe), else null
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
  // Phi-3 LongRoPE factors [n_rot/2] (rope_factors_long.weight / rope_factors_short.weight, shared by
  // every layer), or null: llama.cpp takes the long ones when the context exceeds n_ctx_orig.
  const float* rope_long = nullptr;
  const float* rope_short = nullptr;
  // The per-pair factors for a context of n_ctx tokens: rope_freqs, else long/short as above, else null.
  const float* rope_factors(const Config& c, int64_t n_ctx) const {
    if (rope_freqs != nullptr) return rope_freqs;
    return n_ctx > c.n_ctx_orig ? rope_long : rope_short;
  }
  std::vector<LayerWeights> layers;

  // Every linear weight in forward-pass order (layer by layer: q, k, v, o, gate, up, down; a MoE
  // layer: q, k, v, o, the shared expert's gate, up, down, then expert 0's gate, up, down, expert
  // 1's, ...; then output). linears()[i]->index == i.
  const std::vector<const Linear*>& linears() const { return linears_; }

  Weights(const Weights&) = delete;  // linears() points into this object
  Weights& operator=(const Weights&) = delete;

 private:
  friend struct MoeBinder;  // model/moe_weights.cpp: binds a MoE layer's tensors into this object
  Weights() = default;
  std::vector<std::unique_ptr<std::vector<float>>> small_;  // decoded 1-D tensors
  std::vector<const Linear*> linears_;
  std::deque<std::string> view_names_;         // names of the row-range views (stable addresses)
  std::deque<gguf::TensorInfo> views_;         // row ranges of fused tensors, into the mapping
};

}  // namespace ork::model
