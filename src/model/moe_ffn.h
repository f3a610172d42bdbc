// model::MoeFfn — the feed-forward branch of a mixture-of-experts layer (qwen2moe, qwen3moe,
// Mixtral-style llama), as llama.cpp's build_moe_ffn (src/llama-graph.cpp) and qwen2moe's shared
// expert (src/models/qwen2moe.cpp) compute it. For h [n][n_embd] (the ffn_norm output):
//   logits = h·Routerᵀ (f32, on the CPU: the exact ops::matmul on the f32-decoded ffn_gate_inp,
//            whatever the backend: quantizing the router would flip near-tied top-k choices, and
//            llama.cpp's quantized files keep ffn_gate_inp in f32)
//   per token: experts e_1..e_k and weights w_1..w_k = ops::moe_route(logits)
//   out[t] = Σ_j w_j · down_e((SiLU(h[t]·gate_eᵀ) ⊙ h[t]·up_eᵀ))          (e = e_j)
//   qwen2moe: out[t] += sigmoid(h[t]·shexp_gate_inp) · down_sh(SiLU(h·gate_shᵀ) ⊙ h·up_shᵀ)
// Only the selected experts run, batched by expert: the tokens routed to expert e are gathered into
// one matrix, its gate/up go to the backend as one group and its down as one matmul, and the rows
// are scattered back, each added with its router weight. Before they run the backend is told which
// experts this layer uses and, in decode, which the next layer may use (ExpertPredictor's guess;
// MatmulBackend::expect_experts), so a streaming device loads those and no other expert. Expert matmuls go through the
// MatmulBackend (one expert slice = one Linear), so every GGUF type and device of the dense path
// runs them; row i of each product depends on its input row only, so a token's result does not
// depend on which other tokens share the batch.
// Ownership: references Config, the backend and the pool (must outlive it); owns its scratch.
// Thread-safety: one run() at a time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/thread_pool.h"
#include "model/config.h"
#include "model/expert_predictor.h"
#include "model/matmul_backend.h"
#include "model/weights.h"

namespace ork::model {

// What the MoE layers computed (counted by MoeFfn::run; see `ork run --stats`).
struct MoeStats {
  uint64_t layer_tokens = 0;  // Σ over MoE layer runs of the tokens routed (tokens × MoE layers)
  uint64_t expert_runs = 0;   // expert products run (each selected expert once per layer run)
  uint64_t expert_rows = 0;   // token rows they computed (layer_tokens × n_expert_used)
  uint64_t expert_bytes = 0;  // GGUF bytes of the expert (and shared-expert) weights those runs read
  // Decode steps (one token): ExpertPredictor's guesses of each layer's experts, made at the layer
  // before (n_expert_used slots; MatmulBackend::expect_experts: a streaming backend loads them), against
  // what the router chose.
  ExpertPredictionStats prediction;
};

class MoeFfn {
 public:
  MoeFfn(const Config& config, MatmulBackend& backend, ThreadPool& pool);

  // The branch of layer `l` for h [n][n_embd]; returns out [n][n_embd], valid until the next run().
  // Throws ork::Error when h holds NaN/Inf (naming the layer's router), like the dense linears.
  // il: the layer's index (for the predictor, which also learns from every run's routing).
  const float* run(int64_t il, const LayerWeights& l, const float* h, int64_t n);

  const MoeStats& stats() const;

  // The routing of the last run(): [n][n_expert_used] expert indices (descending weight per token).
  std::span<const int32_t> last_experts() const { return sel_; }

  // Scratch bytes for a batch of n tokens.
  uint64_t scratch_bytes(int64_t n) const;

 private:
  void ensure(int64_t n);
  const Config& c_;
  MatmulBackend& backend_;
  ThreadPool& pool_;
  std::vector<float> logits_;    // [n][n_expert]
  std::vector<int32_t> sel_;     // [n][k] chosen experts
  std::vector<float> wts_;       // [n][k] their weights
  std::vector<int32_t> rows_;    // token rows grouped by expert (counting sort of sel_)
  std::vector<int32_t> slots_;   // for rows_[i]: its slot j (the weight wts_[row·k + j])
  std::vector<int32_t> start_;   // [n_expert + 1] where each expert's rows begin in rows_
  std::vector<float> xg_, gate_, up_, act_, yg_;  // gathered rows of one expert (or the shared expert)
  std::vector<float> sh_logit_;  // [n] the shared expert's gate input
  std::vector<float> out_;       // [n][n_embd]
  ExpertPredictor predictor_;
  std::vector<int32_t> prev_sel_;  // the previous run's sel_ (layer prev_il_, prev_n_ tokens)
  int64_t prev_il_ = -1, prev_n_ = 0;
  std::vector<int32_t> next_guess_;  // decode: the guess for layer next_guess_layer_ (-1: none)
  int64_t next_guess_layer_ = -1;
  mutable MoeStats stats_;
};

}  // namespace ork::model
