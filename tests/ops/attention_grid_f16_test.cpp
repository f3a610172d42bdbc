// ops::detail::block_scores_f16 / block_values_f16 (attention_tiles.h): the tile kernels on binary16
// rows read in place give, for rows with any key ranges (groups of 4, 2 and 1 rows, keys before and
// after a group's common keys, head_dim tails), the contract's values bit for bit: every score
// vec::dot_fma(q, k_j) · scale, every output element fma(s_j, v_j[d], ·) over the row's keys in
// ascending j.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/fp16.h"
#include "ops/attention_tiles.h"
#include "ops/vec.h"

namespace ork::ops::detail {
namespace {

TEST(AttentionGridF16, EqualsTheContractBitForBit) {
  if (!grid_f16_available()) GTEST_SKIP() << "no in-place f16 kernels on this CPU";
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 1.5f);
  for (const int64_t head_dim : {64, 13, 40}) {
    const int64_t stride = 3 * head_dim + 5;  // a row of several heads: this head's slice at a stride
    const int64_t j0 = 100, j1 = 164;         // one block of 64 keys
    std::vector<uint16_t> k(size_t((j1 - j0) * stride)), v(k.size());
    for (size_t i = 0; i < k.size(); ++i) k[i] = f32_to_f16(nd(rng)), v[i] = f32_to_f16(nd(rng));
    // 7 rows (a group of 4, of 2, of 1), first/last non-decreasing as the tiles order them; the
    // ranges start before, inside and past the block and end inside or past it.
    const int64_t first[7] = {90, 100, 101, 120, 120, 150, 163}, last[7] = {140, 141, 150, 163, 170, 170, 200};
    std::vector<std::vector<float>> q(7), s(7), o(7), want_s(7), want_o(7);
    std::vector<Row> rows(7);
    const float scale = 0.125f;
    for (int r = 0; r < 7; ++r) {
      q[r].resize(size_t(head_dim));
      for (float& x : q[r]) x = nd(rng);
      s[r].assign(size_t(last[r] + 1 - first[r]), -7.0f);
      o[r].assign(size_t(head_dim), 0.0f);
      for (float& x : o[r]) x = nd(rng);  // value sums add to what the output holds
      want_s[r] = s[r], want_o[r] = o[r];
      rows[size_t(r)] = Row{q[r].data(), o[r].data(), s[r].data(), first[r], last[r]};
    }
    block_scores_f16(rows.data(), 7, k.data(), stride, j0, j1, head_dim, scale);
    for (int r = 0; r < 7; ++r) {
      std::vector<float> kf(static_cast<size_t>(head_dim));
      for (int64_t j = std::max(j0, first[r]); j <= std::min(j1 - 1, last[r]); ++j) {
        for (int64_t d = 0; d < head_dim; ++d) kf[size_t(d)] = f16_to_f32(k[size_t((j - j0) * stride + d)]);
        want_s[r][size_t(j - first[r])] = vec::dot_fma(q[r].data(), kf.data(), head_dim) * scale;
      }
      EXPECT_EQ(std::memcmp(s[r].data(), want_s[r].data(), s[r].size() * sizeof(float)), 0)
          << "scores of row " << r << ", head_dim " << head_dim;
    }
    block_values_f16(rows.data(), 7, v.data(), stride, j0, j1, head_dim);
    for (int r = 0; r < 7; ++r) {
      for (int64_t d = 0; d < head_dim; ++d) {
        float acc = want_o[r][size_t(d)];
        for (int64_t j = std::max(j0, first[r]); j <= std::min(j1 - 1, last[r]); ++j)
          acc = std::fma(s[r][size_t(j - first[r])], f16_to_f32(v[size_t((j - j0) * stride + d)]), acc);
        want_o[r][size_t(d)] = acc;
      }
      EXPECT_EQ(std::memcmp(o[r].data(), want_o[r].data(), o[r].size() * sizeof(float)), 0)
          << "values of row " << r << ", head_dim " << head_dim;
    }
  }
}

}  // namespace
}  // namespace ork::ops::detail
