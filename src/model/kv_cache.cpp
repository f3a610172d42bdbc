#include "model/kv_cache.h"

#include <cstring>
#include <new>

#include "core/checked.h"
#include "core/error.h"

namespace ork::model {

KvCache::Bytes KvCache::zeroed(size_t n) {
  auto* p = static_cast<uint8_t*>(std::calloc(n == 0 ? 1 : n, 1));
  if (p == nullptr) throw std::bad_alloc();
  return Bytes(p);
}

KvCache::KvCache(int64_t n_layer, int64_t n_ctx, int64_t kv_dim, KvType type)
    : n_layer_(n_layer), n_ctx_(n_ctx), kv_dim_(kv_dim), type_(type), row_bytes_(kv_row_bytes(type, kv_dim)) {
  ORK_CHECK(n_layer >= 0 && n_ctx >= 0, "KV cache: ", n_layer, " layers × ", n_ctx, " positions");
  const uint64_t n = checked_mul(checked_mul(uint64_t(n_layer), uint64_t(n_ctx), "KV cache"), row_bytes_,
                                 "KV cache");
  n_ = size_t(n);
  k_ = zeroed(n_);
  v_ = zeroed(n_);
}

KvCache::KvCache(const KvCache& o)
    : n_layer_(o.n_layer_), n_ctx_(o.n_ctx_), kv_dim_(o.kv_dim_), type_(o.type_), row_bytes_(o.row_bytes_),
      n_(o.n_) {
  k_ = zeroed(n_);
  v_ = zeroed(n_);
  std::memcpy(k_.get(), o.k_.get(), n_);
  std::memcpy(v_.get(), o.v_.get(), n_);
}

KvCache& KvCache::operator=(const KvCache& o) {
  if (this != &o) *this = KvCache(o);
  return *this;
}

void KvCache::store(int64_t layer, int64_t pos, int64_t n, const float* k, const float* v) {
  ORK_CHECK(layer >= 0 && layer < n_layer_ && pos >= 0 && n >= 0 && n <= n_ctx_ - pos, "KV cache: store of ", n,
            " positions at ", pos, " in layer ", layer, " is outside ", n_layer_, " layers × ", n_ctx_);
  kv_store_rows(type_, k, n, kv_dim_, k_bytes(layer, pos), "K", layer);
  kv_store_rows(type_, v, n, kv_dim_, v_bytes(layer, pos), "V", layer);
}

void KvCache::load(int64_t layer, int64_t pos, int64_t n, float* k, float* v) const {
  ORK_CHECK(layer >= 0 && layer < n_layer_ && pos >= 0 && n >= 0 && n <= n_ctx_ - pos, "KV cache: load of ", n,
            " positions at ", pos, " in layer ", layer, " is outside ", n_layer_, " layers × ", n_ctx_);
  kv_load_rows(type_, k_bytes(layer, pos), n, kv_dim_, k);
  kv_load_rows(type_, v_bytes(layer, pos), n, kv_dim_, v);
}

const float* KvCache::k_f32(int64_t layer, int64_t pos) const {
  ORK_CHECK(type_ == KvType::kF32, "KV cache: f32 rows asked of a ", kv_type_name(type_), " cache");
  return reinterpret_cast<const float*>(k_bytes(layer, pos));
}

const float* KvCache::v_f32(int64_t layer, int64_t pos) const {
  ORK_CHECK(type_ == KvType::kF32, "KV cache: f32 rows asked of a ", kv_type_name(type_), " cache");
  return reinterpret_cast<const float*>(v_bytes(layer, pos));
}

}  // namespace ork::model
