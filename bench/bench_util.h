// Helpers shared by the benchmark programs: the machine's name and medians.
#pragma once

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/machine.h"

namespace ork::bench {

// The machine, as core/machine.h names it.
inline std::string machine_name() { return ork::machine_name(); }

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace ork::bench
