#include "model/kv_cache.h"

#include "core/checked.h"

namespace ork::model {

KvCache::KvCache(int64_t n_layer, int64_t n_ctx, int64_t kv_dim) : n_ctx_(n_ctx), kv_dim_(kv_dim) {
  const uint64_t n = checked_mul(checked_mul(uint64_t(n_layer), uint64_t(n_ctx), "KV cache"),
                                 uint64_t(kv_dim), "KV cache");
  k_.assign(n, 0.0f);
  v_.assign(n, 0.0f);
}

}  // namespace ork::model
