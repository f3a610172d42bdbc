// runtime::Context — one sequence being evaluated: its KV cache, its position and the forward
// pass's scratch. Borrows the Engine (must outlive it). Thread-safety: one thread at a time per
// Context; different Contexts of one Engine may eval concurrently (Engine::forward_mutex()).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/forward.h"
#include "model/kv_cache.h"
#include "runtime/engine.h"

namespace ork::runtime {

class BatchDecode;

class Context {
 public:
  // n_ctx: tokens the KV cache holds; 0 → the model's training context bounded by memory
  // (runtime::resolve_context: ork::Error with the numbers when the KV cache does not fit). The
  // cache's type is runtime::kv_type_of(engine.options()).
  Context(Engine& engine, int64_t n_ctx);

  int64_t n_ctx() const { return cache_.n_ctx(); }
  int64_t n_past() const { return n_past_; }
  int64_t n_vocab() const { return engine_.model().config().n_vocab; }
  model::KvType kv_type() const { return cache_.type(); }  // runtime::kv_type_of(engine options)
  Engine& engine() { return engine_; }

  // Evaluates `tokens` after the n_past() tokens already in the cache and returns the logits of the
  // last one ([n_vocab], valid until the next eval). Throws ork::Error when they do not fit. Every
  // eval runs the forward pass in chunks of at most EngineOptions::m_max tokens (the activations of
  // m_max rows, as the memory plan counts them); on an error n_past() stays as it was.
  const float* eval(const std::vector<int32_t>& tokens);
  // Like eval, but returns the logits of every token: [tokens.size()][n_vocab].
  const std::vector<float>& eval_all(const std::vector<int32_t>& tokens);

  // Like eval/eval_all, but the logits go straight into the caller's `out` (`capacity` floats): the
  // last token's [n_vocab], or every token's [n][n_vocab] when `all`. The forward pass writes them
  // there itself (no intermediate buffer, no copy). Throws ork::Error when out is null or too small.
  void eval_into(const int32_t* tokens, int64_t n, bool all, float* out, uint64_t capacity);

  // Like eval/eval_into, from input embeddings embd [n][n_embd] (f32) instead of token ids; embd is
  // read in place (model::Forward::eval_embd), e.g. straight from imported device memory. With
  // out == nullptr the last token's logits go to the context's own buffer (all must be false) and
  // are returned; else into out as eval_into does, and out is returned.
  const float* eval_embd(const float* embd, int64_t n, bool all = false, float* out = nullptr,
                         uint64_t capacity = 0);

  // A new sequence on the same Engine (sharing its weights, backend and device tasks) with its own KV
  // cache of the same size: empty, or with copy_state a copy of this one's cache and position.
  std::unique_ptr<Context> dup(bool copy_state) const;

  // Host memory of this sequence, in bytes (peak = largest since creation; nothing here shrinks).
  struct Memory {
    uint64_t kv_bytes = 0;       // KV cache
    uint64_t scratch_bytes = 0;  // the forward pass's activations for the largest batch so far, and
                                 // its f32 staging of one layer's K/V (f16, q8_0 caches)
    uint64_t logits_bytes = 0;   // the logits buffer eval()/eval_all() return (0 with eval_into only)
  };
  Memory memory() const;

  // The MoE layers' counters of this sequence's passes (model::MoeStats), or null for a dense model.
  // Not to be read while this Context evaluates.
  const model::MoeStats* moe_stats() const { return forward_.moe_stats(); }

  // Forgets the sequence (positions restart at 0).
  void reset() { truncate(0); }
  // Keeps the first n tokens of the sequence (0 <= n <= n_past(), else ork::Error); the next eval
  // continues at position n, overwriting what came after.
  void truncate(int64_t n);
  // The longest prefix of at most n tokens (0 <= n <= n_past()) that truncate() can keep: n, or 0
  // when a sliding-window ring no longer holds the keys position n would read (prefix reuse then
  // evaluates the whole sequence again: the same logits, more work).
  int64_t keepable(int64_t n) const;

  // The KV cache rows the sequence holds, as the cache holds them (kv_type(): f32, f16 or q8_0 rows
  // of model::kv_row_bytes): for each layer l, the rows of positions [state_from()[l], n_past()) in
  // position order for K, then the same for V. A full layer holds every position (from 0); a
  // sliding-window ring layer only the last ones it kept (model::KvCache::valid_from).
  // set_state() restores such bytes as n_past() = n with those first positions `from` (empty: all
  // 0) into a cache of the same layout (kv_rows), after which the sequence continues exactly as the
  // saved one would. ork::Error when n exceeds n_ctx(), `from` does not fit the layout (a full layer
  // from 0, a ring layer at most kv_rows(l) positions, none before 0) or the size is not
  // state_bytes(n, from); a state is only meaningful for a cache of the same type.
  std::vector<uint8_t> state() const;
  std::vector<int64_t> state_from() const;
  uint64_t state_bytes(int64_t n, const std::vector<int64_t>& from = {}) const;
  void set_state(const std::vector<uint8_t>& state, int64_t n, const std::vector<int64_t>& from = {});
  // Rows of `layer`'s K (and V) cache: n_ctx() for a full layer, fewer for a ring layer.
  int64_t kv_rows(int64_t layer) const { return cache_.rows(layer); }

 private:
  friend class BatchDecode;  // evaluates this sequence's cache in a batch with others (batch_decode.h)

  // Exactly one of tokens and embd is non-null.
  void run(const int32_t* tokens, const float* embd, int64_t n, bool all, float* out);
  void check_out(int64_t n, bool all, const float* out, uint64_t capacity) const;

  Engine& engine_;
  model::KvCache cache_;
  model::Forward forward_;
  int64_t n_past_ = 0;
  int64_t max_batch_ = 0;
  std::vector<float> logits_;
};

}  // namespace ork::runtime
