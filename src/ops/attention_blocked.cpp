#include "ops/attention_blocked.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "ops/cpu_features.h"
#include "ops/softmax.h"
#include "ops/vec.h"

namespace ork::ops {
namespace {

// One query row of a tile: its head's q, output, and key range [first, last] (positions).
struct Row {
  const float* q;
  float* o;
  float* s;  // scores of keys first..last
  int64_t first, last;
};

// first and last are non-decreasing over the rows, so the rows that see key j are [a, b): b past every
// row with first <= j, a past every row with last < j.
inline void advance(const Row* rows, int64_t n_rows, int64_t j, int64_t& a, int64_t& b) {
  while (b < n_rows && rows[b].first <= j) ++b;
  while (a < b && rows[a].last < j) ++a;
}

// Scores of every row against every key it sees: K row j (kc + j · kv_stride) is read from memory once
// and stays in L1 while the rows that see it are dotted with it.
ORK_VECTOR_CLONES void tile_scores(const float* kc, int64_t kv_pos0, int64_t kv_stride, Row* rows, int64_t n_rows,
                                   int64_t head_dim, float scale) {
  int64_t a = 0, b = 0;
  for (int64_t j = rows[0].first; j <= rows[n_rows - 1].last; ++j) {
    advance(rows, n_rows, j, a, b);
    const float* kj = kc + (j - kv_pos0) * kv_stride;
    for (int64_t r = a; r < b; ++r) rows[r].s[j - rows[r].first] = vec::dot(rows[r].q, kj, head_dim) * scale;
  }
}

// o_r = Σ_j s_r[j] · V row j, j ascending for every row (as attention() adds them), V row j read once.
ORK_VECTOR_CLONES void tile_values(const float* vc, int64_t kv_pos0, int64_t kv_stride, Row* rows, int64_t n_rows,
                                   int64_t head_dim) {
  int64_t a = 0, b = 0;
  for (int64_t j = rows[0].first; j <= rows[n_rows - 1].last; ++j) {
    advance(rows, n_rows, j, a, b);
    const float* vj = vc + (j - kv_pos0) * kv_stride;
    for (int64_t r = a; r < b; ++r) vec::axpy(rows[r].s[j - rows[r].first], vj, rows[r].o, head_dim);
  }
}

}  // namespace

void attention_blocked(ThreadPool& pool, const float* q, int64_t n_q_tokens, int64_t pos0, int64_t n_head,
                       int64_t n_head_kv, int64_t head_dim, const float* k_cache, const float* v_cache,
                       float* out, const AttentionOptions& options) {
  check_attention_args(n_q_tokens, pos0, n_head, n_head_kv, head_dim, options);
  if (n_q_tokens == 0) return;
  const int64_t group = n_head / n_head_kv;
  const float scale = options.scale > 0.0f ? options.scale : 1.0f / std::sqrt(float(head_dim));
  const float softcap = options.softcap;
  const int64_t window = options.window;
  const int64_t kv_stride = n_head_kv * head_dim;
  const int64_t n_tiles = (n_q_tokens + kAttentionTileTokens - 1) / kAttentionTileTokens;
  auto first_key = [&](int64_t p) { return window > 0 ? std::max<int64_t>(0, p - window + 1) : 0; };

  pool.parallel_for(n_tiles * n_head_kv, 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> scores;
    thread_local std::vector<Row> rows;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t tile = task / n_head_kv, g = task % n_head_kv;
      const int64_t t0 = tile * kAttentionTileTokens;
      const int64_t t1 = std::min(n_q_tokens, t0 + kAttentionTileTokens);
      const int64_t stride = pos0 + t1 - first_key(pos0 + t1 - 1);  // keys of the last token: min(p + 1, window), the most
      const int64_t n_rows = (t1 - t0) * group;
      if (scores.size() < size_t(n_rows * stride)) scores.resize(size_t(n_rows * stride));
      rows.resize(size_t(n_rows));
      for (int64_t t = t0; t < t1; ++t) {  // rows in token order, then head: first/last non-decreasing
        const int64_t p = pos0 + t;
        for (int64_t hh = 0; hh < group; ++hh) {
          const int64_t r = (t - t0) * group + hh, h = g * group + hh;
          rows[size_t(r)] = Row{q + (t * n_head + h) * head_dim, out + (t * n_head + h) * head_dim,
                                scores.data() + r * stride, first_key(p), p};
        }
      }
      tile_scores(k_cache + g * head_dim, options.kv_pos0, kv_stride, rows.data(), n_rows, head_dim, scale);
      for (Row& r : rows) {
        const int64_t n_keys = r.last + 1 - r.first;
        if (softcap > 0.0f) {
          for (int64_t i = 0; i < n_keys; ++i) r.s[i] = softcap * std::tanh(r.s[i] / softcap);
        }
        softmax(r.s, n_keys);
        std::fill(r.o, r.o + head_dim, 0.0f);
      }
      tile_values(v_cache + g * head_dim, options.kv_pos0, kv_stride, rows.data(), n_rows, head_dim);
    }
  });
}

}  // namespace ork::ops
