#include "ops/attention_tiles.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/fp16_rows.h"
#include "core/part_claims.h"
#include "ops/attention_blocked.h"
#include "ops/cpu_features.h"
#include "ops/prefetch.h"
#include "ops/softmax.h"
#include "ops/vec.h"

// V8 values cross only always_inline helpers, never a call: GCC's note that a 32-byte vector argument
// has no fixed ABI without AVX (-Wpsabi) does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ork::ops::detail {
namespace {

#include "ops/attention_grid.inc"

ORK_FMA_CLONES void block_scores(Row* rows, int64_t n_rows, const Block<float>& b, int64_t head_dim, float scale) {
  block_scores_of(rows, n_rows, b, head_dim, scale);
}
ORK_FMA_CLONES void block_values(Row* rows, int64_t n_rows, const Block<float>& b, int64_t head_dim) {
  block_values_of(rows, n_rows, b, head_dim);
}

// Asks for every cache line of `rows` rows of `width` values of the KV array f32 or f16 (the non-null
// one), row r starting at element first + r · stride.
void prefetch_kv_rows(const float* f32, const uint16_t* f16, int64_t first, int64_t rows, int64_t width,
                      int64_t stride) {
  const int64_t es = f32 != nullptr ? 4 : 2;
  const auto* base = f32 != nullptr ? reinterpret_cast<const uint8_t*>(f32) : reinterpret_cast<const uint8_t*>(f16);
  for (int64_t r = 0; r < rows; ++r) prefetch_lines<PrefetchInto::kL1>(base + (first + r * stride) * es, width * es);
}

// A row's scores [first, last] soft-capped (softcap > 0) and softmaxed, its output zeroed for the
// value sums.
void normalize_row(Row& r, float softcap, int64_t head_dim) {
  const int64_t n_keys = r.last + 1 - r.first;
  if (softcap > 0.0f)
    for (int64_t i = 0; i < n_keys; ++i) r.s[i] = softcap * std::tanh(r.s[i] / softcap);
  softmax(r.s, n_keys);
  std::fill(r.o, r.o + head_dim, 0.0f);
}

// Decode over fewer than kStreamedDecodeKeys keys: each thread asks for the K and V slices of its
// share of the KV heads at its first keys (up to this many bytes each) before the per-head tasks read
// them: the cache rows were evicted by the weights streamed since the last token, and each head's
// slices alone (head_dim values at a stride of all heads') are short streams that wait on memory one
// block after the other.
constexpr int64_t kDecodeKvPrefetchBytes = 256 << 10;

// One query token over many keys (decode at depth), in the order that streams the cache: the
// per-(tile, KV head) order reads head_dim values of each position's row at a stride of all the KV
// heads' values, too short a stream for the hardware prefetchers — at 4096 keys of the 150 M shape
// 70 % of a decode step waited in those loads. Here (1) the scores, parallel over blocks of
// kStreamKeys positions, each block's rows read whole (all KV heads) and scored by every query head;
// (2) parallel over contiguous ranges of KV heads, their rows' soft-cap and softmax, then their
// values: each range's slice of every position's V row, keys ascending. Each score is the same
// score_grid dot and each output element the same fma chain in ascending j as attention_tiles, so
// the results are the same bits. rows: n_head rows (query head h at h), keys [rows[0].first, last].
void decode_streamed(ThreadPool& pool, Row* rows, int64_t n_head, int64_t n_head_kv, int64_t head_dim,
                     const KvRows& kv, int64_t kv_pos0, float scale, float softcap) {
  const int64_t group = n_head / n_head_kv, kv_stride = n_head_kv * head_dim;
  const int64_t j_first = rows[0].first, j_end = rows[0].last + 1;
  const int64_t n_blocks = (j_end - j_first + kStreamKeys - 1) / kStreamKeys;
  const bool f16_in_place = kv.k16 != nullptr && grid_f16_available();  // as in attention_tiles
  pool.parallel_for(n_blocks, 16, [&](int64_t b0, int64_t b1) {
    thread_local std::vector<float> wide;
    if (kv.k16 != nullptr && !f16_in_place && wide.size() < size_t(kStreamKeys * kv_stride))
      wide.resize(size_t(kStreamKeys * kv_stride));
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t j0 = j_first + b * kStreamKeys, j1 = std::min(j_end, j0 + kStreamKeys);
      if (b + 2 < b1) {  // two blocks ahead: whole rows, one stream
        const int64_t a0 = j0 + 2 * kStreamKeys, a1 = std::min(j_end, a0 + kStreamKeys);
        prefetch_kv_rows(kv.k32, kv.k16, (a0 - kv_pos0) * kv_stride, 1, (a1 - a0) * kv_stride, 0);
      }
      if (f16_in_place) {
        for (int64_t g = 0; g < n_head_kv; ++g)
          block_scores_f16(rows + g * group, group, kv.k16 + (j0 - kv_pos0) * kv_stride + g * head_dim, kv_stride,
                            j0, j1, head_dim, scale);
        continue;
      }
      const float* k = kv.k32 != nullptr ? kv.k32 + (j0 - kv_pos0) * kv_stride : wide.data();
      if (kv.k32 == nullptr) f16_to_f32_n(kv.k16 + (j0 - kv_pos0) * kv_stride, (j1 - j0) * kv_stride, wide.data());
      for (int64_t g = 0; g < n_head_kv; ++g)
        block_scores(rows + g * group, group, Block<float>{k + g * head_dim, kv_stride, j0, j1}, head_dim, scale);
    }
  });
  const int64_t per = (n_head_kv + pool.size() - 1) / pool.size();
  pool.parallel_for(n_head_kv, per, [&](int64_t g0, int64_t g1) {
    thread_local std::vector<float> block;
    const int64_t width = (g1 - g0) * head_dim;
    for (int64_t r = g0 * group; r < g1 * group; ++r) normalize_row(rows[r], softcap, head_dim);
    const auto prefetch_slices = [&](int64_t a0, int64_t a1) {
      prefetch_kv_rows(kv.v32, kv.v16, (a0 - kv_pos0) * kv_stride + g0 * head_dim, a1 - a0, width, kv_stride);
    };
    const int64_t step = std::clamp<int64_t>(kStreamValueFloats / width, 1, kAttentionKeyBlock);
    // Sized for kAttentionKeyBlock positions though step are used: sized for step measured ≈ 3 %
    // slower in 3 paired ork bench runs at depth 4096, within this VM's noise; kept as measured.
    if (kv.v16 != nullptr && !f16_in_place && block.size() < size_t(kAttentionKeyBlock * width))
      block.resize(size_t(kAttentionKeyBlock * width));
    prefetch_slices(j_first, std::min(j_end, j_first + step));
    for (int64_t j0 = j_first; j0 < j_end; j0 += step) {
      const int64_t j1 = std::min(j_end, j0 + step);
      prefetch_slices(j1, std::min(j_end, j1 + step));  // the next block's slices
      if (f16_in_place) {
        for (int64_t g = g0; g < g1; ++g)
          block_values_f16(rows + g * group, group, kv.v16 + (j0 - kv_pos0) * kv_stride + g * head_dim, kv_stride, j0,
                            j1, head_dim);
        continue;
      }
      const float* v = kv.v32 + (j0 - kv_pos0) * kv_stride + g0 * head_dim;
      int64_t stride = kv_stride;
      if (kv.v32 == nullptr) {
        f16_to_f32_rows(kv.v16 + (j0 - kv_pos0) * kv_stride + g0 * head_dim, j1 - j0, width, kv_stride, block.data());
        v = block.data(), stride = width;
      }
      for (int64_t g = g0; g < g1; ++g)
        block_values(rows + g * group, group, Block<float>{v + (g - g0) * head_dim, stride, j0, j1}, head_dim);
    }
  });
}

}  // namespace

