// runtime::generate — the prefill/decode loop: evaluate the prompt in one call (Context::eval runs
// it in chunks of m_max tokens), then sample and evaluate one token at a time until n_predict
// tokens, an end-of-generation token, or a full context.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "runtime/context.h"
#include "runtime/sampler.h"

namespace ork::runtime {

struct GenerateResult {
  std::vector<int32_t> tokens;  // generated ids (the end-of-generation token included when hit)
  int64_t n_prompt = 0;
  double prompt_ms = 0;  // evaluating the prompt (one Context::eval)
  double gen_ms = 0;     // sampling and evaluating the generated tokens
  bool hit_eog = false;  // stopped at an end-of-generation token
  bool hit_ctx = false;  // stopped because the context is full
};

// Generates up to n_predict tokens after `prompt` (non-empty; must fit in the context with room for
// one more token, else ork::Error). on_token is called with each new id as soon as it is sampled;
// returning false stops generation. The context must be empty (n_past() == 0).
GenerateResult generate(Context& ctx, Sampler& sampler, const std::vector<int32_t>& prompt,
                        int64_t n_predict, const std::function<bool(int32_t)>& on_token);

}  // namespace ork::runtime
