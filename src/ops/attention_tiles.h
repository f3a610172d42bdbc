// The tile kernel behind ops::attention_blocked (f32 KV rows) and ops::attention_f16 (f16 KV rows);
// internal to src/ops/.
//
// Per (tile of kAttentionTileTokens query tokens, KV head) — the tile's rows being its tokens × the
// query heads of that KV head — keys are taken in blocks of kAttentionKeyBlock positions: an f32
// block is read in place; an f16 block in prefill is first converted to f32 (exactly,
// f16_to_f32_rows) into a per-thread buffer, in decode read in place where grid_f16_available()
// (each key's values widened as the kernel loads them). Within a block, rows are taken in groups of
// up to 4 whose common keys are worked on as a grid (4 rows × 2 keys of scores, or 4 rows × 16
// dimensions of V sums, held in registers), the keys only some rows of the group see one row at a
// time. Every score is vec::dot_fma(q, k_j) · scale, and every output element receives
// fma(s_j, v_j[d], ·) in ascending j, exactly as in ops::attention: the results are bit-identical to
// it for any tiling and thread count.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"
#include "ops/attention.h"

namespace ork::ops::detail {

// Key positions per block (an f16 block of head_dim 128 converts to 32 KiB of f32).
inline constexpr int64_t kAttentionKeyBlock = 64;

// One query token with at least this many keys is computed in the order that streams the KV rows
// (scores parallel over positions, every KV head of a row at once; then values parallel over
// ranges of KV heads), with the same per-output arithmetic: the same bits.
inline constexpr int64_t kStreamedDecodeKeys = 512;
// Its blocks: positions per block of scores (whole rows, widened to f32 if f16), and the f32 floats
// of one block of values (positions × a range of KV heads' slice: 32 KiB, an L1's share).
inline constexpr int64_t kStreamKeys = 8;
inline constexpr int64_t kStreamValueFloats = 8192;

// The KV rows of one layer from position options.kv_pos0, [n_kv][n_head_kv][head_dim]: f32 (k32, v32)
// or IEEE binary16 bit patterns (k16, v16); exactly one pair is non-null.
struct KvRows {
  const float* k32 = nullptr;
  const float* v32 = nullptr;
  const uint16_t* k16 = nullptr;
  const uint16_t* v16 = nullptr;
};

// One query row of a tile: its head's q, output, and key range [first, last] (positions); s holds
// the scores of keys first..last.
struct Row {
  const float* q;
  float* o;
  float* s;
  int64_t first, last;
};

// The tile kernels on binary16 K or V rows read in place, no f32 copy of the block
// (attention_grid_f16.cpp: x86-64 CPUs with AVX2, FMA and F16C, and AArch64; grid_f16_available()
// says whether this CPU has them): keys [j0, j1), key j's head slice at k (v) + (j − j0) · stride.
// The same operations on the same (exactly widened) values as on an f32 block, so the same bits.
// block_scores_f16: every row's scores of the block's keys it sees; block_values_f16: their values
// added to the rows' outputs.
bool grid_f16_available();
void block_scores_f16(Row* rows, int64_t n_rows, const uint16_t* k, int64_t stride, int64_t j0, int64_t j1,
                       int64_t head_dim, float scale);
void block_values_f16(Row* rows, int64_t n_rows, const uint16_t* v, int64_t stride, int64_t j0, int64_t j1,
                       int64_t head_dim);

// attention(pool, q, ..., out, options) over `kv` (checks the arguments as attention() does).
// Parallel over (tile, KV head) pairs on `pool`, the tiles with the most keys first.
void attention_tiles(ThreadPool& pool, const float* q, int64_t n_q_tokens, int64_t pos0, int64_t n_head,
                     int64_t n_head_kv, int64_t head_dim, const KvRows& kv, float* out,
                     const AttentionOptions& options);

}  // namespace ork::ops::detail
