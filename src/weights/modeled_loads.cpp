#include "weights/modeled_loads.h"

#include <algorithm>

#include "core/error.h"

namespace ork::weights {

ModeledLoads::ModeledLoads(uint32_t slots, double load_gbps) : slots_(std::max<uint32_t>(slots, 1)),
                                                                  bytes_per_ns_(load_gbps) {
  ORK_CHECK(load_gbps > 0, "modeled loads: load_gbps = ", load_gbps);
}

double ModeledLoads::acquire(double now_ns, uint64_t bytes, bool loaded, double requested_ns, bool routed) {
  const double at = now_ns + stats_.stall_ns;
  double stall = 0;
  if (routed) {
    routed_.acquires++;
    if (!loaded) routed_.reused++;
  }
  if (loaded) {
    // The loader may start once compute reached the acquire `slots` back (before that, the budget
    // holds the units in between).
    const double allowed = acquired_.size() >= slots_ ? acquired_.front() : 0.0;
    const double load = double(bytes) / bytes_per_ns_;
    const double ready = std::max({allowed, loader_free_, std::min(requested_ns, at)}) + load;
    loader_free_ = ready;
    stall = std::max(0.0, ready - at);
    stats_.loads++;
    stats_.load_ns += load;
    stats_.stall_ns += stall;
    if (routed) {
      if (requested_ns >= at) {
        routed_.misses++;
      } else if (stall > 0) {
        routed_.late++;
      } else {
        routed_.hits++;
      }
    }
  }
  acquired_.push_back(at + stall);
  while (acquired_.size() > slots_) acquired_.pop_front();
  return stall;
}

void ModeledLoads::charge_wasted(uint64_t bytes, double requested_ns) {
  loader_free_ = std::max(loader_free_, requested_ns) + double(bytes) / bytes_per_ns_;
  routed_.wasted++;
  routed_.wasted_bytes += bytes;
}

}  // namespace ork::weights
