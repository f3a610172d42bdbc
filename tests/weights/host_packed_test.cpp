// weights::HostPacked: each weight packed once while the budget holds it, fixed set beyond, the last weight
// always kept, one pack for concurrent requests, nothing held after a failed pack.
#include "weights/host_packed.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "core/error.h"

namespace ork::weights {
namespace {

// A Packed owning `bytes` bytes (and no scales), its first byte `tag`.
Packed packed_of(uint64_t bytes, uint8_t tag) {
  auto host = std::make_shared<PackedHost>();
  host->bytes.assign(bytes, tag);
  Packed p;
  p.view = host->view();
  p.owner = std::move(host);
  return p;
}

TEST(HostPacked, PacksEachWeightOnceWhenTheBudgetHoldsThemAll) {
  HostPacked h(4, 4 * 100);
  int packs = 0;
  for (int rep = 0; rep < 3; ++rep) {
    for (int32_t w = 0; w < 4; ++w) {
      const Packed p = h.get(w, [&] { ++packs; return packed_of(100, uint8_t(w)); });
      EXPECT_EQ(p.owner->bytes[0], w);
    }
  }
  EXPECT_EQ(packs, 4);
  const HostPackedStats s = h.stats();
  EXPECT_EQ(s.misses, 4u);
  EXPECT_EQ(s.hits, 8u);
  EXPECT_EQ(s.evictions, 0u);
  EXPECT_EQ(s.bytes, 400u);
  EXPECT_EQ(s.peak_bytes, 400u);
}

// A cyclic scan (the forward pass's order) under a budget of two of four weights: the held set stays
// and hits on every pass; only the weights beyond it are repacked (LRU would repack all four).
TEST(HostPacked, KeepsWhatItHoldsAndRepacksTheRest) {
  HostPacked h(4, 250);
  int packs = 0;
  auto get = [&](int32_t w) { return h.get(w, [&] { ++packs; return packed_of(100, uint8_t(w)); }); };
  for (int pass = 0; pass < 5; ++pass) {
    for (int32_t w = 0; w < 4; ++w) EXPECT_EQ(get(w).owner->bytes[0], w);
  }
  // Pass 1 packs 0..3 (2 held over the budget, dropped for 3); each later pass: 0, 1 hit, 2 and 3
  // packed again.
  EXPECT_EQ(packs, 4 + 4 * 2);
  EXPECT_EQ(h.stats().hits, 4u * 2);
  EXPECT_EQ(h.stats().evictions, 1u + 4 * 2);
  EXPECT_EQ(h.stats().bytes, 300u);  // 0, 1 and the last weight packed, 3
  EXPECT_EQ(h.stats().peak_bytes, 300u);
}

TEST(HostPacked, ZeroBudgetKeepsTheLastWeightOnly) {
  HostPacked h(2, 0);
  int packs = 0;
  auto get = [&](int32_t w) { return h.get(w, [&] { ++packs; return packed_of(64, uint8_t(w)); }); };
  get(0);
  get(0);  // a weight's next slice: no repack
  EXPECT_EQ(packs, 1);
  const Packed first = get(0);
  get(1);
  EXPECT_EQ(packs, 2);
  EXPECT_EQ(first.owner->bytes[0], 0);  // a dropped weight handed out earlier stays valid
  get(0);
  EXPECT_EQ(packs, 3);
}

TEST(HostPacked, AFailedPackHoldsNothingAndIsRethrown) {
  HostPacked h(1, 1000);
  EXPECT_THROW(h.get(0, []() -> Packed { throw Error("no"); }), Error);
  int packs = 0;
  h.get(0, [&] { ++packs; return packed_of(8, 1); });
  EXPECT_EQ(packs, 1);
  EXPECT_THROW(h.get(1, [] { return packed_of(8, 1); }), Error);  // beyond n_weights
}

// The prefetcher and the compute thread asking for the same weight: one pack, both get its bytes.
TEST(HostPacked, ConcurrentRequestsPackOnce) {
  HostPacked h(8, 8 * 4096);
  std::atomic<int> packs{0};
  auto worker = [&] {
    for (int rep = 0; rep < 50; ++rep) {
      for (int32_t w = 0; w < 8; ++w) {
        const Packed p = h.get(w, [&] {
          ++packs;
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          return packed_of(4096, uint8_t(w));
        });
        EXPECT_EQ(p.owner->bytes[4095], w);
      }
    }
  };
  std::thread a(worker), b(worker);
  a.join();
  b.join();
  EXPECT_EQ(packs.load(), 8);
}

// Under a budget of two weights, two threads cycling through eight: LRU drops and repacks, every
// result is the right weight's bytes, and the budget holds up to the one weight kept beyond it.
TEST(HostPacked, ConcurrentRequestsUnderASmallBudget) {
  HostPacked h(8, 2 * 1024);
  auto worker = [&](int start) {
    for (int rep = 0; rep < 100; ++rep) {
      const int32_t w = int32_t((start + rep) % 8);
      const Packed p = h.get(w, [&] { return packed_of(1024, uint8_t(w)); });
      EXPECT_EQ(p.owner->bytes[0], w);
    }
  };
  std::thread a(worker, 0), b(worker, 3);
  a.join();
  b.join();
  const HostPackedStats s = h.stats();
  EXPECT_GT(s.evictions, 0u);
  EXPECT_LE(s.peak_bytes, 3u * 1024);
}

}  // namespace
}  // namespace ork::weights
