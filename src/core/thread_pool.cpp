#include "core/thread_pool.h"

#include <algorithm>

namespace ork {

ThreadPool::ThreadPool(int n_threads)
    : n_threads_(n_threads > 0 ? n_threads
                               : std::max(1, int(std::thread::hardware_concurrency()))) {
  workers_.reserve(size_t(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::execute(int index) {
  try {
    if (per_thread_ != nullptr) {
      (*per_thread_)(index, n_threads_);
      return;
    }
    for (;;) {
      const int64_t begin = next_.fetch_add(chunk_, std::memory_order_relaxed);
      if (begin >= n_) break;
      (*body_)(begin, std::min(n_, begin + chunk_));
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!error_) error_ = std::current_exception();
  }
}

void ThreadPool::worker_main(int index) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    execute(index);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain,
                              const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  if (n_threads_ == 1 || n <= grain) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> call(call_mutex_);
  // About four chunks per thread balances uneven work without much counter traffic.
  const int64_t chunks = std::min<int64_t>(int64_t(n_threads_) * 4, (n + grain - 1) / grain);
  body_ = &fn;
  per_thread_ = nullptr;
  n_ = n;
  chunk_ = (n + chunks - 1) / chunks;
  next_.store(0, std::memory_order_relaxed);
  dispatch();
  body_ = nullptr;
}

void ThreadPool::run(const std::function<void(int, int)>& fn) {
  std::lock_guard<std::mutex> call(call_mutex_);
  body_ = nullptr;
  per_thread_ = &fn;
  dispatch();
  per_thread_ = nullptr;
}

void ThreadPool::dispatch() {
  error_ = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_ = n_threads_ - 1;
    ++generation_;
  }
  wake_.notify_all();
  execute(0);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
  }
  if (error_) std::rethrow_exception(error_);
}

}  // namespace ork
