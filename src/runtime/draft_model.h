// runtime::DraftModel — a small model that proposes tokens for speculative decoding: its own Context
// (KV cache) on its own Engine, kept in step with the sequence it drafts for.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/context.h"
#include "runtime/draft_source.h"
#include "runtime/engine.h"
#include "runtime/sampler.h"

namespace ork::runtime {

// Throws ork::Error naming both sizes when the draft's vocabulary is not the target's (a draft must
// share the target's tokenizer: same size, same token texts).
void check_draft_vocab(const model::Model& target, const model::Model& draft);

class DraftModel final : public DraftSource {
 public:
  // draft: must outlive this. n_ctx: the target context's size (the draft never needs more).
  // params: the target's sampler parameters; the draft samples with them, less the repetition
  // penalty (greedy when temperature <= 0), from its own seed stream. p_min in [0, 1]: drafting stops
  // at a token whose draft probability (softmax of the draft's logits, before sampling filters, when
  // greedy; the sampled distribution's top probability otherwise) is below p_min.
  DraftModel(Engine& draft, int64_t n_ctx, const SamplerParams& params, float p_min);
  // The same on a caller's context of the draft model (borrowed: must outlive this; one user at a
  // time). Its sequence is replaced: the first propose() truncates it to what matches.
  DraftModel(Context& draft_ctx, const SamplerParams& params, float p_min);

  // The draft's cache first drops whatever differs from `seq`, then evaluates the rest of `seq` in
  // one batch and drafts up to max_k tokens one at a time.
  void propose(const std::vector<int32_t>& seq, int64_t max_k, Draft& out) override;
  const char* name() const override { return "draft-model"; }

  Context& context() { return ctx_; }

 private:
  std::unique_ptr<Context> owned_;  // null when the context is the caller's
  Context& ctx_;
  Sampler sampler_;
  float p_min_;
  std::vector<int32_t> evaluated_;  // the tokens in ctx_'s cache, in order (size == ctx_.n_past())
};

}  // namespace ork::runtime
