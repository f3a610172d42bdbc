// ork probe calibrate — measures the board cost model's parameters (docs/board-model.md) and writes
// them as a board profile (--board-profile FILE reads it back).
#pragma once

#include <string>
#include <vector>

namespace ork::cli {

// Runs the probe for argv (the arguments after "probe calibrate"); returns the exit status.
int probe_calibrate(const std::vector<std::string>& argv);

}  // namespace ork::cli
