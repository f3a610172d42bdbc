// ork probe persist — per weight: pack time vs load-from-pack time, and a byte-identical round trip.
#pragma once

#include <string>
#include <vector>

namespace ork::cli {

// Runs the probe for argv (the arguments after "probe persist"); returns the exit status
// (0: every weight round-trips byte-identical).
int probe_persist(const std::vector<std::string>& argv);

}  // namespace ork::cli
