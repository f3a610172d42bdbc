#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <span>
#include <stdexcept>
#include <thread>
#include <vector>

namespace ork {
namespace {

TEST(ThreadPool, ParallelForCoversEveryIndexOnce) {
  ThreadPool pool(4);
  for (int64_t n : {1, 2, 3, 7, 64, 1000, 4097}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for(n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[size_t(i)].fetch_add(1);
    });
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  }
}

TEST(ThreadPool, RunCallsEveryThreadOnce) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(3);
  pool.run([&](int i, int n) {
    EXPECT_EQ(n, 3);
    hits[size_t(i)].fetch_add(1);
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(ThreadPool, ReusedForManyLoops) {
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  for (int rep = 0; rep < 2000; ++rep) {
    pool.parallel_for(10, 1, [&](int64_t b, int64_t e) { sum.fetch_add(e - b); });
  }
  EXPECT_EQ(sum.load(), 20000);
}

TEST(ThreadPool, RethrowsTheBodysException) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.parallel_for(100, 1,
                                 [&](int64_t b, int64_t) {
                                   if (b >= 50) throw std::runtime_error("boom");
                                 }),
               std::runtime_error);
  // The pool still works afterwards.
  std::atomic<int> n{0};
  pool.parallel_for(8, 1, [&](int64_t b, int64_t e) { n.fetch_add(int(e - b)); });
  EXPECT_EQ(n.load(), 8);
}

TEST(ThreadPool, ConcurrentCallersAreSerialized) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 200; ++rep) {
        pool.parallel_for(16, 1, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 3 * 200 * 16);
}

// Loops separated by pauses longer than the spin time: the workers have gone to sleep on the
// condition variable and must be woken (and the caller woken when they finish).
TEST(ThreadPool, WakesWorkersThatWentToSleep) {
  ThreadPool pool(3);
  for (int rep = 0; rep < 5; ++rep) {
    std::this_thread::sleep_for(std::chrono::microseconds(4 * ThreadPool::kSpinMicros));
    std::atomic<int> calls{0};
    pool.run([&](int, int) {
      // Index 0 (the caller) finishes first and waits for slow workers past its spin time.
      std::this_thread::sleep_for(std::chrono::microseconds(2 * ThreadPool::kSpinMicros));
      calls.fetch_add(1);
    });
    EXPECT_EQ(calls.load(), 3);
  }
}

// prefetch_while_idle: a worker spinning between loops prefetches the start of its own share of
// the hinted segments — here, of 2 threads, worker 1's share starts 64 KiB into the second segment
// — up to the cap or that segment's end; the hint outlives other loops and ends with
// end_idle_prefetch(); memory that is not mapped (freed, or never was) is harmless: prefetches never
// fault. (On a loaded machine the worker may stop spinning before it is done, hence the tries.)
TEST(ThreadPool, IdleWorkersPrefetchTheStartOfTheirShareUntilTheHintEnds) {
  using Clock = std::chrono::steady_clock;
  ThreadPool pool(2);
  const auto loops = [&](int n) {  // back to back: the worker spins between them and after the last
    for (int i = 0; i < n; ++i) pool.parallel_for(2, 1, [](int64_t, int64_t) {});
  };
  // The bytes prefetched since `before`, twice the spin time later (the worker asleep by then).
  const auto settled_from = [&](uint64_t before) {
    const auto end = Clock::now() + std::chrono::microseconds(2 * ThreadPool::kSpinMicros);
    while (Clock::now() < end) std::this_thread::yield();  // a worker sharing this CPU gets to run
    return pool.idle_prefetched_bytes() - before;
  };
  std::vector<uint8_t> a(size_t(64) << 10, 1), b(size_t(192) << 10, 2);  // 256 KiB: worker 1 from byte 128 Ki
  const std::span<const uint8_t> segments[] = {a, b};
  const auto prefetched_with_cap = [&](size_t cap) {
    uint64_t got = 0;
    for (int rep = 0; rep < 200; ++rep) {
      loops(8);
      const uint64_t before = pool.idle_prefetched_bytes();
      pool.prefetch_while_idle(segments, cap);
      got = settled_from(before);
      pool.end_idle_prefetch();
      if (got == std::min<size_t>(cap, size_t(128) << 10)) break;  // else the worker fell asleep midway
    }
    return got;
  };
  EXPECT_EQ(prefetched_with_cap(size_t(1) << 30), size_t(128) << 10) << "up to the end of the second segment";
  EXPECT_EQ(prefetched_with_cap(size_t(32) << 10), size_t(32) << 10) << "up to the cap";

  // A terabyte nobody mapped, far more than any idle time covers: prefetching goes on after a loop
  // (the worker's part of it done), and stops at end_idle_prefetch().
  const std::span<const uint8_t> far[] = {
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(uintptr_t(1) << 44), size_t(1) << 40)};
  bool after_loop = false;
  for (int rep = 0; rep < 1000 && !after_loop; ++rep) {
    loops(8);
    pool.prefetch_while_idle(far, size_t(1) << 40);
    loops(1);
    const uint64_t at_loop = pool.idle_prefetched_bytes();
    after_loop = settled_from(at_loop) > 0;
  }
  EXPECT_TRUE(after_loop) << "the hint ended with a loop";
  pool.end_idle_prefetch();
  const uint64_t at_end = pool.idle_prefetched_bytes();
  EXPECT_LE(settled_from(at_end), 4096u) << "prefetching went on after end_idle_prefetch";  // one chunk may be in flight
  std::atomic<int64_t> sum{0};
  pool.parallel_for(1000, 1, [&](int64_t b0, int64_t e0) { sum.fetch_add(e0 - b0); });
  EXPECT_EQ(sum.load(), 1000);

  ThreadPool alone(1);  // no workers: nothing to do
  alone.prefetch_while_idle(segments, size_t(1) << 30);
  EXPECT_EQ(alone.idle_prefetched_bytes(), 0u);
}

TEST(ThreadPool, PinOrderListsEveryAllowedCpuOnce) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const std::vector<int> order = ThreadPool::pin_order();
  EXPECT_EQ(int(order.size()), CPU_COUNT(&set));
  EXPECT_EQ(std::set<int>(order.begin(), order.end()).size(), order.size());
  for (int c : order) EXPECT_TRUE(CPU_ISSET(c, &set)) << c;
}

// Each thread of a pinned pool runs on exactly its CPU of pin_order(). The pool is created on a
// thread of its own, since pinning binds the creating thread for good.
TEST(ThreadPool, PinnedThreadsRunOnTheirCpu) {
  const std::vector<int> order = ThreadPool::pin_order();
  ASSERT_FALSE(order.empty());
  std::vector<int> bound(3, -2);
  std::thread owner([&] {
    ThreadPool pool(3, /*pin=*/true);
    pool.run([&](int i, int) {
      cpu_set_t set;
      CPU_ZERO(&set);
      if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) != 1) return;
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) bound[size_t(i)] = c;
    });
  });
  owner.join();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bound[size_t(i)], order[size_t(i) % order.size()]) << "thread " << i;
}

}  // namespace
}  // namespace ork
