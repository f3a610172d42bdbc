// weights::Prefetcher — loads the next weight units ahead of compute on a background thread.
//
// The forward pass uses units in a known cyclic order (Plan::units, then again from the first for
// the next token), except for MoE layers, whose experts it names as routing picks them (or as the
// predictor guesses them): the order is weights::ExpertRoute's, which loads no expert that was not
// named. When the compute thread announces the unit it is about to use (advance), the
// prefetcher fills the next `slots` units into the Cache, never evicting one of those it keeps
// ahead, so compute waits only when loading is slower than computing.
// Thread-safety: advance() is called by the compute thread; the worker thread only talks to the
// Cache (thread-safe). Destruction stops and joins the worker.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "weights/cache.h"
#include "weights/expert_route.h"

namespace ork::weights {

class Prefetcher {
 public:
  Prefetcher(Cache& cache, uint32_t slots);
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // Compute is about to use `unit`: prefetch the `slots` units after it.
  void advance(int32_t unit);
  // The experts of expert block `block` (Plan::expert_blocks) compute will use, in order of use
  // (ExpertRoute::name); loading follows them from now on.
  void name_experts(int32_t block, std::vector<int32_t> experts);
  // Returns once every advance() so far has been served and no load is in flight, so the Cache and
  // the device's counters hold still until the next advance() (memory reports).
  void wait_idle();

 private:
  void run();

  Cache& cache_;
  const uint32_t slots_;
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  ExpertRoute route_;  // guarded by mutex_
  int32_t current_ = -1;
  uint64_t generation_ = 0;  // advance() calls
  uint64_t served_ = 0;      // the generation the worker took last
  bool busy_ = false;        // the worker is loading for `served_`
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ork::weights
