#include "weights/prefetcher.h"

#include <vector>

#include "core/log.h"

namespace ork::weights {

Prefetcher::Prefetcher(Cache& cache, uint32_t slots)
    : cache_(cache), slots_(slots), thread_([this] { run(); }) {}

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

void Prefetcher::wait_idle() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] { return stop_ || (!busy_ && served_ == generation_); });
}

void Prefetcher::run() {
  const int32_t n = int32_t(cache_.plan().units.size());
  for (;;) {
    int32_t cur;
    uint64_t seen;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      busy_ = false;
      idle_.notify_all();
      wake_.wait(lock, [&] { return stop_ || generation_ != served_; });
      if (stop_) return;
      seen = served_ = generation_;
      busy_ = true;
      cur = current_;
    }
    std::vector<int32_t> keep;
    for (uint32_t j = 0; j <= slots_; ++j) keep.push_back((cur + int32_t(j)) % n);
    for (uint32_t j = 1; j <= slots_; ++j) {
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
