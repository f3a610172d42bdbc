// Causal multi-head attention with grouped KV heads (GQA), reading an f32 KV cache.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"

namespace ork::ops {

// For query token t (position p = pos0 + t) and head h, with g = h / (n_head / n_head_kv):
//   s_j = dot(q[t][h], k_cache[j][g]) · (1 / sqrtf(head_dim))   for j = 0..p
//   w = softmax(s)                                              (ops::softmax)
//   out[t][h] = Σ_j w_j · v_cache[j][g]                         (j ascending, f32 accumulation)
// Layouts (all row-major f32):
//   q:   [n_q_tokens][n_head][head_dim]
//   k_cache, v_cache: [n_kv][n_head_kv][head_dim] with n_kv >= pos0 + n_q_tokens (positions 0..).
//   out: [n_q_tokens][n_head][head_dim]; must not overlap the inputs.
// Requires n_q_tokens >= 0, pos0 >= 0, head_dim >= 1, n_head_kv >= 1, n_head a multiple of n_head_kv
// (ork::Error naming the value otherwise). Parallel over (token, head) pairs on `pool`; each output
// is computed by one thread in a fixed order, so results do not depend on the thread count.
void attention(ThreadPool& pool, const float* q, int64_t n_q_tokens, int64_t pos0, int64_t n_head,
               int64_t n_head_kv, int64_t head_dim, const float* k_cache, const float* v_cache,
               float* out);

// What the architectures change in the scores (Gemma 2/3): defaults give attention() above.
struct AttentionOptions {
  float scale = 0.0f;    // s_j = dot(q, k_j) · scale; 0 → 1 / sqrtf(head_dim)
  float softcap = 0.0f;  // > 0: s_j → softcap · tanhf(s_j / softcap) before the softmax (gemma2)
  int64_t window = 0;    // > 0: only keys j with p − j < window (llama.cpp's LLAMA_SWA_TYPE_STANDARD)
  // The position of k_cache's and v_cache's first row: key j is row j − kv_pos0 (a cache that keeps
  // only the last positions, e.g. a sliding window's ring unrolled). Every key a query reads must be
  // at or past it: window > 0 and pos0 − window + 1 >= kv_pos0, or kv_pos0 == 0 (ork::Error otherwise).
  int64_t kv_pos0 = 0;
};

// attention() with those options: for query position p the keys are j = max(0, p − window + 1) .. p
// (all j <= p when window == 0). The same layouts, requirements and thread-safety; additionally
// scale, softcap >= 0 and finite and window >= 0 (ork::Error otherwise).
void attention(ThreadPool& pool, const float* q, int64_t n_q_tokens, int64_t pos0, int64_t n_head,
               int64_t n_head_kv, int64_t head_dim, const float* k_cache, const float* v_cache,
               float* out, const AttentionOptions& options);

// The requirements above, as ork::Error naming the value at fault (shared with attention_blocked).
void check_attention_args(int64_t n_q_tokens, int64_t pos0, int64_t n_head, int64_t n_head_kv, int64_t head_dim,
                          const AttentionOptions& options);

}  // namespace ork::ops
