// The memory references `ork bench` puts beside the decode's weight bandwidth: the machine's copy
// and read bandwidth, measured with the engine's threads on buffers far larger than any cache, each
// thread one contiguous slice it touched first; every figure is the best of its timed passes after
// one warm-up pass (as STREAM reports: the best pass is the least disturbed by other processes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/thread_pool.h"

namespace ork::cli {

// The sum of p[0 .. n − n % 8) (eight lanes, vectorized): the read probe's inner loop, also the
// reader of kernels_bench's BM_ReadStreams. Pure, thread-safe.
uint64_t sum_words(const uint64_t* __restrict p, size_t n);

// Memory copy bandwidth, GB/s counting bytes read plus bytes written (STREAM Copy's convention):
// best of `passes` copies of `bytes` (allocated and freed here).
double copy_bandwidth_gbs(ThreadPool& pool, size_t bytes, int passes);

// Memory read bandwidth (what a decode step does with the weights), GB/s of bytes read. The buffer
// is allocated and first touched once, so the probe can be repeated between timed tests — on a
// shared machine the read rate drifts over seconds, and a decode is best compared with the rate
// measured next to it. Not thread-safe (one caller; it runs loops on `pool`).
class ReadProbe {
 public:
  ReadProbe(ThreadPool& pool, size_t bytes);
  // Best of `passes` timed reads of the whole buffer after one untimed pass.
  double gbs(int passes);

 private:
  ThreadPool& pool_;
  size_t words_;
  std::unique_ptr<uint64_t[]> buf_;
  uint64_t sink_ = 0;  // the sums, kept so the reads cannot be dropped
};

}  // namespace ork::cli
