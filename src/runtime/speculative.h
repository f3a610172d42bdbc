// runtime::generate_speculative — speculative decoding: a DraftSource proposes up to K tokens, the
// target evaluates the last accepted token and the K drafts in one batched forward pass (the prefill
// path: each weight is read, or streamed, once for K + 1 positions) and keeps the longest prefix that
// its own sampler accepts (runtime/speculative_rule.h), plus one token of its own; the target's KV
// cache is truncated back over the rejected drafts, the draft's follows on its next proposal.
//
// Greedy (temperature <= 0): the tokens are exactly target-only greedy decoding's (as far as the
// batched pass gives the logits one-token passes give). Sampling: each token is distributed exactly as
// target-only sampling's (the Sampler's chain, repetition penalty included), but not the same tokens
// for a seed (the random stream is consumed differently).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/context.h"
#include "runtime/draft_source.h"
#include "runtime/generator.h"
#include "runtime/sampler.h"

namespace ork::runtime {

struct SpeculativeOptions {
  int64_t draft_max = 8;  // K: tokens drafted per target pass (>= 1)
  int64_t draft_min = 0;  // a draft shorter than this is not verified (a plain decode step instead)
};

// Counters of one generation (decode phase only; the prompt's pass is not counted).
struct SpeculativeStats {
  std::string source;           // DraftSource::name()
  int64_t target_passes = 0;    // target forward passes after the prompt
  int64_t drafted = 0;          // tokens proposed and verified (drafts after a stop are not counted)
  int64_t accepted = 0;         // of those, kept
  int64_t rounds_with_draft = 0;  // target passes that verified at least one draft
  int64_t generated = 0;        // tokens emitted after the first (the first comes from the prompt pass)
  double draft_ms = 0;          // time in DraftSource::propose
  double verify_ms = 0;         // time in the target's passes (and the sampler)
  uint64_t bytes_streamed = 0;  // weight bytes the target's device loaded during the decode phase
  double modeled_ns = 0;        // sim: modeled board time of the target device's NPU jobs while decoding (a draft
                                // on the same device included)

  double acceptance_rate() const { return drafted > 0 ? double(accepted) / double(drafted) : 0.0; }
  // Drafts kept per target pass that verified some.
  double mean_accepted() const {
    return rounds_with_draft > 0 ? double(accepted) / double(rounds_with_draft) : 0.0;
  }
  double passes_per_token() const {
    return generated > 0 ? double(target_passes) / double(generated) : 0.0;
  }
  std::string to_json() const;
};

struct SpeculativeResult {
  GenerateResult gen;
  SpeculativeStats stats;
};

// Like generate() (same contract, errors and stop conditions: n_predict tokens, an end-of-generation
// token, a full context, on_token returning false), with `draft` proposing. `sampler` is the target's.
SpeculativeResult generate_speculative(Context& target, DraftSource& draft, Sampler& sampler,
                                       const std::vector<int32_t>& prompt, int64_t n_predict,
                                       const SpeculativeOptions& options,
                                       const std::function<bool(int32_t)>& on_token);

}  // namespace ork::runtime
