// The arithmetic `ork bench`'s threads get, beside the read probe's memory rate: a Q4_K decode
// matmul (ops::matmul_qpanels, M = 1) on weights small enough to stay in each core's L2 (512 rows of
// 1024 per thread, 296 KB), timed with all the pool's threads and with one thread on one thread's
// share. Their ratio, cores(), is how many threads' worth of arithmetic the pool got: about the
// thread count on cores of their own, about 1 when they share one core's execution — as the
// development VM's two vCPUs do in phases (docs/ops.md, "eighth session"), or a thread on a slower
// core would. In such phases the threads cannot hide each other's arithmetic behind their memory
// time (per thread a decode takes about the sum of the two: docs/ops.md, "ninth session"), so the
// decode falls short of the read probe. `ork bench` runs it when the CPU decodes; `ork probe cpu`
// alone.
// Not thread-safe (one caller; it runs loops on the pool it was given and on its own one-thread pool).
#pragma once

#include <string>
#include <vector>

#include "core/huge_page_arena.h"
#include "core/thread_pool.h"
#include "ops/qpanels.h"

namespace ork::cli {

class ComputeProbe {
 public:
  // Rows of the probe's weight per thread of the pool.
  static constexpr int64_t kRowsPerThread = 512, kCols = 1024;

  explicit ComputeProbe(ThreadPool& pool);

  struct Rate {
    double all_gbs = 0;  // GB/s of weights, every thread of the pool on the whole weight
    double one_gbs = 0;  // GB/s of weights, one thread on one thread's share
    // all_gbs / one_gbs: threads' worth of arithmetic the pool got (0 when one_gbs is 0).
    double cores() const { return one_gbs > 0 ? all_gbs / one_gbs : 0.0; }
    // "arithmetic (an L2-resident Q4_K decode matmul): A GB/s on N threads, B on one" — the line
    // `ork bench` and `ork probe cpu` print, each followed by its own threads'-worth figure.
    std::string describe(int threads) const;
  };
  // Best of `passes` timed passes each way (each pass ≈ 0.5 ms), after untimed calls that bring the
  // weights into the caches.
  Rate measure(int passes);

 private:
  double rate(ThreadPool& pool, const ops::QPanels& w, int passes);

  ThreadPool& pool_;
  ThreadPool one_{1};
  HugePageArena arena_;
  ops::QPanels all_, share_;  // pool.size() · kRowsPerThread rows, and kRowsPerThread of the same
  std::vector<float> x_, y_;
};

}  // namespace ork::cli
