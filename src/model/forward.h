// Forward — the decoder forward pass (llama, qwen2, qwen3, gemma2, gemma3, phi3) over a batch of tokens,
// as llama.cpp computes each (src/models/<arch>.cpp).
//
// x = token embeddings (· sqrtf(n_embd) for gemma). For each layer, with x the residual stream
// [n_tokens][n_embd]:
//   h = RMSNorm(x) ⊙ attn_norm
//   q = h·Wqᵀ (+bq), k = h·Wkᵀ (+bk), v = h·Wvᵀ (+bv)        (qwen2 has the biases)
//   (phi3: q, k, v are row ranges of the fused attn_qkv.weight)
//   q, k per head: RMSNorm ⊙ q_norm / k_norm                   (qwen3, gemma3)
//   q, k ← RoPE at their positions (normal pairs for llama, NeoX halves for the others) with the
//          layer's base and scale (gemma: sliding-window layers have their own), each pair's
//          angle divided by its factor when the model has one (rope_freqs.weight of Llama 3.1/3.2;
//          phi3's rope_factors_long/short, long when the cache holds more than n_ctx_orig), and
//          cos/sin multiplied by rope.scaling.attn_factor
//   K/V cache ← k, v (rounded to the cache's type, read back as f32);  a = causal GQA
//          attention(q, cache) with the query scale, gemma2's score
//          soft-cap c·tanh(s/c), and on sliding-window layers only the last n_swa keys
//   x += post(a·Woᵀ)          post = RMSNorm ⊙ post_attention_norm for gemma, else identity
//   h = RMSNorm(x) ⊙ ffn_norm;  x += post((act(h·Wgateᵀ) ⊙ h·Wupᵀ)·Wdownᵀ)
//          act = SiLU, or GELU(tanh) for gemma (post: post_ffw_norm); phi3's gate and up are the two
//          halves of ffn_up.weight; a MoE layer's FFN is model::MoeFfn (routed experts, qwen2moe's
//          shared expert) instead
// logits = (RMSNorm(x) ⊙ output_norm)·Woutputᵀ, then c·tanh(z/c) with the final soft-cap (gemma2).
// Every matmul goes through the MatmulBackend. Ownership: references Config, Weights, the backend
// and the pool (all must outlive it); owns its scratch. Thread-safety: one eval() at a time.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

#include "core/thread_pool.h"
#include "model/config.h"
#include "model/kv_cache.h"
#include "model/matmul_backend.h"
#include "model/moe_ffn.h"
#include "model/residual_norm.h"
#include "model/weights.h"

namespace ork::model {

class Forward {
 public:
  Forward(const Config& config, const Weights& weights, MatmulBackend& backend, ThreadPool& pool);

  // Evaluates tokens[0..n) at positions pos0..pos0+n-1; the cache must hold positions < pos0.
  // Writes logits [n_vocab] of the last token, or [n][n_vocab] of every token when all_logits.
  // Throws ork::Error for a token id outside the vocabulary or positions past the cache, and when a
  // NaN or Inf enters any linear layer or reaches the logits (on every backend alike).
  void eval(KvCache& cache, const int32_t* tokens, int64_t n, int64_t pos0, bool all_logits,
            float* logits);

  // The same pass from input embeddings embd [n][n_embd] (row-major f32) instead of token ids.
  // embd is read in place, not copied: the first layer's norm and residual add read it directly,
  // so it must stay valid and unchanged for the whole call (gemma2, which scales input embeddings,
  // copies them first). Throws ork::Error for a null embd or
  // positions past the cache.
  void eval_embd(KvCache& cache, const float* embd, int64_t n, int64_t pos0, bool all_logits,
                 float* logits);

  // The token-embedding lookup eval() starts with: out [n][n_embd] (f32) = rows of token_embd.
  // Throws ork::Error for a token id outside the vocabulary. Thread-safe (reads the weights only).
  static void embed_tokens(const Config& config, const Weights& weights, const int32_t* tokens,
                           int64_t n, float* out);

  // One sequence of a batch: n >= 1 tokens at positions pos0..pos0+n-1 of its own cache (which must
  // hold positions < pos0). The cache is borrowed for the call.
  struct Sequence {
    KvCache* cache = nullptr;
    int64_t pos0 = 0;
    int64_t n = 1;
  };

