// The address arithmetic of ops/prefetch.h (which lines a decode tile asks for, and where); the
// prefetches themselves are hints with no observable effect.
#include "ops/prefetch.h"

#include <gtest/gtest.h>

#include <vector>

namespace ork::ops {
namespace {

TEST(PartLines, ThePartsOfABlockAskForEveryLineOnceInOrder) {
  for (int64_t lines : {1, 2, 7, 8, 9, 17, 105}) {
    for (int parts : {1, 2, 3, 8}) {
      std::vector<int> asked(static_cast<size_t>(lines), 0);
      int64_t next = 0;
      for (int part = 0; part < parts; ++part) {
        const LineRange r = part_lines(lines, part, parts);
        EXPECT_EQ(r.first, next) << lines << " lines, part " << part << " of " << parts;
        EXPECT_LE(r.first, r.last);
        for (int64_t l = r.first; l < r.last; ++l) ++asked[static_cast<size_t>(l)];
        next = r.last;
      }
      EXPECT_EQ(next, lines);
      for (int n : asked) EXPECT_EQ(n, 1);
    }
  }
}

TEST(PartLines, SpreadsTheQ8_0PairBlockOverItsEightByteGroups) {
  // 1088 bytes = 17 lines over 8 groups: two lines a group, the last group three.
  const int64_t expect[8][2] = {{0, 2}, {2, 4}, {4, 6}, {6, 8}, {8, 10}, {10, 12}, {12, 14}, {14, 17}};
  for (int g = 0; g < 8; ++g) {
    EXPECT_EQ(part_lines(17, g, 8).first, expect[g][0]);
    EXPECT_EQ(part_lines(17, g, 8).last, expect[g][1]);
  }
}

TEST(PairBlockAhead, WithinThePairThenTheNextPairThenNothing) {
  const uint8_t* pair = reinterpret_cast<const uint8_t*>(uintptr_t(1) << 20);
  const int64_t nb = 4, block = 1088, pair_bytes = 2 * nb * block;
  EXPECT_EQ(pair_block_ahead(pair, pair_bytes, block, nb, 3), pair + 3 * block);
  EXPECT_EQ(pair_block_ahead(pair, pair_bytes, block, nb, 4), pair + pair_bytes);
  EXPECT_EQ(pair_block_ahead(pair, pair_bytes, block, nb, 7), pair + pair_bytes + 3 * block);
  EXPECT_EQ(pair_block_ahead(pair, pair_bytes, block, nb, 8), nullptr);
}

}  // namespace
}  // namespace ork::ops
