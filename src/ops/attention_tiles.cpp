#include "ops/attention_tiles.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/fp16_rows.h"
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

// One query row of a tile: its head's q, output, and key range [first, last] (positions); s holds
// the scores of keys first..last.
struct Row {
  const float* q;
  float* o;
  float* s;
  int64_t first, last;
};

// Keys [j0, j1) as f32 rows: key j at p + (j − j0) · stride.
// The helpers below are always inlined into the ORK_FMA_CLONES functions at the end, so they are
// compiled for the clone's instruction set (a call would run them as baseline code).
struct Block {
  const float* p;
  int64_t stride, j0, j1;
  const float* key(int64_t j) const { return p + (j - j0) * stride; }
};

// Eight f32 lanes (GCC vector extension: one AVX2 register in the AVX2 clone, two SSE or NEON
// registers otherwise); + and * are the per-lane IEEE operations (no contraction: -ffp-contract=off).
typedef float V8 __attribute__((vector_size(32)));
static_assert(vec::kLanes == 8, "V8 holds vec.h's lanes");

[[gnu::always_inline]] inline V8 load8(const float* p) {
  V8 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store8(float* p, const V8& v) { __builtin_memcpy(p, &v, sizeof v); }
// a·b + c per lane with one rounding (vec::dot_fma's step): one vfmadd / fmla in the vector clones.
[[gnu::always_inline]] inline V8 fma8(const V8& a, const V8& b, const V8& c) {
  return V8{__builtin_fmaf(a[0], b[0], c[0]), __builtin_fmaf(a[1], b[1], c[1]), __builtin_fmaf(a[2], b[2], c[2]),
            __builtin_fmaf(a[3], b[3], c[3]), __builtin_fmaf(a[4], b[4], c[4]), __builtin_fmaf(a[5], b[5], c[5]),
            __builtin_fmaf(a[6], b[6], c[6]), __builtin_fmaf(a[7], b[7], c[7])};
}

// reduce_lanes of eight accumulators a0..a7 at once, the same tree per accumulator ((t0 + t4) +
// (t2 + t6)) + ((t1 + t5) + (t3 + t7)); the sums come out in the lane order a0, a2, a4, a6, a1, a3,
// a5, a7.
[[gnu::always_inline]] inline V8 reduce8(const V8& a0, const V8& a1, const V8& a2, const V8& a3, const V8& a4,
                                          const V8& a5, const V8& a6, const V8& a7) {
  // [x0+x4, x1+x5, x2+x6, x3+x7, y0+y4, ...]
  const auto halves = [](const V8& x, const V8& y) __attribute__((always_inline)) {
    return __builtin_shufflevector(x, y, 0, 1, 2, 3, 8, 9, 10, 11) +
           __builtin_shufflevector(x, y, 4, 5, 6, 7, 12, 13, 14, 15);
  };
  // [p0+p2, p1+p3, q0+q2, q1+q3, p4+p6, p5+p7, q4+q6, q5+q7]
  const auto quarters = [](const V8& p, const V8& q) __attribute__((always_inline)) {
    return __builtin_shufflevector(p, q, 0, 1, 8, 9, 4, 5, 12, 13) +
           __builtin_shufflevector(p, q, 2, 3, 10, 11, 6, 7, 14, 15);
  };
  const V8 u = quarters(halves(a0, a1), halves(a2, a3));  // [a0 a0 a2 a2 a1 a1 a3 a3] partial sums
  const V8 w = quarters(halves(a4, a5), halves(a6, a7));
  return __builtin_shufflevector(u, w, 0, 2, 8, 10, 4, 6, 12, 14) +
         __builtin_shufflevector(u, w, 1, 3, 9, 11, 5, 7, 13, 15);
}

// Scores of R rows against K consecutive keys from j, each vec::dot_fma(q, k_j) · scale: the same lanes
// (element i into lane i % kLanes, ascending), the same tail and reduce_lanes tree; R × K chains.
template <int R, int K>
[[gnu::always_inline]] inline void score_grid(Row* rows, const Block& b, int64_t j, int64_t n, float scale) {
  const float* q[R];
  for (int r = 0; r < R; ++r) q[r] = rows[r].q;
  const float* k = b.key(j);
  const int64_t ks = b.stride;
  V8 acc[R * K];  // row r, key j + c at r · K + c: unrolled, so every accumulator stays in a register
#pragma GCC unroll 8
  for (int m = 0; m < R * K; ++m) acc[m] = V8{};
  int64_t i = 0;
  for (; i + vec::kLanes <= n; i += vec::kLanes) {
    V8 kv[K];
#pragma GCC unroll 8
    for (int c = 0; c < K; ++c) kv[c] = load8(k + c * ks + i);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const V8 qv = load8(q[r] + i);
#pragma GCC unroll 8
      for (int c = 0; c < K; ++c) acc[r * K + c] = fma8(qv, kv[c], acc[r * K + c]);
    }
  }
  if constexpr (R * K == 8) {
    if (i == n) {  // no tail: the eight reduce_lanes trees side by side
      float out[8];
      store8(out, reduce8(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]) *
                      V8{scale, scale, scale, scale, scale, scale, scale, scale});
      for (int m = 0; m < 8; ++m) {  // reduce8's lane order: accumulators 0, 2, 4, 6, 1, 3, 5, 7
        const int a = m < 4 ? 2 * m : 2 * (m - 4) + 1, r = a / K, c = a % K;
        rows[r].s[j + c - rows[r].first] = out[m];
      }
      return;
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < K; ++c) {
      float lanes[vec::kLanes];
      store8(lanes, acc[r * K + c]);
      for (int l = 0; i + l < n; ++l) lanes[l] = __builtin_fmaf(q[r][i + l], k[c * ks + i + l], lanes[l]);
      rows[r].s[j + c - rows[r].first] = vec::reduce_lanes(lanes) * scale;
    }
  }
}

