// Causal GQA attention reading an f16 KV cache in place: ops::attention's contract and results bit for
// bit (attention.h) on the f32 values of the f16 rows, without converting the whole cache to f32 first.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"
#include "ops/attention.h"

namespace ork::ops {

// attention(pool, q, ..., out, options) where k_cache and v_cache hold IEEE binary16 bit patterns in
// the same layout ([n_kv][n_head_kv][head_dim], from position options.kv_pos0): every output is
// computed with the same f32 operations in the same order as attention() on f16_to_f32 of the rows
// (the conversion is exact), so the results are identical for any thread count.
// Computed as attention_blocked (attention_tiles.h): per (tile of kAttentionTileTokens query tokens,
// KV head), each block of 64 keys' K (then V) slices widened to f32 once for all the tile's rows in
// prefill; one query token (decode) reads the rows in place where attention_tiles.h's
// grid_f16_available(), each key's values widened as loaded. Parallel over (tile, KV head) pairs on
// `pool`; per thread a score buffer of tile rows × keys floats and, where it converts, one 64-key
// block of f32 rows. The same requirements and errors.
void attention_f16(ThreadPool& pool, const float* q, int64_t n_q_tokens, int64_t pos0, int64_t n_head,
                   int64_t n_head_kv, int64_t head_dim, const uint16_t* k_cache, const uint16_t* v_cache,
                   float* out, const AttentionOptions& options);

}  // namespace ork::ops