void attention_tiles(ThreadPool& pool, const float* q, int64_t n_q_tokens, int64_t pos0, int64_t n_head,
                     int64_t n_head_kv, int64_t head_dim, const KvRows& kv, float* out,
                     const AttentionOptions& options) {
  check_attention_args(n_q_tokens, pos0, n_head, n_head_kv, head_dim, options);
  if (n_q_tokens == 0) return;
  const int64_t group = n_head / n_head_kv;
  const float scale = options.scale > 0.0f ? options.scale : 1.0f / std::sqrt(float(head_dim));
  const float softcap = options.softcap;
  const int64_t window = options.window, kv_pos0 = options.kv_pos0;
  const int64_t kv_stride = n_head_kv * head_dim;  // values between consecutive positions
  const int64_t n_tiles = (n_q_tokens + kAttentionTileTokens - 1) / kAttentionTileTokens;
  auto first_key = [&](int64_t p) { return window > 0 ? std::max<int64_t>(0, p - window + 1) : 0; };
  if (n_q_tokens == 1 && pos0 + 1 - first_key(pos0) >= kStreamedDecodeKeys) {
    const int64_t j_first = first_key(pos0), n_keys = pos0 + 1 - j_first;
    // Per call, not thread_local: a kept buffer measured 6–9 % slower (its lines evicted by the
    // cache's rows between calls; a fresh one is zeroed, so written in cache).
    std::vector<float> scores(static_cast<size_t>(n_head * n_keys));
    std::vector<Row> head_rows(static_cast<size_t>(n_head));
    for (int64_t h = 0; h < n_head; ++h)
      head_rows[size_t(h)] = Row{q + h * head_dim, out + h * head_dim, scores.data() + h * n_keys, j_first, pos0};
    decode_streamed(pool, head_rows.data(), n_head, n_head_kv, head_dim, kv, kv_pos0, scale, softcap);
    return;
  }

  // Decode on f16 rows where grid_f16_available(): the kernels widen each key's values as they load
  // them. A prefill tile's rows (up to kAttentionTileTokens tokens × the group) would each widen
  // every key again: it converts each block once into `block` instead.
  const bool f16_in_place = n_q_tokens == 1 && kv.k16 != nullptr && grid_f16_available();
  // Tasks [begin, end) on the calling thread.
  const auto run_tasks = [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> scores, block;
    thread_local std::vector<Row> rows;
    if (kv.k16 != nullptr && !f16_in_place && block.size() < size_t(kAttentionKeyBlock * head_dim))
      block.resize(size_t(kAttentionKeyBlock * head_dim));
    // The f32 rows of keys [j0, j1) of KV head g in K (k32/k16) or V.
    const auto load = [&](const float* f32, const uint16_t* f16, int64_t g, int64_t j0, int64_t j1) {
      if (f32 != nullptr) return Block<float>{f32 + (j0 - kv_pos0) * kv_stride + g * head_dim, kv_stride, j0, j1};
      f16_to_f32_rows(f16 + (j0 - kv_pos0) * kv_stride + g * head_dim, j1 - j0, head_dim, kv_stride, block.data());
      return Block<float>{block.data(), head_dim, j0, j1};
    };
    // Asks for the rows of keys [j0, j1) of KV head g in K or V: the rows of one head are a few
    // cache lines at a stride of all heads' rows, too short a stream for the hardware prefetcher,
    // so each block of keys is asked for while the one before it is computed.
    const auto prefetch_rows = [&](const float* f32, const uint16_t* f16, int64_t g, int64_t j0, int64_t j1) {
      prefetch_kv_rows(f32, f16, (j0 - kv_pos0) * kv_stride + g * head_dim, j1 - j0, head_dim, kv_stride);
    };
    // Task `task`: KV head g, query tokens [t0, t1) (the tiles with the most keys first).
    struct Span {
      int64_t g, t0, t1;
    };
    const auto span = [&](int64_t task) {
      const int64_t t0 = (n_tiles - 1 - task / n_head_kv) * kAttentionTileTokens;
      return Span{task % n_head_kv, t0, std::min(n_q_tokens, t0 + kAttentionTileTokens)};
    };
    // The first block of keys of task `task`'s first row.
    const auto prefetch_first_keys = [&](int64_t task) {
      const Span sp = span(task);
      const int64_t j_first = first_key(pos0 + sp.t0);
      prefetch_rows(kv.k32, kv.k16, sp.g, j_first, std::min(pos0 + sp.t1, j_first + kAttentionKeyBlock));
    };
    if (begin < end) prefetch_first_keys(begin);
    for (int64_t task = begin; task < end; ++task) {
      const auto [g, t0, t1] = span(task);
      const int64_t stride = pos0 + t1 - first_key(pos0 + t1 - 1);  // keys of the last token: the most
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
      const int64_t j_first = rows[0].first, j_end = rows[size_t(n_rows - 1)].last + 1;
      for (int64_t j0 = j_first; j0 < j_end; j0 += kAttentionKeyBlock) {
        if (j0 + kAttentionKeyBlock < j_end)  // the next block of keys, or after the last the first of values
          prefetch_rows(kv.k32, kv.k16, g, j0 + kAttentionKeyBlock, std::min(j_end, j0 + 2 * kAttentionKeyBlock));
        else
          prefetch_rows(kv.v32, kv.v16, g, j_first, std::min(j_end, j_first + kAttentionKeyBlock));
        const int64_t j1 = std::min(j_end, j0 + kAttentionKeyBlock);
        if (f16_in_place)
          block_scores_f16(rows.data(), n_rows, kv.k16 + (j0 - kv_pos0) * kv_stride + g * head_dim, kv_stride, j0,
                            j1, head_dim, scale);
        else
          block_scores(rows.data(), n_rows, load(kv.k32, kv.k16, g, j0, j1), head_dim, scale);
      }
      for (Row& r : rows) normalize_row(r, softcap, head_dim);
      for (int64_t j0 = j_first; j0 < j_end; j0 += kAttentionKeyBlock) {
        if (j0 + kAttentionKeyBlock < j_end) {  // the next block of values, or after the last the next task's keys
          prefetch_rows(kv.v32, kv.v16, g, j0 + kAttentionKeyBlock, std::min(j_end, j0 + 2 * kAttentionKeyBlock));
        } else if (task + 1 < end) {
          prefetch_first_keys(task + 1);
        }
        const int64_t j1 = std::min(j_end, j0 + kAttentionKeyBlock);
        if (f16_in_place)
          block_values_f16(rows.data(), n_rows, kv.v16 + (j0 - kv_pos0) * kv_stride + g * head_dim, kv_stride, j0,
                            j1, head_dim);
        else
          block_values(rows.data(), n_rows, load(kv.v32, kv.v16, g, j0, j1), head_dim);
      }
    }
  };
  if (n_q_tokens > 1) {
    pool.parallel_for(n_tiles * n_head_kv, 1, run_tasks);
    return;
  }
  // Decode: a task is a KV head. Each thread first asks for the K and V slices of its own share of
  // the heads at every key (up to kDecodeKvPrefetchBytes each), so all threads wait on memory at
  // once rather than the caller alone for all of them, then works through its heads and the others'
  // left (PartClaims). Depth 256 on the 150 M Q4_0 mix: a decode step 4–5 % shorter (docs/ops.md).
  const int threads = pool.size();
  std::vector<int64_t> bounds(size_t(threads) + 1);
  for (int t = 0; t <= threads; ++t) bounds[size_t(t)] = n_head_kv * t / threads;
  PartClaims claims(bounds, 1);
  pool.run([&](int t, int) {
    const int64_t g0 = bounds[size_t(t)], g1 = bounds[size_t(t) + 1];
    if (g0 < g1) {
      const int64_t j_first = first_key(pos0), width = (g1 - g0) * head_dim;
      const int64_t slice_bytes = width * (kv.k32 != nullptr ? 4 : 2);
      const int64_t keys = std::min(pos0 + 1 - j_first, std::max<int64_t>(1, kDecodeKvPrefetchBytes / slice_bytes));
      const int64_t first = (j_first - kv_pos0) * kv_stride + g0 * head_dim;
      prefetch_kv_rows(kv.k32, kv.k16, first, keys, width, kv_stride);
      prefetch_kv_rows(kv.v32, kv.v16, first, keys, width, kv_stride);
    }
    int64_t begin = 0, end = 0;
    while (claims.claim(t, &begin, &end)) run_tasks(begin, end);
  });
}

}  // namespace ork::ops::detail
