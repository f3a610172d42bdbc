// serve::generate_on_slot — one request's generation on a leased slot: reuses the slot's cached
// prefix, evaluates the rest of the prompt, samples until max_tokens, an end-of-generation token, a
// stop string or a full context. Text is handed out in deltas that never contain (or end inside a
// prefix of) a stop string, so the streamed deltas concatenate to exactly the non-streamed text.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/decode_batcher.h"
#include "runtime/sampler.h"
#include "serve/slot_pool.h"

namespace ork::serve {

struct GenParams {
  runtime::SamplerParams sampler;
  int64_t max_tokens = -1;             // < 0: until a stop or a full context
  std::vector<std::string> stop;       // the request's stop strings (non-empty strings)
  std::vector<std::string> stop_texts; // end-of-turn token texts (the chat template's)
};

struct GenResult {
  std::string text;
  std::string finish_reason;  // "stop" or "length"; "disconnected" when on_delta returned false
  int64_t n_prompt = 0, n_reused = 0, n_gen = 0;
};

// prompt: non-empty, shorter than the slot's context (the caller checks). on_delta gets each piece
// of text that is final; returning false (the client went away) stops at once. With a batcher the
// decode steps run batched with the other slots' (continuous batching; the same text as without);
// the prompt is evaluated alone either way.
GenResult generate_on_slot(Slot& slot, const std::vector<int32_t>& prompt, const GenParams& p,
                           const std::function<bool(const std::string&)>& on_delta,
                           runtime::DecodeBatcher* batcher = nullptr);

}  // namespace ork::serve
