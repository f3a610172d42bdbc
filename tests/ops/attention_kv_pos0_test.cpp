// AttentionOptions::kv_pos0: K/V rows that start at a later position (a sliding window's ring
// unrolled) give outputs bit-identical to the whole cache, for ops::attention and
// ops::attention_blocked; a first row past what a query reads is refused.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/error.h"
#include "ops/attention.h"
#include "ops/attention_blocked.h"

namespace ork::ops {
namespace {

TEST(AttentionKvPos0, LaterFirstRowEqualsTheWholeCacheBitForBit) {
  struct Case {
    int64_t n_q, pos0, window;
  };
  const int64_t n_head = 4, n_head_kv = 2, head_dim = 16, kv = n_head_kv * head_dim;
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  ThreadPool pool(2);
  for (const Case c : {Case{1, 40, 8}, Case{9, 30, 5}, Case{17, 100, 16}, Case{4, 7, 4}, Case{1, 3, 8}}) {
    const int64_t n_kv = c.pos0 + c.n_q;
    std::vector<float> q(size_t(c.n_q * n_head * head_dim)), k(size_t(n_kv * kv)), v(k.size());
    for (float& x : q) x = nd(rng);
    for (float& x : k) x = nd(rng);
    for (float& x : v) x = nd(rng);
    AttentionOptions o;
    o.window = c.window;
    const int64_t first = std::max<int64_t>(0, c.pos0 - c.window + 1);
    for (bool blocked : {false, true}) {
      auto run = [&](const float* kc, const float* vc, int64_t kv_pos0) {
        AttentionOptions oo = o;
        oo.kv_pos0 = kv_pos0;
        std::vector<float> out(q.size());
        (blocked ? attention_blocked : static_cast<void (*)(ThreadPool&, const float*, int64_t, int64_t, int64_t,
                                                            int64_t, int64_t, const float*, const float*, float*,
                                                            const AttentionOptions&)>(attention))(
            pool, q.data(), c.n_q, c.pos0, n_head, n_head_kv, head_dim, kc, vc, out.data(), oo);
        return out;
      };
      const std::vector<float> want = run(k.data(), v.data(), 0);
      // Only rows first.. : a copy of them, so reading before it would read other memory.
      const std::vector<float> k2(k.begin() + first * kv, k.end()), v2(v.begin() + first * kv, v.end());
      const std::vector<float> got = run(k2.data(), v2.data(), first);
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
          << "n_q " << c.n_q << " pos0 " << c.pos0 << " window " << c.window << (blocked ? " blocked" : "");
    }
  }
}

TEST(AttentionKvPos0, AFirstRowPastWhatAQueryReadsIsRefused) {
  ThreadPool pool(1);
  std::vector<float> x(4096);
  AttentionOptions o;
  o.kv_pos0 = 3;  // no window: position 10 reads keys from 0
  EXPECT_THROW(attention(pool, x.data(), 1, 10, 2, 2, 4, x.data(), x.data(), x.data(), o), Error);
  o.window = 4;  // keys 7..10: a first row at 8 is too late, at 7 is right
  o.kv_pos0 = 8;
  EXPECT_THROW(attention(pool, x.data(), 1, 10, 2, 2, 4, x.data(), x.data(), x.data(), o), Error);
  EXPECT_THROW(attention_blocked(pool, x.data(), 2, 10, 2, 2, 4, x.data(), x.data(), x.data(), o), Error);
  o.kv_pos0 = 7;
  attention(pool, x.data(), 1, 10, 2, 2, 4, x.data(), x.data(), x.data(), o);
  o.kv_pos0 = -1;
  EXPECT_THROW(attention(pool, x.data(), 1, 10, 2, 2, 4, x.data(), x.data(), x.data(), o), Error);
}

}  // namespace
}  // namespace ork::ops
