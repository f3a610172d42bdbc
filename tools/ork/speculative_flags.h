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
  std::unique_ptr<runtime::Engine> draft_engine;  // --draft: the draft model (outlives source)
  std::unique_ptr<runtime::DraftSource> source;
  runtime::SpeculativeOptions options;
};

// True when the flags ask for speculative decoding.
bool wants_speculative(const Args& args);

// Loads the draft (on --draft-device, default the target's device; npu/sim: on the target's device
// with the matmul scratch shared, EngineOptions::share_scratch_with) and checks its vocabulary against
// the target's (ork::Error naming both sizes). n_ctx: the target context's size. UsageError for
// --draft with --lookup, or a value out of range.
SpeculativeSetup speculative_setup(const Args& args, runtime::Engine& target, int64_t n_ctx,
                                   const runtime::SamplerParams& sp);

}  // namespace ork::cli
