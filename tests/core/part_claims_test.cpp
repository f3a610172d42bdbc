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

TEST(PartClaims, PiecesShrinkToTheTailPieceAsAPartRunsOut) {
  const std::vector<int64_t> bounds = {0, 100};
  PartClaims c(bounds, 16, 2);
  const std::vector<Piece> want = {{0, 16},  {16, 32}, {32, 48}, {48, 64}, {64, 80},
                                   {80, 90}, {90, 95}, {95, 98}, {98, 100}};  // 20 left: halves, down to 2
  EXPECT_EQ(drain(c, 0), want);
  PartClaims t(std::vector<int64_t>{0, 40, 40}, 16, 4);  // a thief's pieces shrink alike, from the back
  EXPECT_EQ(next(t, 1), Piece(24, 40));
  EXPECT_EQ(next(t, 1), Piece(12, 24));  // 24 left: 12
  EXPECT_EQ(next(t, 0), Piece(0, 6));    // the owner, 12 left: 6
  EXPECT_EQ(next(t, 1), Piece(8, 12));   // 6 left: 4 (the tail piece)
  EXPECT_EQ(next(t, 0), Piece(6, 8));    // 2 left: both
  EXPECT_EQ(next(t, 1), kNone);
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
  EXPECT_THROW(PartClaims(ok, 4, 5), Error);   // a tail piece longer than a piece
  EXPECT_THROW(PartClaims(ok, 4, -1), Error);
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
    for (const auto& [piece, tail] : {std::pair<int64_t, int64_t>{1, 1}, {3, 3}, {64, 64}, {3, 1}, {64, 8}}) {
      PartClaims c(bounds, piece, tail);
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
        ASSERT_EQ(hits[size_t(i)].load(), 1) << "index " << i << ", " << n_threads << " parts, pieces of " << piece << " and " << tail;
    }
  }
}

}  // namespace
}  // namespace ork
