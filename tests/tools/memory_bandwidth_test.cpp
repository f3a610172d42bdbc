// `ork bench`'s read probe: sum_in_parts reads every word of the buffer exactly once, whatever the
// thread count and however the length falls against its 4 KiB items and pieces; the probe and the
// copy test measure buffers of the weight panels' kind of memory (a HugePageArena).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/huge_page_arena.h"
#include "core/thread_pool.h"
#include "ork/compute_probe.h"
#include "ork/memory_bandwidth.h"

namespace ork::cli {
namespace {

// Word w holds w + 1, so a skipped word or one read twice changes the sum.
uint64_t expected_sum(size_t n) { return uint64_t(n) * uint64_t(n + 1) / 2; }

TEST(ReadProbe, SumInPartsReadsEveryWordOnceWithThreads) {
  // Lengths: under one 4 KiB item (512 words), items with a ragged end, a few 128 KiB pieces
  // (16 384 words) with a ragged end, and exactly whole pieces.
  for (const size_t n : {size_t(1), size_t(7), size_t(513), size_t(3 * 512 + 17), size_t(5 * 16384 + 999),
                         size_t(8 * 16384)}) {
    std::vector<uint64_t> buf(n);
    for (size_t w = 0; w < n; ++w) buf[w] = w + 1;
    for (const int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      EXPECT_EQ(sum_in_parts(pool, buf.data(), n), expected_sum(n)) << n << " words, " << threads << " threads";
    }
  }
}

TEST(ReadProbe, MeasuresArenaMemoryAsTheWeightPanelsAre) {
  ThreadPool pool(2);
  ReadProbe probe(pool, size_t(4) << 20);
  const double read = probe.gbs(2);
  EXPECT_GT(read, 0.0);
  EXPECT_LT(read, 1e5);  // GB/s: a finite rate, not a division by a zero time
  EXPECT_EQ(probe.huge_pages_advised(), HugePageArena(1).advised());
  const double copy = copy_bandwidth_gbs(pool, size_t(4) << 20, 2);
  EXPECT_GT(copy, 0.0);
  EXPECT_LT(copy, 1e5);
}

TEST(ComputeProbe, RatesArePositiveAndOneThreadIsOneThreadsWorth) {
  for (const int threads : {1, 2}) {
    ThreadPool pool(threads);
    ComputeProbe probe(pool);
    const ComputeProbe::Rate r = probe.measure(2);
    EXPECT_GT(r.all_gbs, 0.0) << threads;
    EXPECT_LT(r.all_gbs, 1e5) << threads;  // GB/s: a finite rate
    EXPECT_GT(r.one_gbs, 0.0) << threads;
    EXPECT_NEAR(r.cores(), r.all_gbs / r.one_gbs, 1e-12);
    // One thread both ways: the same loop on the same rows — a ratio near 1 (timing: a wide band).
    if (threads == 1) {
      EXPECT_GT(r.cores(), 0.3);
      EXPECT_LT(r.cores(), 3.0);
    }
  }
  EXPECT_EQ(ComputeProbe::Rate{}.cores(), 0.0);  // no one-thread rate: no ratio, not a division by zero
}

}  // namespace
}  // namespace ork::cli
