// KvCache ring layers: positions land in row p mod R; what load() gives back equals a full cache's
// rows for every position still held, across the wrap, in f32, f16 and q8_0; overwritten positions
// are refused; forget_from rolls the held range back; the bytes are those of R rows.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/error.h"
#include "model/kv_cache.h"

namespace ork::model {
namespace {

TEST(KvCacheRing, LoadsEqualAFullCacheAcrossTheWrap) {
  const int64_t n_ctx = 64, kv_dim = 32, rows = 11;
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (KvType t : {KvType::kF32, KvType::kF16, KvType::kQ8_0}) {
    SCOPED_TRACE(kv_type_name(t));
    KvCache full(2, n_ctx, kv_dim, t), ring(2, n_ctx, kv_dim, t, {0, rows});
    EXPECT_FALSE(ring.ring(0));
    EXPECT_TRUE(ring.ring(1));
    EXPECT_EQ(ring.bytes(), 2 * uint64_t(n_ctx + rows) * ring.row_bytes());
    int64_t pos = 0;
    for (int64_t n : {3, 5, 1, 7, 4, 2, 6, 1, 1, 9}) {  // runs that cross the ring's end
      std::vector<float> k(size_t(n * kv_dim)), v(k.size());
      for (float& x : k) x = nd(rng);
      for (float& x : v) x = nd(rng);
      for (int64_t l = 0; l < 2; ++l) {
        full.store(l, pos, n, k.data(), v.data());
        ring.store(l, pos, n, k.data(), v.data());
      }
      pos += n;
      EXPECT_EQ(ring.valid_from(1), std::max<int64_t>(0, pos - rows));
      EXPECT_EQ(ring.valid_from(0), 0);
      const int64_t from = ring.valid_from(1), m = pos - from;
      std::vector<float> a(size_t(m * kv_dim)), b(a.size()), c(a.size()), d(a.size());
      full.load(1, from, m, a.data(), b.data());
      ring.load(1, from, m, c.data(), d.data());
      EXPECT_EQ(a, c);
      EXPECT_EQ(b, d);
    }
    std::vector<float> k(size_t(rows * kv_dim)), v(k.size());
    EXPECT_THROW(ring.load(1, ring.valid_from(1) - 1, 1, k.data(), v.data()), Error);  // overwritten
    ring.load(0, 0, 1, k.data(), v.data());                                              // a full layer keeps it
    if (t == KvType::kF32) { EXPECT_THROW((void)ring.k_f32(1), Error); }  // no rows in place for a ring
    ring.forget_from(0);  // rolled back to nothing: the ring starts over
    EXPECT_EQ(ring.valid_from(1), 0);
    const KvCache copy = ring;
    EXPECT_EQ(copy.rows(1), rows);
    EXPECT_EQ(copy.valid_from(1), 0);
  }
  EXPECT_THROW(KvCache(2, 8, 32, KvType::kF32, {0, 9}), Error);  // a ring longer than the context
}

}  // namespace
}  // namespace ork::model
