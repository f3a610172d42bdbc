#include "model/kv_cache.h"

#include <cstring>
#include <new>

#include "core/checked.h"

namespace ork::model {

KvCache::Floats KvCache::zeroed(size_t n) {
  auto* p = static_cast<float*>(std::calloc(n == 0 ? 1 : n, sizeof(float)));
  if (p == nullptr) throw std::bad_alloc();
  return Floats(p);
}

KvCache::KvCache(int64_t n_layer, int64_t n_ctx, int64_t kv_dim) : n_ctx_(n_ctx), kv_dim_(kv_dim) {
  const uint64_t n = checked_mul(checked_mul(uint64_t(n_layer), uint64_t(n_ctx), "KV cache"),
                                 uint64_t(kv_dim), "KV cache");
  n_ = size_t(n);
  k_ = zeroed(n_);
  v_ = zeroed(n_);
}

KvCache::KvCache(const KvCache& o) : n_ctx_(o.n_ctx_), kv_dim_(o.kv_dim_), n_(o.n_) {
  k_ = zeroed(n_);
  v_ = zeroed(n_);
  std::memcpy(k_.get(), o.k_.get(), n_ * sizeof(float));
  std::memcpy(v_.get(), o.v_.get(), n_ * sizeof(float));
}

KvCache& KvCache::operator=(const KvCache& o) {
  if (this != &o) *this = KvCache(o);
  return *this;
}

}  // namespace ork::model
