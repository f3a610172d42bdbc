// Causal GQA attention blocked over keys, for prefill: the contract and the results of
// ops::attention (attention.h) bit for bit, with each key and value row loaded once for several
// query rows instead of once per (token, head).
#pragma once

#include <cstdint>

#include "core/thread_pool.h"
#include "ops/attention.h"
#include "ops/attention_tiles.h"

namespace ork::ops {

// Query tokens per tile: a tile's rows are its tokens × the n_head / n_head_kv query heads that share
// one KV head.
inline constexpr int64_t kAttentionTileTokens = 32;

// attention(pool, q, ..., out, options) computed per (tile of kAttentionTileTokens consecutive query
// tokens, KV head): for each key position j of the tile's range, K row j is loaded once and dotted
// with every row that sees j (vec::dot_fma, as attention() computes each score), and V row j is added
// into each of those rows' outputs (j ascending per output, as attention() does). Every output
// therefore undergoes the same f32 operations in the same order as in attention(): the results are
// identical for any thread count. The same layouts, requirements and errors as attention().
// Keys go in blocks of 64, rows in groups of up to 4 worked on in registers (attention_tiles.h).
// Parallel over (tile, KV head) pairs on `pool`; per thread a score buffer of tile rows × keys.
// The per-thread buffers attention_blocked keeps for queries that see up to n_keys keys, in bytes:
// the tiles' scores (tile rows × n_keys floats) and one f16 key block widened to f32
// (kAttentionKeyBlock × head_dim floats), thread_local, kept for the thread's life; for the
// streamed decode (attention_tiles.h) a block of whole rows and one of values (thread_local, kept)
// and the scores of every head (n_head × n_keys, the caller's, for the call) — all counted for
// every thread: an upper bound.
inline uint64_t attention_blocked_scratch_bytes(int64_t n_head, int64_t n_head_kv, int64_t n_keys, int64_t head_dim) {
  const uint64_t tiles = uint64_t(kAttentionTileTokens * (n_head / n_head_kv)) * uint64_t(n_keys) +
                         uint64_t(detail::kAttentionKeyBlock * head_dim);
  const uint64_t streamed = uint64_t(n_head) * uint64_t(n_keys) +
                            uint64_t(detail::kStreamKeys * n_head_kv * head_dim) +
                            uint64_t(detail::kAttentionKeyBlock * n_head_kv * head_dim);
  return (tiles + streamed) * sizeof(float);
}

void attention_blocked(ThreadPool& pool, const float* q, int64_t n_q_tokens, int64_t pos0, int64_t n_head,
                       int64_t n_head_kv, int64_t head_dim, const float* k_cache, const float* v_cache,
                       float* out, const AttentionOptions& options);

}  // namespace ork::ops
