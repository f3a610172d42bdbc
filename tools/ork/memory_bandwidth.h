// The memory references `ork bench` puts beside the decode's weight bandwidth: the machine's copy
// and read bandwidth, measured with the engine's threads on buffers far larger than any cache (the
// copy: each thread one contiguous slice it touched first; the read: split as a decode loop splits
// its weights, sum_in_parts); every figure is the best of its timed passes after one warm-up pass
// (as STREAM reports: the best pass is the least disturbed by other processes). The buffers are
// HugePageArena memory, as the CPU decode's weight panels are (model::CpuMatmul): in 2 MiB pages
// where the kernel has transparent huge pages, which read × 1.09–1.28 faster than 4 KiB pages on the
// development VM (docs/ops.md, "seventh session") — so the decode is compared with what the machine
// reads from the same kind of memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/huge_page_arena.h"
#include "core/thread_pool.h"

namespace ork::cli {

// The sum of p[0 .. n − n % 8) (eight lanes, vectorized): the read probe's inner loop, also the
// reader of kernels_bench's BM_ReadStreams. Pure, thread-safe.
uint64_t sum_words(const uint64_t* __restrict p, size_t n);

// Memory copy bandwidth, GB/s counting bytes read plus bytes written (STREAM Copy's convention):
// best of `passes` copies of `bytes` (allocated and freed here).
double copy_bandwidth_gbs(ThreadPool& pool, size_t bytes, int passes);

// The sum of p[0 .. n) read on every thread of `pool` the way a decode loop reads its weights
// (ops::matmul_qpanels, m = 1): one contiguous part a thread, claimed front to back in pieces of
// kReadPieceBytes, whose last pieces shrink to kReadTailBytes, a thread done early taking pieces
// from the back of the others' parts (PartClaims). Every word is read once; with one thread, in order.
inline constexpr size_t kReadPieceBytes = 128 << 10, kReadTailBytes = 16 << 10;
uint64_t sum_in_parts(ThreadPool& pool, const uint64_t* p, size_t n);

// Memory read bandwidth (what a decode step does with the weights), GB/s of bytes read. The buffer
// is allocated and first touched once, so the probe can be repeated between timed tests — on a
// shared machine the read rate drifts over seconds, and a decode is best compared with the rate
// measured next to it. Not thread-safe (one caller; it runs loops on `pool`).
class ReadProbe {
 public:
  ReadProbe(ThreadPool& pool, size_t bytes);
  // Best of `passes` timed reads of the whole buffer (sum_in_parts) after one untimed pass.
  double gbs(int passes);
  // Whether the buffer was advised for transparent huge pages (HugePageArena::advised).
  bool huge_pages_advised() const { return arena_.advised(); }

 private:
  ThreadPool& pool_;
  size_t words_;
  HugePageArena arena_;
  uint64_t* buf_;  // words_ words of arena_
  uint64_t sink_ = 0;  // the sums, kept so the reads cannot be dropped
};

}  // namespace ork::cli
