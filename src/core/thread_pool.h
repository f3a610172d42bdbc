// ThreadPool — a persistent pool of worker threads, created once and reused for every parallel loop.
//
// The calling thread takes part in each loop, so a pool of size N has N-1 workers. Work is handed
// out in chunks claimed from an atomic counter, so uneven chunks balance themselves.
// Waiting: a worker that finished a loop spins (with a CPU pause) for up to kSpinMicros before it
// sleeps on a condition variable, and so does the caller waiting for the workers, because a decode
// step issues a loop every few microseconds and a futex wake-up costs about as much as the loop.
// A spinning worker prefetches its share of what the caller last hinted (prefetch_while_idle: the
// start of its part of the next matmul's weights, while the caller works alone between loops)
// instead of only pausing.
// Pinning (optional): thread i runs on the i-th CPU of pin_order(), the fastest cores first.
// Thread-safety: parallel_for/run may be called from any thread; calls are serialized (one loop at
// a time per pool). A loop body must not call back into the same pool.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace ork {

class ThreadPool {
 public:
  // Spin time before sleeping, in microseconds.
  static constexpr int kSpinMicros = 100;

  // n_threads >= 1 counts the caller; 0 means std::thread::hardware_concurrency(). With pin, every
  // thread of the pool — the calling thread included, for the rest of its life — is bound to one
  // CPU of pin_order() (thread i to entry i mod its size); a CPU that cannot be bound is left
  // unbound with a warning.
  explicit ThreadPool(int n_threads, bool pin = false);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }
  // The CPUs pinned threads use, in order: the CPUs this process may run on, the highest maximum
  // clock first (the Cortex-A76 cores before the A55 cores of an RK3588), then by number.
  static std::vector<int> pin_order();

  // Calls fn(begin, end) over disjoint chunks covering [0, n), chunks of at least `grain` items.
  // Returns when every chunk is done. An exception thrown by fn is rethrown here (the first one).
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

  // Calls fn(thread_index, size()) once on every thread of the pool (the caller is index 0).
  void run(const std::function<void(int, int)>& fn);

  // A hint for the time until a loop that reads `segments` in order (a decode matmul's weights),
  // split among the threads as equal shares of their bytes, thread i's from byte total·i/size() on:
  // every waiting worker prefetches the start of its own share, up to `per_worker` bytes and not
  // past the end of the segment its share starts in, a few KiB at a time — while the caller works
  // alone, and after the worker's part of any loop run meanwhile (how far it gets depends on that
  // idle time) — until end_idle_prefetch() or the next hint. Prefetches never fault, so the memory
  // may be freed at any time. No effect with one thread.
  void prefetch_while_idle(std::span<const std::span<const uint8_t>> segments, size_t per_worker);
  // Ends the hint: the loop that reads the hinted data is about to start (its workers, once done
  // with their part, must not prefetch what is already read).
  void end_idle_prefetch();
  // Bytes the workers issued prefetches for so far (prefetch_while_idle), for tests and statistics.
  uint64_t idle_prefetched_bytes() const { return idle_bytes_.load(std::memory_order_relaxed); }

 private:
  void worker_main(int index);
  // Wakes the workers for the loop set up in body_/per_thread_, runs index 0 on the caller, waits
  // for all, rethrows the first exception. Caller holds call_mutex_.
  void dispatch();
  void execute(int index);

  const int n_threads_;
  std::vector<std::thread> workers_;
  std::mutex call_mutex_;  // serializes parallel_for/run

  // Wake-up protocol: the caller bumps generation_, then notifies under mutex_ only if a worker
  // announced (sleepers_) that it may sleep; a worker announces before its last check of
  // generation_. Both sides use sequentially consistent atomics, so one of them sees the other.
  // The same for the end of a loop with pending_ and caller_sleeping_.
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::atomic<uint64_t> generation_{0};  // bumped for every loop
  std::atomic<int> pending_{0};          // workers still in the current loop
  std::atomic<int> sleepers_{0};         // workers asleep or about to sleep on wake_
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stop_{false};
  // prefetch_while_idle's range of one worker: the next address to prefetch and the end (equal:
  // nothing to do), on a cache line of its own; written by the caller, read and advanced by the
  // worker (relaxed: a torn pair only makes a useless prefetch, which never faults).
  struct alignas(64) IdleRange {
    std::atomic<uintptr_t> next{0};
    std::atomic<uintptr_t> end{0};
  };
  std::unique_ptr<IdleRange[]> idle_;  // by thread index; [0], the caller's, unused
  std::atomic<uint64_t> idle_bytes_{0};

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
