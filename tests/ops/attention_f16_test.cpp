// ops::attention_f16 (attention_f16.h): reading an f16 cache in place gives ops::attention's outputs on
// the f32 values of the rows bit for bit — GQA groups, windows, soft-capping, a later first row,
// several query tokens, any thread count — and refuses what attention() refuses.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/error.h"
#include "core/fp16.h"
#include "ops/attention_f16.h"

namespace ork::ops {
namespace {

struct Case {
  int64_t n_q, pos0, n_head, n_head_kv, head_dim, window, kv_pos0;
  float softcap;
};

TEST(AttentionF16, EqualsAttentionOnTheConvertedRowsBitForBit) {
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  for (const Case c : {Case{1, 0, 1, 1, 8, 0, 0, 0}, Case{1, 130, 12, 2, 128, 0, 0, 0}, Case{1, 77, 4, 4, 16, 0, 0, 0},
                       Case{3, 20, 8, 2, 32, 0, 0, 0}, Case{1, 60, 4, 2, 16, 9, 0, 0}, Case{2, 60, 4, 2, 16, 9, 50, 0},
                       Case{1, 33, 6, 3, 24, 0, 0, 30.0f},
                       // prefill tiles and several key blocks (64 keys each), with and without a ring's later first row
                       Case{11, 140, 8, 4, 64, 0, 0, 0}, Case{6, 300, 4, 2, 64, 100, 180, 0},
                       Case{5, 90, 12, 4, 13, 0, 0, 0}, Case{1, 1000, 8, 4, 64, 0, 0, 0},
                       // one token over the streamed decode order (≥ detail::kStreamedDecodeKeys keys):
                       // no GQA, one KV head, V tails, a window over a ring's later first row, soft-capping
                       Case{1, 800, 4, 4, 64, 0, 0, 0}, Case{1, 600, 6, 1, 13, 0, 0, 0},
                       Case{1, 1300, 4, 2, 40, 700, 500, 0}, Case{1, 640, 4, 2, 24, 0, 0, 30.0f}}) {
    const int64_t kv = c.n_head_kv * c.head_dim, n_rows = c.pos0 + c.n_q - c.kv_pos0;
    std::vector<float> q(size_t(c.n_q * c.n_head * c.head_dim));
    for (float& x : q) x = nd(rng);
    std::vector<uint16_t> kh(size_t(n_rows * kv)), vh(kh.size());
    std::vector<float> kf(kh.size()), vf(kh.size());
    for (size_t i = 0; i < kh.size(); ++i) {
      kh[i] = f32_to_f16(nd(rng)), vh[i] = f32_to_f16(nd(rng));
      kf[i] = f16_to_f32(kh[i]), vf[i] = f16_to_f32(vh[i]);
    }
    AttentionOptions o;
    o.window = c.window, o.kv_pos0 = c.kv_pos0, o.softcap = c.softcap;
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      std::vector<float> want(q.size()), got(q.size(), -1.0f);
      attention(pool, q.data(), c.n_q, c.pos0, c.n_head, c.n_head_kv, c.head_dim, kf.data(), vf.data(), want.data(), o);
      attention_f16(pool, q.data(), c.n_q, c.pos0, c.n_head, c.n_head_kv, c.head_dim, kh.data(), vh.data(), got.data(), o);
      EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0)
          << "n_q " << c.n_q << " pos0 " << c.pos0 << " heads " << c.n_head << "/" << c.n_head_kv << " threads " << threads;
    }
  }
}

TEST(AttentionF16, RefusesWhatAttentionRefuses) {
  ThreadPool pool(1);
  std::vector<float> q(64), out(64);
  std::vector<uint16_t> k(64), v(64);
  EXPECT_THROW(attention_f16(pool, q.data(), 1, 0, 3, 2, 8, k.data(), v.data(), out.data(), {}), Error);
  AttentionOptions late;
  late.kv_pos0 = 5;  // no window: a later first row cannot hold every key
  EXPECT_THROW(attention_f16(pool, q.data(), 1, 7, 2, 2, 8, k.data(), v.data(), out.data(), late), Error);
}

}  // namespace
}  // namespace ork::ops
