#include "model/kv_cache.h"

#include <algorithm>
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
    : KvCache(n_layer, n_ctx, kv_dim, type, {}) {}

KvCache::KvCache(int64_t n_layer, int64_t n_ctx, int64_t kv_dim, KvType type, const std::vector<int64_t>& ring_rows)
    : n_layer_(n_layer), n_ctx_(n_ctx), kv_dim_(kv_dim), type_(type), row_bytes_(kv_row_bytes(type, kv_dim)) {
  ORK_CHECK(n_layer >= 0 && n_ctx >= 0, "KV cache: ", n_layer, " layers × ", n_ctx, " positions");
  ORK_CHECK(ring_rows.size() <= size_t(n_layer), "KV cache: ring rows for ", ring_rows.size(), " layers of ", n_layer);
  uint64_t total_rows = 0;
  for (int64_t l = 0; l < n_layer; ++l) {
    const int64_t r = size_t(l) < ring_rows.size() && ring_rows[size_t(l)] > 0 ? ring_rows[size_t(l)] : n_ctx;
    ORK_CHECK(r <= n_ctx, "KV cache: layer ", l, " ring of ", r, " rows exceeds the context of ", n_ctx);
    rows_.push_back(std::max<int64_t>(r, 1));
    first_row_.push_back(int64_t(total_rows));
    valid_from_.push_back(0);
    total_rows = checked_add(total_rows, uint64_t(r), "KV cache");
  }
  const uint64_t n = checked_mul(total_rows, row_bytes_, "KV cache");
  n_ = size_t(n);
  k_ = zeroed(n_);
  v_ = zeroed(n_);
}

template <class F>
void KvCache::runs(int64_t layer, int64_t pos, int64_t n, F f) const {
  const int64_t r = rows_[size_t(layer)];
  while (n > 0) {
    const int64_t m = std::min(n, r - pos % r);  // up to the ring's end
    f(pos, m);
    pos += m;
    n -= m;
  }
}

KvCache::KvCache(const KvCache& o)
    : n_layer_(o.n_layer_), n_ctx_(o.n_ctx_), kv_dim_(o.kv_dim_), type_(o.type_), row_bytes_(o.row_bytes_),
      rows_(o.rows_), first_row_(o.first_row_), valid_from_(o.valid_from_), n_(o.n_) {
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
  const int64_t p0 = pos;
  runs(layer, pos, n, [&](int64_t p, int64_t m) {
    const size_t o = offset(layer, p);
    kv_store_rows(type_, k + (p - p0) * kv_dim_, m, kv_dim_, k_.get() + o, "K", layer);
    kv_store_rows(type_, v + (p - p0) * kv_dim_, m, kv_dim_, v_.get() + o, "V", layer);
  });
  int64_t& from = valid_from_[size_t(layer)];
  from = std::max(from, pos + n - rows_[size_t(layer)]);  // what these rows overwrote
}

void KvCache::load(int64_t layer, int64_t pos, int64_t n, float* k, float* v) const {
  ORK_CHECK(layer >= 0 && layer < n_layer_ && pos >= 0 && n >= 0 && n <= n_ctx_ - pos, "KV cache: load of ", n,
            " positions at ", pos, " in layer ", layer, " is outside ", n_layer_, " layers × ", n_ctx_);
  ORK_CHECK(pos >= valid_from_[size_t(layer)] && n <= rows_[size_t(layer)], "KV cache: positions ", pos, "..",
            pos + n - 1, " of layer ", layer, " are no longer held (its ring of ", rows_[size_t(layer)],
            " rows holds positions from ", valid_from_[size_t(layer)], ")");
  const int64_t p0 = pos;
  runs(layer, pos, n, [&](int64_t p, int64_t m) {
    const size_t o = offset(layer, p);
    kv_load_rows(type_, k_.get() + o, m, kv_dim_, k + (p - p0) * kv_dim_);
    kv_load_rows(type_, v_.get() + o, m, kv_dim_, v + (p - p0) * kv_dim_);
  });
}

void KvCache::forget_from(int64_t n) {
  for (int64_t& from : valid_from_) from = std::min(from, std::max<int64_t>(n, 0));
}

void KvCache::set_valid_from(int64_t layer, int64_t from) {
  ORK_CHECK(layer >= 0 && layer < n_layer_, "KV cache: layer ", layer, " is outside ", n_layer_, " layers");
  ORK_CHECK(from >= 0 && (from == 0 || ring(layer)), "KV cache: layer ", layer, " (",
            ring(layer) ? "a ring" : "full", ") cannot hold positions from ", from);
  valid_from_[size_t(layer)] = from;
}

const float* KvCache::k_f32(int64_t layer, int64_t pos) const {
  ORK_CHECK(type_ == KvType::kF32, "KV cache: f32 rows asked of a ", kv_type_name(type_), " cache");
  ORK_CHECK(!ring(layer), "KV cache: rows in place asked of ring layer ", layer);
  return reinterpret_cast<const float*>(k_bytes(layer, pos));
}

const float* KvCache::v_f32(int64_t layer, int64_t pos) const {
  ORK_CHECK(type_ == KvType::kF32, "KV cache: f32 rows asked of a ", kv_type_name(type_), " cache");
  ORK_CHECK(!ring(layer), "KV cache: rows in place asked of ring layer ", layer);
  return reinterpret_cast<const float*>(v_bytes(layer, pos));
}

}  // namespace ork::model
