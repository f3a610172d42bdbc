// runtime::concurrent_gbps — the combined data rate of two readers running at once, for the board
// model's ddr_total_gbps (`ork probe calibrate`): each side repeats its unit of work on its own thread
// for `window`, and the bytes of the units both finished inside the window are summed.
// Thread-safe in itself; each side must be safe to run on a thread of its own beside the other.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

namespace ork::runtime {

// One unit of a side: does its work and returns the bytes it read and wrote.
using RateUnit = std::function<uint64_t()>;

struct ConcurrentRate {
  double gbps = 0;               // bytes per ns of both sides' finished units over the elapsed time
  uint64_t units_a = 0, units_b = 0;
  double seconds = 0;            // elapsed until both sides stopped
};

// Runs a and b at once, each repeating until `window` has passed (a unit started before the end is
// finished and counted). At least one unit of each.
ConcurrentRate concurrent_gbps(const RateUnit& a, const RateUnit& b, std::chrono::milliseconds window);

}  // namespace ork::runtime
