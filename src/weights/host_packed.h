// weights::HostPacked — packed weights kept in host memory, so that a streamed weight is packed once
// and not again on every load onto the device (docs/design-notes.md, "Packing each weight once").
//
// Holds one Packed per weight (Linear::index) under a byte budget of host memory. What is held
// stays held; a weight that does not fit beside it is held "over the budget" only until the next
// weight is packed (so the slices of one weight, loaded one after another, pack it once; a budget of
// 0 keeps exactly the last weight). Why not LRU: the forward pass reads the weights in the same order
// every token, a cyclic scan, under which LRU drops each weight just before it is read again and
// never hits; keeping a fixed set hits on (budget / model) of the loads of every pass. A Packed handed out shares ownership of its bytes:
// it stays valid after the cache drops it. A view into a mapping (an .orkpack hit) is held at no cost.
// When several threads ask for the same absent weight, one packs and the others wait for its result.
// Thread-safety: get() and stats() may be called from any thread at once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "weights/store.h"

namespace ork::weights {

struct HostPackedStats {
  uint64_t budget_bytes = 0;
  uint64_t hits = 0;       // get()s served from memory (including waits for another thread's pack)
  uint64_t misses = 0;     // get()s that called the pack function
  uint64_t evictions = 0;  // weights dropped that were held over the budget
  uint64_t bytes = 0;      // host bytes held now (packed bytes + scales)
  uint64_t peak_bytes = 0;
};

class HostPacked {
 public:
  HostPacked(size_t n_weights, uint64_t budget_bytes);
  HostPacked(const HostPacked&) = delete;
  HostPacked& operator=(const HostPacked&) = delete;

  // Weight `weight` (0 <= weight < n_weights): the held Packed, or pack() called on this thread
  // (outside the lock) and its result held. An exception from pack() leaves nothing held and is
  // rethrown; a thread waiting for that pack then packs itself.
  Packed get(int32_t weight, const std::function<Packed()>& pack);

  HostPackedStats stats() const;

 private:
  struct Entry {
    Packed packed;
    uint64_t bytes = 0;
    bool held = false;
    bool over = false;  // held beyond the budget: dropped when the next weight is packed
    bool packing = false;
  };
  void drop_over_locked(int32_t keep);  // drops every weight held over the budget but `keep`

  const uint64_t budget_bytes_;
  mutable std::mutex mutex_;
  std::condition_variable packed_;
  std::vector<Entry> entries_;  // [weight]; never resized
  HostPackedStats stats_;
};

// Host bytes a Packed holds: its owned bytes and scales; 0 for a view into a mapping.
uint64_t host_bytes(const Packed& p);

}  // namespace ork::weights
