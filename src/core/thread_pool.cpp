#include "core/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "core/log.h"

namespace ork {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until pred() holds or ThreadPool::kSpinMicros have passed; returns pred().
template <typename Pred>
bool spin_until(Pred pred) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::microseconds(ThreadPool::kSpinMicros);
  for (uint32_t i = 1;; ++i) {
    if (pred()) return true;
    cpu_relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= deadline) return pred();
  }
}

// Prefetches the next chunk of [next, end) and advances next past it (counted in `bytes`); false
// when the range is used up. Only its worker advances a range; one changed meanwhile may get one
// chunk of the old or a mix: prefetches never fault.
bool prefetch_chunk(std::atomic<uintptr_t>& next, const std::atomic<uintptr_t>& end, std::atomic<uint64_t>& bytes) {
  constexpr uintptr_t kChunk = 4096, kLine = 64;
  const uintptr_t e = end.load(std::memory_order_relaxed);
  const uintptr_t b = next.load(std::memory_order_relaxed);
  if (b >= e) return false;
  next.store(b + kChunk, std::memory_order_relaxed);
  const uintptr_t stop = std::min(b + kChunk, e);
  for (uintptr_t a = b; a < stop; a += kLine) __builtin_prefetch(reinterpret_cast<const void*>(a), 0, 3);
  bytes.fetch_add(stop - b, std::memory_order_relaxed);
  return true;
}

// kHz from cpufreq, 0 when the kernel does not say.
int64_t max_freq_khz(int cpu) {
  std::ifstream f("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/cpuinfo_max_freq");
  int64_t khz = 0;
  return (f >> khz) ? khz : 0;
}

void pin_self(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    log::warn("thread pool: cannot pin a thread to CPU ", cpu, "; it stays unpinned");
}

}  // namespace

std::vector<int> ThreadPool::pin_order() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  std::vector<std::pair<int64_t, int>> keyed;
  for (int c : cpus) keyed.emplace_back(-max_freq_khz(c), c);
  std::stable_sort(keyed.begin(), keyed.end());
  std::vector<int> out;
  for (const auto& k : keyed) out.push_back(k.second);
  return out;
}

ThreadPool::ThreadPool(int n_threads, bool pin)
    : n_threads_(n_threads > 0 ? n_threads
                               : std::max(1, int(std::thread::hardware_concurrency()))),
      idle_(new IdleRange[size_t(n_threads_)]) {
  std::vector<int> cpus;
  if (pin) {
    cpus = pin_order();
    if (cpus.empty()) log::warn("thread pool: no CPU to pin to; threads stay unpinned");
  }
  if (!cpus.empty()) pin_self(cpus[0]);
  workers_.reserve(size_t(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i)
    workers_.emplace_back([this, i, cpus] {
      if (!cpus.empty()) pin_self(cpus[size_t(i) % cpus.size()]);
      worker_main(i);
    });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
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
  const auto woken = [&] { return stop_.load() || generation_.load() != seen; };
  // While spinning, the next chunk of this worker's idle hint (prefetch_while_idle) instead of a pause.
  IdleRange& idle = idle_[size_t(index)];
  const auto woken_or_prefetch = [&] { return woken() || (prefetch_chunk(idle.next, idle.end, idle_bytes_) && false); };
  for (;;) {
    if (!spin_until(woken_or_prefetch)) {
      std::unique_lock<std::mutex> lock(mutex_);
      sleepers_.fetch_add(1);
      wake_.wait(lock, woken);
      sleepers_.fetch_sub(1);
    }
    if (stop_.load()) return;
    seen = generation_.load();
    execute(index);
    if (pending_.fetch_sub(1) == 1 && caller_sleeping_.load()) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
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

void ThreadPool::prefetch_while_idle(std::span<const std::span<const uint8_t>> segments, size_t per_worker) {
  if (n_threads_ == 1) return;
  size_t total = 0;
  for (const auto& s : segments) total += s.size();
  std::lock_guard<std::mutex> call(call_mutex_);
  for (int i = 1; i < n_threads_; ++i) {
    IdleRange& r = idle_[size_t(i)];
    r.end.store(r.next.load(std::memory_order_relaxed), std::memory_order_relaxed);  // empty while it moves
    // The segment holding byte total·i/n of the concatenation, and the offset in it.
    size_t at = size_t(uint64_t(total) * uint64_t(i) / uint64_t(n_threads_));
    for (const auto& s : segments) {
      if (at >= s.size()) {
        at -= s.size();
        continue;
      }
      const uintptr_t b = reinterpret_cast<uintptr_t>(s.data() + at);
      r.next.store(b, std::memory_order_relaxed);
      r.end.store(b + std::min(per_worker, s.size() - at), std::memory_order_relaxed);
      break;
    }
  }
}

void ThreadPool::end_idle_prefetch() {
  if (n_threads_ == 1) return;
  std::lock_guard<std::mutex> call(call_mutex_);
  for (int i = 1; i < n_threads_; ++i) idle_[size_t(i)].end.store(0, std::memory_order_relaxed);
}

void ThreadPool::dispatch() {
  error_ = nullptr;
  pending_.store(n_threads_ - 1);
  generation_.fetch_add(1);  // publishes the loop set up by the caller
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  }
  execute(0);
  const auto all_done = [&] { return pending_.load() == 0; };
  if (!spin_until(all_done)) {
    std::unique_lock<std::mutex> lock(mutex_);
    // An exchange, not a store: the read of pending_ in all_done must not be performed before this
    // write is visible (store→load order). A seq_cst store gives that on real hardware, but qemu-user
    // maps aarch64's STLR/LDAR pair to plain x86 moves, which may reorder: the caller then saw a
    // worker still pending, the worker saw no caller asleep, and both slept (a hang seen 1 run in
    // 12 under qemu). A read-modify-write is a full barrier everywhere.
    caller_sleeping_.exchange(true);
    done_.wait(lock, all_done);
    caller_sleeping_.store(false);
  }
  if (error_) std::rethrow_exception(error_);
}

}  // namespace ork