// o_r[d0 .. d0 + 8·NV) += s_r[j] · v_j[d0 ..] for keys j = c0..c1 ascending (vec::axpy_fma's fma(a, x,
// y) per element), R rows × NV vectors of 8 held in registers: R · NV independent fma chains, so a
// single row (decode without GQA) is not bound by one chain's latency.
template <int R, int NV>
[[gnu::always_inline]] inline void value_grid(Row* rows, const Block& b, int64_t c0, int64_t c1, int64_t d0) {
  V8 acc[R][NV];  // unrolled, so every accumulator stays in a register
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) acc[r][c] = load8(rows[r].o + d0 + 8 * c);
  for (int64_t j = c0; j <= c1; ++j) {
    const float* v = b.key(j) + d0;
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const float s = rows[r].s[j - rows[r].first];
      const V8 sv = {s, s, s, s, s, s, s, s};
#pragma GCC unroll 8
      for (int c = 0; c < NV; ++c) acc[r][c] = fma8(sv, load8(v + 8 * c), acc[r][c]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) store8(rows[r].o + d0 + 8 * c, acc[r][c]);
}

// The same for one dimension d (head_dim past the last multiple of 16).
template <int R>
[[gnu::always_inline]] inline void value_lane(Row* rows, const Block& b, int64_t c0, int64_t c1, int64_t d) {
  for (int r = 0; r < R; ++r) {
    float o = rows[r].o[d];
    for (int64_t j = c0; j <= c1; ++j) o = __builtin_fmaf(rows[r].s[j - rows[r].first], b.key(j)[d], o);
    rows[r].o[d] = o;
  }
}

// The keys of `b` a row sees, split around its group's common keys [c0, c1] (none when c0 > c1): those
// before them, [lead_lo, lead_hi], and those past them, [tail_lo, tail_hi] (lo > hi: none).
struct Split {
  int64_t lead_lo, lead_hi, tail_lo, tail_hi;
};
[[gnu::always_inline]] inline Split split(const Row& row, const Block& b, int64_t c0, int64_t c1) {
  const int64_t lo = std::max(b.j0, row.first), hi = std::min(b.j1 - 1, row.last);
  if (c0 > c1) return {lo, hi, 1, 0};
  return {lo, std::min(hi, c0 - 1), std::max(lo, c1 + 1), hi};
}

// Rows [0, R) of a group (first/last non-decreasing): their common keys in the block.
template <int R>
[[gnu::always_inline]] inline void common(const Row* rows, const Block& b, int64_t& c0, int64_t& c1) {
  c0 = std::max(b.j0, rows[R - 1].first);
  c1 = std::min(b.j1 - 1, rows[0].last);
}

