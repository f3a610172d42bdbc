// The machine a measurement ran on, for benchmark reports. Thread-safety: reads files; reentrant.
#pragma once

#include <string>

namespace ork {

// The board (/proc/device-tree/model, when there is one), the CPU ("model name" or "Model" of
// /proc/cpuinfo) and the core count, e.g. "AMD EPYC (2 cores)" or
// "Orange Pi 5: unknown cpu (8 cores)".
std::string machine_name();

}  // namespace ork
