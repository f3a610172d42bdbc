// runtime::DraftSource — what proposes tokens for speculative decoding (runtime/speculative.h): a
// draft model (runtime/draft_model.h) or n-gram lookup in the context (runtime/prompt_lookup.h).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/sampler.h"

namespace ork::runtime {

// Up to K proposed tokens. q[i] is the distribution token i was drawn from (sorted by probability
// descending, summing to 1); an empty q[i] means the proposal was deterministic (probability 1).
struct Draft {
  std::vector<int32_t> tokens;
  std::vector<std::vector<TokenProb>> q;  // empty, or one per token
  void clear() {
    tokens.clear();
    q.clear();
  }
};

// Thread-safety: none (one sequence).
class DraftSource {
 public:
  virtual ~DraftSource() = default;
  // Proposes at most max_k (>= 1) tokens to follow `seq` (the whole sequence so far: prompt and
  // generated tokens, non-empty) into `out` (cleared first). May propose none.
  virtual void propose(const std::vector<int32_t>& seq, int64_t max_k, Draft& out) = 0;
  // A short name for statistics ("draft-model", "lookup").
  virtual const char* name() const = 0;
};

}  // namespace ork::runtime
