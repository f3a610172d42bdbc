// ThreadPool — a persistent pool of worker threads, created once and reused for every parallel loop.
//
// The calling thread takes part in each loop, so a pool of size N has N-1 workers. Work is handed
// out in chunks claimed from an atomic counter, so uneven chunks balance themselves.
// Thread-safety: parallel_for/run may be called from any thread; calls are serialized (one loop at
// a time per pool). A loop body must not call back into the same pool.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ork {

class ThreadPool {
 public:
  // n_threads >= 1 counts the caller; 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Calls fn(begin, end) over disjoint chunks covering [0, n), chunks of at least `grain` items.
  // Returns when every chunk is done. An exception thrown by fn is rethrown here (the first one).
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

  // Calls fn(thread_index, size()) once on every thread of the pool (the caller is index 0).
  void run(const std::function<void(int, int)>& fn);

 private:
  void worker_main(int index);
  // Wakes the workers for the loop set up in body_/per_thread_, runs index 0 on the caller, waits
  // for all, rethrows the first exception. Caller holds call_mutex_.
  void dispatch();
  void execute(int index);

  const int n_threads_;
  std::vector<std::thread> workers_;
  std::mutex call_mutex_;  // serializes parallel_for/run

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  uint64_t generation_ = 0;  // bumped for every loop; guarded by mutex_
  int pending_ = 0;          // workers still in the current loop; guarded by mutex_
  bool stop_ = false;

  // The current loop (valid while a loop runs).
  const std::function<void(int64_t, int64_t)>* body_ = nullptr;
  const std::function<void(int, int)>* per_thread_ = nullptr;
  int64_t n_ = 0;
  int64_t chunk_ = 1;
  std::atomic<int64_t> next_{0};
  std::exception_ptr error_;
  std::mutex error_mutex_;
};

}  // namespace ork
