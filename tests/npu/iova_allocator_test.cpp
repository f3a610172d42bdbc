#include "npu/sim/iova_allocator.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"

namespace ork::npu::sim {
namespace {

constexpr uint64_t kMiB = uint64_t(1) << 20;
constexpr uint64_t kGiB = uint64_t(1) << 30;

// Allocates `chunk` bytes until failure; returns the addresses.
std::vector<uint64_t> fill(IovaAllocator& a, uint64_t chunk) {
  std::vector<uint64_t> out;
  while (auto iova = a.alloc(chunk)) out.push_back(*iova);
  return out;
}

TEST(IovaAllocator, SixtyFourMiBBuffersFailAtNumber63InFourGiB) {
  IovaAllocator a(4 * kGiB);
  const auto got = fill(a, 64 * kMiB);
  ASSERT_EQ(got.size(), 63u);  // the 64th (index #63) fails
  EXPECT_EQ(got.front(), 4 * kGiB - 64 * kMiB);  // top-down
  for (uint64_t iova : got) {
    EXPECT_EQ(iova % (64 * kMiB), 0u);
    EXPECT_NE(iova, 0u);
  }
  EXPECT_EQ(got.back(), 64 * kMiB);
  EXPECT_EQ(a.used_bytes(), 63 * 64 * kMiB);
}

TEST(IovaAllocator, CountMatchesModelForWindowsAndChunks) {
  // Power-of-two chunks c <= W/2 tile W in W/c aligned slots; the one holding page 0 is lost.
  for (uint64_t window : {64 * kMiB, 256 * kMiB, kGiB}) {
    for (uint64_t chunk : {kMiB, 4 * kMiB, 16 * kMiB, 64 * kMiB}) {
      IovaAllocator a(window);
      const uint64_t expect = chunk == window ? 0 : window / chunk - 1;
      EXPECT_EQ(fill(a, chunk).size(), expect) << "window " << window << " chunk " << chunk;
    }
  }
}

TEST(IovaAllocator, MoreThanHalfTheWindowNeverMaps) {
  IovaAllocator a(4 * kGiB);
  EXPECT_FALSE(a.alloc(2 * kGiB + 4096));
  EXPECT_FALSE(a.alloc(3 * kGiB));
  const auto half = a.alloc(2 * kGiB);
  ASSERT_TRUE(half);
  EXPECT_EQ(*half, 2 * kGiB);
  EXPECT_FALSE(a.alloc(2 * kGiB));  // its only other slot starts at 0
  // Without size alignment (IOMMU_LIMIT_IOVA_ALIGNMENT) a 1.5 GiB buffer fits below.
  EXPECT_TRUE(a.alloc(kGiB + kGiB / 2, /*size_aligned=*/false));
}

TEST(IovaAllocator, UnalignedAllocationMapsMoreThanHalf) {
  IovaAllocator a(4 * kGiB);
  const auto big = a.alloc(3 * kGiB, /*size_aligned=*/false);
  ASSERT_TRUE(big);
  EXPECT_EQ(*big, kGiB);
}

TEST(IovaAllocator, FragmentationFailsWithFreeBytesToSpare) {
  IovaAllocator a(4 * kGiB);
  auto got = fill(a, 64 * kMiB);
  ASSERT_EQ(got.size(), 63u);
  // Free every other buffer: 32 holes of 64 MiB, none adjacent.
  for (size_t i = 0; i < got.size(); i += 2) a.free(got[i]);
  EXPECT_EQ(a.used_bytes(), 31 * 64 * kMiB);
  EXPECT_GE(a.window_bytes() - a.used_bytes(), 2 * kGiB);
  EXPECT_FALSE(a.alloc(128 * kMiB));        // 2 GiB free, no 128 MiB-aligned hole
  EXPECT_FALSE(a.alloc(64 * kMiB + 4096));  // needs 128 MiB alignment too
  EXPECT_TRUE(a.alloc(64 * kMiB));          // an exact hole still works
  EXPECT_TRUE(a.alloc(32 * kMiB));
}

TEST(IovaAllocator, FreedRangeIsReused) {
  IovaAllocator a(4 * kGiB);
  const auto first = a.alloc(64 * kMiB);
  const auto second = a.alloc(64 * kMiB);
  ASSERT_TRUE(first && second);
  a.free(*first);
  const auto again = a.alloc(64 * kMiB);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *first);
  // And a full domain recovers after frees: the failed size no longer fails fast.
  fill(a, 64 * kMiB);
  EXPECT_FALSE(a.alloc(64 * kMiB));
  a.free(*second);
  const auto recovered = a.alloc(64 * kMiB);
  ASSERT_TRUE(recovered);
  EXPECT_EQ(*recovered, *second);
}

TEST(IovaAllocator, SmallRequestsRoundToPowerOfTwo) {
  EXPECT_EQ(IovaAllocator::reserved_pages(1), 1u);
  EXPECT_EQ(IovaAllocator::reserved_pages(4096), 1u);
  EXPECT_EQ(IovaAllocator::reserved_pages(4097), 2u);
  EXPECT_EQ(IovaAllocator::reserved_pages(3 * 4096), 4u);
  EXPECT_EQ(IovaAllocator::reserved_pages(31 * 4096), 32u);
  EXPECT_EQ(IovaAllocator::reserved_pages(33 * 4096), 33u);  // not rounded; aligned to 64 pages
  IovaAllocator a(4 * kGiB);
  const auto p = a.alloc(3 * 4096);
  ASSERT_TRUE(p);
  EXPECT_EQ(a.range_bytes(*p), 4 * 4096u);
  EXPECT_EQ(*p % (4 * 4096), 0u);
  const auto q = a.alloc(33 * 4096);
  ASSERT_TRUE(q);
  EXPECT_EQ(a.range_bytes(*q), 33 * 4096u);
  EXPECT_EQ(*q % (64 * 4096), 0u);
}

TEST(IovaAllocator, PageZeroIsNeverHandedOut) {
  IovaAllocator a(kMiB);  // 256 pages
  const auto got = fill(a, 4096);
  ASSERT_EQ(got.size(), 255u);
  for (uint64_t iova : got) EXPECT_NE(iova, 0u);
  EXPECT_EQ(got.back(), 4096u);
}

TEST(IovaAllocator, MixedFreeOrderKeepsSearchCorrect) {
  // Free and reallocate in an order that moves the cached node around; every allocation must land
  // in a hole that is really free (no overlap with live ranges).
  IovaAllocator a(256 * kMiB);
  std::vector<std::pair<uint64_t, uint64_t>> live;
  const uint64_t sizes[] = {4096, 3 * 4096, 64 * 4096, kMiB, 5 * kMiB, 8 * kMiB};
  uint64_t seed = 12345;
  for (int step = 0; step < 2000; ++step) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    if (!live.empty() && (seed >> 60) < 7) {
      const size_t i = (seed >> 20) % live.size();
      a.free(live[i].first);
      live.erase(live.begin() + long(i));
      continue;
    }
    const uint64_t size = sizes[(seed >> 33) % 6];
    const auto p = a.alloc(size);
    if (!p) continue;
    const uint64_t len = a.range_bytes(*p);
    for (const auto& [lo, n] : live) ASSERT_TRUE(*p + len <= lo || lo + n <= *p) << "overlap at step " << step;
    ASSERT_NE(*p, 0u);
    ASSERT_LE(*p + len, a.window_bytes());
    live.emplace_back(*p, len);
  }
  uint64_t used = 0;
  for (const auto& r : live) used += r.second;
  EXPECT_EQ(a.used_bytes(), used);
  EXPECT_EQ(a.live_ranges(), live.size());
}

TEST(IovaAllocator, BadFreeAndBadWindowThrow) {
  IovaAllocator a(4 * kGiB);
  EXPECT_THROW(a.free(0x1000), Error);
  const auto p = a.alloc(4096);
  ASSERT_TRUE(p);
  EXPECT_THROW(a.free(*p + 1), Error);
  a.free(*p);
  EXPECT_THROW(a.free(*p), Error);
  EXPECT_THROW(IovaAllocator(4096), Error);
  EXPECT_THROW(IovaAllocator(kMiB + 1), Error);
  EXPECT_THROW(IovaAllocator(8 * kGiB), Error);
  EXPECT_FALSE(a.alloc(0));
}

}  // namespace
}  // namespace ork::npu::sim
