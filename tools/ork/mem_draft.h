// ork mem --draft: a speculative target and its draft on one device, planned together — the draft
// first (resident), the target in the window it leaves — then both loaded, per domain.
#pragma once

#include <vector>

#include "args.h"
#include "runtime/engine.h"

namespace ork::cli {

extern const std::vector<OptionSpec> kMemDraftOptions;

// Prints the draft's plan, the target's plan beside it, then (without --plan-only) what loading both
// took per domain: each model's weights, the one scratch they share, the device's counts. `target`:
// the target's options from the flags. The target's plan is made beside the loaded draft (as loading
// does), so even --plan-only loads the draft; the target is not loaded then. Returns the exit status.
// Throws ork::Error when the draft cannot be resident or the target does not fit what it leaves.
int mem_with_draft(const Args& args, runtime::EngineOptions target, int64_t n_ctx);

}  // namespace ork::cli