template <int R>
[[gnu::always_inline]] inline void scores_group(Row* rows, const Block& b, int64_t n, float scale) {
  constexpr int K = R == 4 ? 2 : R == 2 ? 4 : 8;
  int64_t c0, c1;
  common<R>(rows, b, c0, c1);
  for (int r = 0; r < R; ++r) {
    const Split s = split(rows[r], b, c0, c1);
    for (int64_t j = s.lead_lo; j <= s.lead_hi; ++j) score_grid<1, 1>(rows + r, b, j, n, scale);
    for (int64_t j = s.tail_lo; j <= s.tail_hi; ++j) score_grid<1, 1>(rows + r, b, j, n, scale);
  }
  int64_t j = c0;
  for (; j + K - 1 <= c1; j += K) score_grid<R, K>(rows, b, j, n, scale);
  for (; j <= c1; ++j) score_grid<R, 1>(rows, b, j, n, scale);
}

template <int R>
[[gnu::always_inline]] inline void values_group(Row* rows, const Block& b, int64_t n) {
  constexpr int NV = R == 1 ? 8 : R == 2 ? 4 : 2;  // 8 chains per grid
  int64_t c0, c1;
  common<R>(rows, b, c0, c1);
  Split sp[R];
  for (int r = 0; r < R; ++r) {
    sp[r] = split(rows[r], b, c0, c1);
    for (int64_t j = sp[r].lead_lo; j <= sp[r].lead_hi; ++j)
      vec::axpy_fma(rows[r].s[j - rows[r].first], b.key(j), rows[r].o, n);
  }
  if (c0 <= c1) {
    int64_t d0 = 0;
    for (; d0 + 8 * NV <= n; d0 += 8 * NV) value_grid<R, NV>(rows, b, c0, c1, d0);
    for (; d0 + 16 <= n; d0 += 16) value_grid<R, 2>(rows, b, c0, c1, d0);
    for (; d0 < n; ++d0) value_lane<R>(rows, b, c0, c1, d0);
  }
  for (int r = 0; r < R; ++r) {
    for (int64_t j = sp[r].tail_lo; j <= sp[r].tail_hi; ++j)
      vec::axpy_fma(rows[r].s[j - rows[r].first], b.key(j), rows[r].o, n);
  }
}

ORK_FMA_CLONES void block_scores(Row* rows, int64_t n_rows, const Block& b, int64_t head_dim, float scale) {
  int64_t r = 0;
  for (; r + 4 <= n_rows; r += 4) scores_group<4>(rows + r, b, head_dim, scale);
  if (r + 2 <= n_rows) scores_group<2>(rows + r, b, head_dim, scale), r += 2;
  if (r < n_rows) scores_group<1>(rows + r, b, head_dim, scale);
}

ORK_FMA_CLONES void block_values(Row* rows, int64_t n_rows, const Block& b, int64_t head_dim) {
  int64_t r = 0;
  for (; r + 4 <= n_rows; r += 4) values_group<4>(rows + r, b, head_dim);
  if (r + 2 <= n_rows) values_group<2>(rows + r, b, head_dim), r += 2;
  if (r < n_rows) values_group<1>(rows + r, b, head_dim);
}

