#include "core/part_claims.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.h"

namespace ork {
namespace {

using Piece = std::pair<int64_t, int64_t>;

// The next piece of the thread owning `part`, or {-1, -1} when claim() says none is left.
Piece next(PartClaims& c, int part) {
  int64_t b = 0, e = 0;
  return c.claim(part, &b, &e) ? Piece(b, e) : Piece(-1, -1);
}
const Piece kNone(-1, -1);

std::vector<Piece> drain(PartClaims& c, int part) {
  std::vector<Piece> out;
  int64_t b = 0, e = 0;
  while (c.claim(part, &b, &e)) out.emplace_back(b, e);
  return out;
}

TEST(PartClaims, OwnPartFrontToBackInPieces) {
  const std::vector<int64_t> bounds = {0, 10, 20};
  PartClaims c(bounds, 4);
  EXPECT_EQ(next(c, 0), Piece(0, 4));
  EXPECT_EQ(next(c, 0), Piece(4, 8));
  EXPECT_EQ(next(c, 0), Piece(8, 10));  // the part's last piece is shorter
  EXPECT_EQ(next(c, 1), Piece(10, 14));
}

TEST(PartClaims, DoneThreadTakesFromTheBackOfTheOthers) {
  const std::vector<int64_t> bounds = {0, 2, 12, 22};
  PartClaims c(bounds, 3);
  // Part 0 has 2 items, then part 1's back, then part 2's once part 1 is used up.
  const std::vector<Piece> got = drain(c, 0);
  const std::vector<Piece> want = {{0, 2}, {9, 12}, {6, 9}, {3, 6}, {2, 3}, {19, 22}, {16, 19}, {13, 16},
                                   {12, 13}};
  EXPECT_EQ(got, want);
  EXPECT_TRUE(drain(c, 1).empty());
  EXPECT_TRUE(drain(c, 2).empty());
}

TEST(PartClaims, OwnerAndThiefMeetWithoutOverlap) {
  const std::vector<int64_t> bounds = {0, 0, 7};  // part 0 empty: its owner steals from part 1
  PartClaims c(bounds, 2);
  EXPECT_EQ(next(c, 1), Piece(0, 2));
  EXPECT_EQ(next(c, 0), Piece(5, 7));
  EXPECT_EQ(next(c, 0), Piece(3, 5));
  EXPECT_EQ(next(c, 1), Piece(2, 3));  // the front stops at the back
  EXPECT_EQ(next(c, 1), kNone);
  EXPECT_EQ(next(c, 0), kNone);
}

TEST(PartClaims, RejectsBadBoundsAndPieces) {
  const std::vector<int64_t> one = {0};
  EXPECT_THROW(PartClaims(one, 1), Error);
  const std::vector<int64_t> not_from_zero = {1, 5};
  EXPECT_THROW(PartClaims(not_from_zero, 1), Error);
  const std::vector<int64_t> descending = {0, 6, 5};
  EXPECT_THROW(PartClaims(descending, 1), Error);
  const std::vector<int64_t> too_long = {0, int64_t(1) << 31};
  EXPECT_THROW(PartClaims(too_long, 1), Error);
  const std::vector<int64_t> ok = {0, 5};
  EXPECT_THROW(PartClaims(ok, 0), Error);
  PartClaims c(ok, 1);
  int64_t b = 0, e = 0;
  EXPECT_THROW(c.claim(1, &b, &e), Error);
}

// Threads claim at once (run under TSan by the `threads` label): every index exactly once. 4 parts
// live in the object, 12 on the heap.
TEST(PartClaims, ConcurrentClaimsCoverEveryIndexOnce) {
  const int64_t n = 10007;
  // Uneven parts, as byte-weighted edges give.
  const std::vector<std::vector<int64_t>> part_bounds = {
      {0, 100, 5000, 5001, n}, {0, 1, 2, 3, 900, 901, 2000, 4000, 4000, 7000, 9000, 10000, n}};
  for (const std::vector<int64_t>& bounds : part_bounds) {
    const int n_threads = int(bounds.size()) - 1;
    for (int64_t piece : {1, 3, 64}) {
      PartClaims c(bounds, piece);
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::vector<std::thread> threads;
      for (int t = 0; t < n_threads; ++t)
        threads.emplace_back([&, t] {
          int64_t b = 0, e = 0;
          while (c.claim(t, &b, &e)) {
            ASSERT_LT(b, e);
            ASSERT_LE(e - b, piece);
            for (int64_t i = b; i < e; ++i) hits[size_t(i)].fetch_add(1, std::memory_order_relaxed);
          }
        });
      for (auto& t : threads) t.join();
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(hits[size_t(i)].load(), 1) << "index " << i << ", " << n_threads << " parts, pieces of " << piece;
    }
  }
}

}  // namespace
}  // namespace ork
