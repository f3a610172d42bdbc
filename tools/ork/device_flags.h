// The flags that choose and shape the compute device, shared by the commands that run models or
// probes: --device and the simulator knobs, each with its environment variable (flags win).
#pragma once

#include <vector>

#include "args.h"
#include "npu/device.h"

namespace ork::cli {

// --sim-window-mb, --sim-domains, --sim-cores.
extern const std::vector<OptionSpec> kSimOptions;

// DeviceOptions from ORK_SIM_* overridden by the flags; kind from --device (default `def`).
npu::DeviceOptions device_options(const Args& args, const std::string& def);

}  // namespace ork::cli
