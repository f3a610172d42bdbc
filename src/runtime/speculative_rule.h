// The acceptance rule of speculative sampling (Leviathan et al. 2023, "Fast Inference from
// Transformers via Speculative Decoding", arXiv:2211.17192, Algorithm 1; Chen et al. 2023,
// arXiv:2302.01318): a token x drawn from the draft's q is kept with probability min(1, p(x)/q(x));
// otherwise a token is drawn from the normalized residual max(0, p − q). The emitted token is then
// distributed exactly as p.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/sampler.h"

namespace ork::runtime {

struct Verdict {
  bool accepted = false;  // the drafted token is kept
  int32_t token = -1;     // the drafted token, or the one drawn from the residual
};

// p: the target's distribution (Sampler::distribution: ids distinct, probabilities summing to 1;
// one-hot when greedy). q: the draft's (same form), or empty for a deterministic proposal
// (q(drafted) = 1). `drafted` must have q(drafted) > 0 (ork::Error otherwise). `rng` supplies the
// uniform numbers (Sampler::uniform); none is drawn when p(drafted) >= q(drafted), and none when
// p(drafted) == 0 and the residual has one token — so greedy decoding consumes no random numbers.
// `scratch` is a reusable buffer (any content).
Verdict verify_token(const std::vector<TokenProb>& p, const std::vector<TokenProb>& q, int32_t drafted,
                     Sampler& rng, std::vector<double>& scratch);

}  // namespace ork::runtime
