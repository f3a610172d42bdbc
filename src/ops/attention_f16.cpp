#include "ops/attention_f16.h"

#include "ops/attention_tiles.h"

namespace ork::ops {

void attention_f16(ThreadPool& pool, const float* q, int64_t n_q_tokens, int64_t pos0, int64_t n_head,
                   int64_t n_head_kv, int64_t head_dim, const uint16_t* k_cache, const uint16_t* v_cache,
                   float* out, const AttentionOptions& options) {
  detail::KvRows kv;
  kv.k16 = k_cache;
  kv.v16 = v_cache;
  detail::attention_tiles(pool, q, n_q_tokens, pos0, n_head, n_head_kv, head_dim, kv, out, options);
}

}  // namespace ork::ops
