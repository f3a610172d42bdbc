// Helpers shared by the benchmark programs: the machine's name and medians.
#pragma once

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace ork::bench {

// "model name" of /proc/cpuinfo and the core count, e.g. "AMD EPYC 7B13 (2 cores)".
inline std::string machine_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, name = "unknown cpu";
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      name = line.substr(line.find(':') + 2);
      break;
    }
  }
  return name + " (" + std::to_string(std::thread::hardware_concurrency()) + " cores)";
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace ork::bench
