// ops::attention_blocked against ops::attention: bit-identical outputs over shapes (GQA groups of 1..8,
// head sizes off the lane width, tiles that do not divide the tokens), positions, windows, soft-caps
// and thread counts; the same errors.
#include "ops/attention_blocked.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/error.h"

namespace ork::ops {
namespace {

struct Shape {
  int64_t n_q, pos0, n_head, n_head_kv, head_dim, window;
  float softcap, scale;
};

TEST(AttentionBlocked, BitIdenticalToAttentionAcrossShapesAndThreads) {
  const Shape shapes[] = {
      {1, 0, 4, 2, 8, 0, 0, 0},     {3, 0, 4, 2, 8, 0, 0, 0},      {7, 5, 4, 4, 13, 0, 0, 0},
      {17, 0, 8, 1, 64, 0, 0, 0},   {9, 3, 6, 3, 3, 0, 30, 0},     {21, 11, 4, 2, 16, 5, 0, 0},
      {12, 0, 8, 2, 32, 4, 50, 0.1f}, {33, 40, 2, 2, 24, 0, 0, 0.25f}, {5, 2, 4, 1, 7, 1, 0, 0},
      {64, 0, 4, 2, 64, 16, 0, 0},
      // past one key block (detail::kAttentionKeyBlock = 64 keys): the grid kernels over blocks,
      // groups of 4, 2 and 1 rows, head sizes with and without a lane tail and a 16-wide V tail
      {9, 150, 8, 4, 64, 0, 0, 0},  {6, 200, 6, 2, 24, 0, 0, 0},   {5, 131, 12, 4, 13, 0, 0, 0},
      {13, 100, 8, 1, 64, 70, 0, 0}, {7, 129, 16, 2, 40, 0, 20, 0}, {1, 300, 8, 2, 64, 0, 0, 0},
      {2, 257, 3, 1, 8, 100, 0, 0.2f},
      // one token below the streamed order (the KV heads shared among the threads, then claimed):
      // more KV heads than threads, unevenly shared, a window, one KV head
      {1, 200, 6, 3, 24, 50, 0, 0}, {1, 90, 10, 5, 13, 0, 20, 0}, {1, 40, 4, 1, 64, 0, 0, 0.3f},
      // one token past detail::kStreamedDecodeKeys keys (the streamed decode order): no GQA, groups
      // of 2 and 4, one KV head, head sizes with lane and V tails, a window, soft-capping
      {1, 600, 4, 4, 64, 0, 0, 0},  {1, 700, 8, 4, 64, 0, 0, 0},   {1, 520, 8, 2, 40, 0, 0, 0},
      {1, 900, 6, 1, 13, 0, 0, 0},  {1, 1100, 4, 2, 24, 600, 0, 0}, {1, 530, 2, 2, 72, 0, 30, 0},
  };
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  ThreadPool one(1), two(2), three(3);
  for (const Shape& c : shapes) {
    const int64_t n_kv = c.pos0 + c.n_q;
    std::vector<float> q(size_t(c.n_q * c.n_head * c.head_dim)), k(size_t(n_kv * c.n_head_kv * c.head_dim)),
        v(k.size());
    for (float& x : q) x = nd(rng);
    for (float& x : k) x = nd(rng);
    for (float& x : v) x = nd(rng);
    AttentionOptions o;
    o.window = c.window;
    o.softcap = c.softcap;
    o.scale = c.scale;
    std::vector<float> want(q.size());
    attention(one, q.data(), c.n_q, c.pos0, c.n_head, c.n_head_kv, c.head_dim, k.data(), v.data(), want.data(), o);
    for (ThreadPool* pool : {&one, &two, &three}) {
      std::vector<float> got(q.size(), -1.0f);
      attention_blocked(*pool, q.data(), c.n_q, c.pos0, c.n_head, c.n_head_kv, c.head_dim, k.data(), v.data(),
                        got.data(), o);
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
          << "n_q " << c.n_q << " pos0 " << c.pos0 << " heads " << c.n_head << "/" << c.n_head_kv << " head_dim "
          << c.head_dim << " window " << c.window << " threads " << pool->size();
    }
  }
}

TEST(AttentionBlocked, RefusesWhatAttentionRefuses) {
  ThreadPool pool(1);
  float x[64] = {};
  AttentionOptions o;
  EXPECT_THROW(attention_blocked(pool, x, 1, 0, 3, 2, 4, x, x, x, o), Error);  // 3 heads over 2 KV heads
  EXPECT_THROW(attention_blocked(pool, x, -1, 0, 2, 2, 4, x, x, x, o), Error);
  o.window = -1;
  EXPECT_THROW(attention_blocked(pool, x, 1, 0, 2, 2, 4, x, x, x, o), Error);
  o.window = 0;
  o.softcap = NAN;
  EXPECT_THROW(attention_blocked(pool, x, 1, 0, 2, 2, 4, x, x, x, o), Error);
  attention_blocked(pool, x, 0, 0, 2, 2, 4, x, x, x, AttentionOptions{});  // no tokens: nothing to do
}

}  // namespace
}  // namespace ork::ops
