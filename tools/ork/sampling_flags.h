// The sampling flags of the commands that generate (ork chat, ork serve's defaults): --temp, --top-k,
// --top-p, --min-p, --repeat-penalty, --repeat-last-n, -s/--seed, with ork run's defaults and ranges.
#pragma once

#include <vector>

#include "args.h"
#include "runtime/sampler.h"

namespace ork::cli {

extern const std::vector<OptionSpec> kSamplingOptions;

// SamplerParams from the flags; no --seed → a random seed. UsageError for a bad value.
runtime::SamplerParams sampler_params(const Args& args);

}  // namespace ork::cli
