// runtime::Context — one sequence being evaluated: its KV cache, its position and the forward
// pass's scratch. Borrows the Engine (must outlive it). Thread-safety: one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/forward.h"
#include "model/kv_cache.h"
#include "runtime/engine.h"

namespace ork::runtime {

class Context {
 public:
  // n_ctx: tokens the KV cache holds; 0 → the model's training context, capped at 4096.
  Context(Engine& engine, int64_t n_ctx);

  int64_t n_ctx() const { return cache_.n_ctx(); }
  int64_t n_past() const { return n_past_; }
  int64_t n_vocab() const { return engine_.model().config().n_vocab; }
  Engine& engine() { return engine_; }

  // Evaluates `tokens` after the n_past() tokens already in the cache and returns the logits of the
  // last one ([n_vocab], valid until the next eval). Throws ork::Error when they do not fit.
  const float* eval(const std::vector<int32_t>& tokens);
  // Like eval, but returns the logits of every token: [tokens.size()][n_vocab].
  const std::vector<float>& eval_all(const std::vector<int32_t>& tokens);

  // Forgets the sequence (positions restart at 0).
  void reset() { n_past_ = 0; }

 private:
  Engine& engine_;
  model::KvCache cache_;
  model::Forward forward_;
  int64_t n_past_ = 0;
  std::vector<float> logits_;
};

}  // namespace ork::runtime