// Asks for every cache line of `rows` rows of `width` values of the KV array f32 or f16 (the non-null
// one), row r starting at element first + r · stride.
void prefetch_kv_rows(const float* f32, const uint16_t* f16, int64_t first, int64_t rows, int64_t width,
                      int64_t stride) {
  const int64_t es = f32 != nullptr ? 4 : 2;
  const auto* base = f32 != nullptr ? reinterpret_cast<const uint8_t*>(f32) : reinterpret_cast<const uint8_t*>(f16);
  for (int64_t r = 0; r < rows; ++r) prefetch_lines(base + (first + r * stride) * es, width * es);
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

// Decode over fewer than kStreamedDecodeKeys keys asks for the K and V rows of its first keys, whole
// (all KV heads, one stream each), before the per-head tasks read them a head's slice at a time: the
// cache rows were evicted by the weights streamed since the last token, and each head's slices alone
// (head_dim values at a stride of all heads') are short streams that wait on memory one block after
// the other.
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
  pool.parallel_for(n_blocks, 16, [&](int64_t b0, int64_t b1) {
    thread_local std::vector<float> wide;
    if (kv.k16 != nullptr && wide.size() < size_t(kStreamKeys * kv_stride)) wide.resize(size_t(kStreamKeys * kv_stride));
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t j0 = j_first + b * kStreamKeys, j1 = std::min(j_end, j0 + kStreamKeys);
      if (b + 2 < b1) {  // two blocks ahead: whole rows, one stream
        const int64_t a0 = j0 + 2 * kStreamKeys, a1 = std::min(j_end, a0 + kStreamKeys);
        prefetch_kv_rows(kv.k32, kv.k16, (a0 - kv_pos0) * kv_stride, 1, (a1 - a0) * kv_stride, 0);
      }
      const float* k = kv.k32 != nullptr ? kv.k32 + (j0 - kv_pos0) * kv_stride : wide.data();
      if (kv.k32 == nullptr) f16_to_f32_n(kv.k16 + (j0 - kv_pos0) * kv_stride, (j1 - j0) * kv_stride, wide.data());
      for (int64_t g = 0; g < n_head_kv; ++g)
        block_scores(rows + g * group, group, Block{k + g * head_dim, kv_stride, j0, j1}, head_dim, scale);
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
    if (kv.v16 != nullptr && block.size() < size_t(kAttentionKeyBlock * width))
      block.resize(size_t(kAttentionKeyBlock * width));
    prefetch_slices(j_first, std::min(j_end, j_first + step));
    for (int64_t j0 = j_first; j0 < j_end; j0 += step) {
      const int64_t j1 = std::min(j_end, j0 + step);
      prefetch_slices(j1, std::min(j_end, j1 + step));  // the next block's slices
      const float* v = kv.v32 + (j0 - kv_pos0) * kv_stride + g0 * head_dim;
      int64_t stride = kv_stride;
      if (kv.v32 == nullptr) {
        f16_to_f32_rows(kv.v16 + (j0 - kv_pos0) * kv_stride + g0 * head_dim, j1 - j0, width, kv_stride, block.data());
        v = block.data(), stride = width;
      }
      for (int64_t g = g0; g < g1; ++g)
        block_values(rows + g * group, group, Block{v + (g - g0) * head_dim, stride, j0, j1}, head_dim);
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

  if (n_q_tokens == 1) {  // decode: the first keys' whole K and V rows, up to kDecodeKvPrefetchBytes each
    const int64_t j_first = first_key(pos0), row_bytes = kv_stride * (kv.k32 != nullptr ? 4 : 2);
    const int64_t keys = std::min(pos0 + 1 - j_first, std::max<int64_t>(1, kDecodeKvPrefetchBytes / row_bytes));
    prefetch_kv_rows(kv.k32, kv.k16, (j_first - kv_pos0) * kv_stride, 1, keys * kv_stride, 0);
    prefetch_kv_rows(kv.v32, kv.v16, (j_first - kv_pos0) * kv_stride, 1, keys * kv_stride, 0);
  }
  pool.parallel_for(n_tiles * n_head_kv, 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> scores, block;
    thread_local std::vector<Row> rows;
    if (kv.k16 != nullptr && block.size() < size_t(kAttentionKeyBlock * head_dim))
      block.resize(size_t(kAttentionKeyBlock * head_dim));
    // The f32 rows of keys [j0, j1) of KV head g in K (k32/k16) or V.
    const auto load = [&](const float* f32, const uint16_t* f16, int64_t g, int64_t j0, int64_t j1) {
      if (f32 != nullptr) return Block{f32 + (j0 - kv_pos0) * kv_stride + g * head_dim, kv_stride, j0, j1};
      f16_to_f32_rows(f16 + (j0 - kv_pos0) * kv_stride + g * head_dim, j1 - j0, head_dim, kv_stride, block.data());
      return Block{block.data(), head_dim, j0, j1};
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
        const Block b = load(kv.k32, kv.k16, g, j0, std::min(j_end, j0 + kAttentionKeyBlock));
        block_scores(rows.data(), n_rows, b, head_dim, scale);
      }
      for (Row& r : rows) normalize_row(r, softcap, head_dim);
      for (int64_t j0 = j_first; j0 < j_end; j0 += kAttentionKeyBlock) {
        if (j0 + kAttentionKeyBlock < j_end) {  // the next block of values, or after the last the next task's keys
          prefetch_rows(kv.v32, kv.v16, g, j0 + kAttentionKeyBlock, std::min(j_end, j0 + 2 * kAttentionKeyBlock));
        } else if (task + 1 < end) {
          prefetch_first_keys(task + 1);
        }
        const Block b = load(kv.v32, kv.v16, g, j0, std::min(j_end, j0 + kAttentionKeyBlock));
        block_values(rows.data(), n_rows, b, head_dim);
      }
    }
  });
}

}  // namespace ork::ops::detail
