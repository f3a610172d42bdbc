// The speculative-decoding flags of ork run and ork bench: --draft, --draft-device, --draft-max,
// --draft-min, --draft-p-min, --lookup (runtime/speculative.h).
#pragma once

#include <memory>
#include <vector>

#include "args.h"
#include "runtime/draft_source.h"
#include "runtime/engine.h"
#include "runtime/sampler.h"
#include "runtime/speculative.h"

namespace ork::cli {

extern const std::vector<OptionSpec> kSpeculativeOptions;

// What the flags ask for. `source` is null when neither --draft nor --lookup is given.
struct SpeculativeSetup {
  runtime::Engine* draft_engine = nullptr;  // --draft: the draft model (load_draft's; outlives source)
  std::unique_ptr<runtime::DraftSource> source;
  runtime::SpeculativeOptions options;
};

// True when the flags ask for speculative decoding.
bool wants_speculative(const Args& args);

// --draft: loads the draft before the target (null without --draft), on --draft-device (default: the
// target's device). On the target's npu/sim device the draft is planned first and must be resident
// (ork::Error with its bytes and the window otherwise: a streamed draft would load its weights K
// times per target pass); `target` (the target's options, not loaded yet) is then set to share its
// scratch (EngineOptions::share_scratch_with), so the target is planned in the window the draft leaves.
// The returned Engine must outlive the target's. UsageError for a bad --draft-device.
std::unique_ptr<runtime::Engine> load_draft(const Args& args, runtime::EngineOptions& target);

// The draft source the flags ask for: `draft` (load_draft's, may be null) checked against the target's
// vocabulary (ork::Error naming both sizes), or prompt lookup. n_ctx: the target context's size.
// UsageError for --draft with --lookup, or a value out of range.
SpeculativeSetup speculative_setup(const Args& args, runtime::Engine& target, runtime::Engine* draft,
                                   int64_t n_ctx, const runtime::SamplerParams& sp);

}  // namespace ork::cli
