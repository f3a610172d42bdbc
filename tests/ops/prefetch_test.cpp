// The address arithmetic of ops/prefetch.h (where a decode tile asks for the block ahead); the
// prefetches themselves are hints with no observable effect.
#include "ops/prefetch.h"

#include <gtest/gtest.h>

namespace ork::ops {
namespace {

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
