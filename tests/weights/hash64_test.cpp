#include "weights/hash64.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

namespace ork::weights {
namespace {

TEST(Hash64, GoldenValuesAreStable) {
  // Part of the .orkpack format: a change here must bump the format version.
  std::vector<uint8_t> b(100);
  for (size_t i = 0; i < b.size(); ++i) b[i] = uint8_t(i * 7 + 3);
  EXPECT_EQ(hash64(nullptr, 0, 0), hash64(b.data(), 0, 0));
  const uint64_t h100 = hash64(b.data(), 100, 0);
  const uint64_t h7 = hash64(b.data(), 7, 0);
  const uint64_t h0 = hash64(b.data(), 0, 0);
  EXPECT_EQ(h100, UINT64_C(0x1f0b51b74f312b3f));
  EXPECT_EQ(h7, UINT64_C(0x17b2c34582843e43));
  EXPECT_EQ(h0, UINT64_C(0xef46db3751d8e999));
}

TEST(Hash64, EveryLengthAndSeedDiffers) {
  std::vector<uint8_t> b(300, 0);
  std::set<uint64_t> seen;
  for (size_t n = 0; n <= b.size(); ++n) seen.insert(hash64(b.data(), n, 0));
  EXPECT_EQ(seen.size(), b.size() + 1);
  EXPECT_NE(hash64(b.data(), 64, 0), hash64(b.data(), 64, 1));
}

TEST(Hash64, EverySingleBitFlipChangesTheHash) {
  for (size_t n : {1, 7, 8, 31, 32, 33, 64, 95, 257}) {
    std::vector<uint8_t> b(n);
    for (size_t i = 0; i < n; ++i) b[i] = uint8_t(i * 131 + 17);
    const uint64_t h = hash64(b.data(), n, 42);
    for (size_t i = 0; i < n; ++i) {
      for (int bit = 0; bit < 8; ++bit) {
        b[i] ^= uint8_t(1u << bit);
        EXPECT_NE(hash64(b.data(), n, 42), h) << "n " << n << " byte " << i << " bit " << bit;
        b[i] ^= uint8_t(1u << bit);
      }
    }
  }
}

TEST(Hash64, SwappedWordsDiffer) {
  std::vector<uint64_t> w = {1, 2, 3, 4, 5, 6, 7, 8};
  const uint64_t h = hash64(w.data(), w.size() * 8, 0);
  std::swap(w[0], w[1]);
  EXPECT_NE(hash64(w.data(), w.size() * 8, 0), h);
  std::swap(w[0], w[1]);
  std::swap(w[0], w[4]);
  EXPECT_NE(hash64(w.data(), w.size() * 8, 0), h);
}

}  // namespace
}  // namespace ork::weights
