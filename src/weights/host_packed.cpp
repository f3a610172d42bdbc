#include "weights/host_packed.h"

#include <algorithm>

#include "core/error.h"

namespace ork::weights {

uint64_t host_bytes(const Packed& p) {
  if (p.owner == nullptr) return 0;
  return p.owner->bytes.size() + p.owner->scales.size() * sizeof(float);
}

HostPacked::HostPacked(size_t n_weights, uint64_t budget_bytes)
    : budget_bytes_(budget_bytes), entries_(n_weights) {
  stats_.budget_bytes = budget_bytes;
}

void HostPacked::drop_over_locked(int32_t keep) {
  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    if (!e.held || !e.over || int32_t(i) == keep) continue;
    stats_.bytes -= e.bytes;
    e = Entry{};
    ++stats_.evictions;
  }
}

Packed HostPacked::get(int32_t weight, const std::function<Packed()>& pack) {
  ORK_CHECK(weight >= 0 && size_t(weight) < entries_.size(), "HostPacked::get: weight ", weight, " of ",
            entries_.size());
  std::unique_lock<std::mutex> lock(mutex_);
  Entry& e = entries_[size_t(weight)];
  packed_.wait(lock, [&] { return !e.packing; });
  if (e.held) {
    ++stats_.hits;
    return e.packed;
  }
  e.packing = true;
  ++stats_.misses;
  lock.unlock();
  Packed p;
  try {
    p = pack();
  } catch (...) {
    lock.lock();
    e.packing = false;
    packed_.notify_all();
    throw;
  }
  lock.lock();
  e.packing = false;
  e.packed = p;
  e.bytes = host_bytes(p);
  e.held = true;
  drop_over_locked(weight);
  e.over = stats_.bytes + e.bytes > budget_bytes_;
  stats_.bytes += e.bytes;
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.bytes);
  packed_.notify_all();
  return p;
}

HostPackedStats HostPacked::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace ork::weights