  // Several sequences in one pass (continuous batching): tokens holds each sequence's n tokens, one
  // sequence after another (Σn rows). Every linear runs once over all Σn rows; RoPE, the KV write and
  // attention run per sequence at its own positions over its own cache. Writes logits
  // [seqs.size()][n_vocab]: each sequence's last token. Each row's logits equal those of eval() on
  // that sequence alone when the backend's matmul gives row i of Y from row i of X only (every
  // backend of ork does: docs/serve.md). Throws like eval(); the caches must be distinct.
  void eval_batch(std::span<const Sequence> seqs, const int32_t* tokens, float* logits);

  // The MoE layers' counters (experts run, bytes read, the decode predictor's hits), or null for a
  // dense model. Valid while this Forward lives; not to be read during eval().
  const MoeStats* moe_stats() const { return moe_ ? &moe_->stats() : nullptr; }

  // Scratch bytes for a batch of n tokens (what eval allocates besides the KV cache).
  uint64_t scratch_bytes(int64_t n) const;
  // Bytes of the f32 copy of one layer's K and V rows that attention reads from an f16 or q8_0 cache
  // (grown to the longest sequence so far; at most 2 · n_ctx · kv_dim floats; 0 for an f32 cache).
  uint64_t kv_staging_bytes() const;

 private:
  void ensure_scratch(int64_t n);
  void check_positions(const KvCache& cache, int64_t n, int64_t pos0) const;
  // out_rows_ = the last row, or every row of n when all_logits.
  void set_out_rows(int64_t n, bool all_logits);
  // The layers and the output head over the rows of `seqs` (Σn = n); the residual stream enters as
  // `x0` [n][n_embd] (x_ or the caller's embeddings, read by layer 0 only) and lives in x_ from layer
  // 0's first residual add on. Logits of the rows out_rows_ names, in that order.
  void run(std::span<const Sequence> seqs, const float* x0, int64_t n, float* logits);
  void linear(const Linear& w, const float* x, int64_t n, float* y);
  // ork::Error (model::fail_non_finite) for a NaN/Inf in w's input x (n rows), unless the backend
  // checks its inputs itself.
  void check_input(const Linear& w, const float* x, int64_t n);
  // y[i] += w.bias for the n rows of y (n × w.n), when w has a bias.
  void add_bias_rows(const Linear& w, int64_t n, float* y);
  // The same for results possibly unscaled: when w has a bias, y is scaled in place first.
  void add_bias_rows(const Linear& w, int64_t n, UnscaledRows& y);
  // linear() for weights sharing the input x (equal k), handed to the backend as one group.
  void linear_group(std::initializer_list<const Linear*> ws, const float* x, int64_t n,
                    std::initializer_list<float*> ys);
  // Layer il over the rows of `in` (its Q/K/V input: layer 0's embeddings normed with attn_norm, or
  // the previous layer's pending FFN residual add normed so, done by the Q/K/V call); returns this
  // layer's pending FFN residual add, normed with the next layer's attn_norm (output_norm after the
  // last layer), for whoever reads it next.
  ResidualNorm layer(std::span<const Sequence> seqs, int64_t il, const ResidualNorm& in, int64_t n);
  // Layer il's per-sequence part for seq's rows [row0, row0 + seq.n) of q_/k_/v_ (as the backend
  // left them, qkv: possibly unscaled; without their biases): per row in one pass the scaling, the
  // Q/K/V biases, q/k norms and RoPE at the sequence's positions and the row's K/V into its cache;
  // then attention over that cache into attn_.
  void attend(const Sequence& seq, int64_t il, int64_t row0, const UnscaledRows (&qkv)[3]);
  // The residual add of `branch` (n_embd wide, over h_ or another scratch, never x_/x_alt_) into the
  // stream `base`, through RMSNorm ⊙ post_norm first when set, and the next input's RMSNorm ⊙ norm:
  // pending (model/residual_norm.h), written to whichever of x_, x_alt_ base is not; rows into h_.
  ResidualNorm residual(const float* base, const UnscaledRows& branch, const float* post_norm,
                        const float* norm);

  const Config& c_;
  const Weights& w_;
  MatmulBackend& backend_;
  ThreadPool& pool_;
  int64_t capacity_ = 0;  // tokens the scratch holds
  // Scratch, row-major [tokens][width].
  // x_, x_alt_: the residual stream, each residual add writing the one its base is not (so that
  // computing a pending add twice gives the same rows).
  std::vector<float> x_, x_alt_, h_, q_, k_, v_, attn_, gate_, up_, act_;
  std::vector<int64_t> out_rows_;  // the batch rows whose logits run() writes
  std::vector<float> kv_k_, kv_v_;  // [positions][kv_dim]: one layer's K, V widened from a non-f32 cache
  std::unique_ptr<MoeFfn> moe_;     // the FFN of MoE layers (Config::is_moe()), else null
};

}  // namespace ork::model
