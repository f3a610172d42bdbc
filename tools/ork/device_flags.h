// The flags shared by the commands that run models or probes: the device and its simulator knobs,
// the engine's weight options, each with its environment variable (flags win).
#pragma once

#include <string>
#include <vector>

#include "args.h"
#include "npu/device.h"
#include "runtime/engine.h"

namespace ork::cli {

// --sim-window-mb, --sim-domains, --sim-cores.
extern const std::vector<OptionSpec> kSimOptions;

// --kv-type: the commands that run a model.
extern const std::vector<OptionSpec> kKvOptions;

// DeviceOptions from ORK_SIM_* overridden by the flags; kind from --device (default `def`).
npu::DeviceOptions device_options(const Args& args, const std::string& def);

// EngineOptions from whichever of these flags the command declares: -m (default: the default
// model), --device (default `device_def`) and the simulator knobs, -t, --cpu-int8, --exact,
// --npu-wtype, --residency, --expert-prefetch, --wcache-budget-mb (ORK_WCACHE_BUDGET_MB),
// --wcache-host-mb (ORK_WCACHE_HOST_MB), --persist (ORK_PERSIST), --evict-src
// (ORK_EVICT_SRC), --tokenizer-pre, --kv-type. Throws UsageError for a bad value.
runtime::EngineOptions engine_options(const Args& args, const std::string& device_def);

// The whole content of a text file; ork::Error naming the path when it cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace ork::cli
