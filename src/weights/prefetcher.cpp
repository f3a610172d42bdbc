#include "weights/prefetcher.h"

#include <vector>

#include "core/log.h"

namespace ork::weights {

Prefetcher::Prefetcher(Cache& cache, uint32_t slots)
    : cache_(cache), slots_(slots), route_(cache.plan()), thread_([this] { run(); }) {}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  idle_.notify_all();
  thread_.join();
}

void Prefetcher::advance(int32_t unit) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    current_ = unit;
    ++generation_;
  }
  wake_.notify_all();
}

void Prefetcher::name_experts(int32_t block, std::vector<int32_t> experts) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    route_.name(block, std::move(experts));
    if (current_ < 0) return;  // nothing announced yet: the next advance() walks the new route
    ++generation_;
  }
  wake_.notify_all();
}

void Prefetcher::wait_idle() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] { return stop_ || (!busy_ && served_ == generation_); });
}

void Prefetcher::run() {
  for (;;) {
    std::vector<int32_t> keep;  // the unit in use and those after it
    uint64_t seen;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      busy_ = false;
      idle_.notify_all();
      wake_.wait(lock, [&] { return stop_ || generation_ != served_; });
      if (stop_) return;
      seen = served_ = generation_;
      busy_ = true;
      keep = route_.units_ahead(current_, slots_);
    }
    for (size_t j = 1; j < keep.size(); ++j) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stop_ || generation_ != seen) break;  // compute moved on: restart from there
      }
      try {
        if (!cache_.prefetch(keep[j], keep)) break;
      } catch (const std::exception& e) {
        // The compute thread loads it itself and reports the error there.
        log::debug("prefetch of weight unit ", keep[j], " failed: ", e.what());
        break;
      }
    }
  }
}

}  // namespace ork::weights
