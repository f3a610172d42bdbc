// KvCache — the keys and values of one sequence, for every layer, in f32.
//
// Layout per layer: [n_ctx][kv_dim] for K and for V (kv_dim = n_head_kv * head_dim), i.e. position-
// major, heads contiguous inside a position — the layout ops::attention reads.
// Memory: zeroed pages from the allocator (calloc; for large caches fresh anonymous pages), so a
// long context costs resident memory only for the positions written (bytes() is the reservation).
// Ownership: owns its memory; copies copy it. Thread-safety: none (one sequence, one writer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace ork::model {

class KvCache {
 public:
  KvCache(int64_t n_layer, int64_t n_ctx, int64_t kv_dim);
  KvCache(const KvCache& o);
  KvCache& operator=(const KvCache& o);
  KvCache(KvCache&&) noexcept = default;
  KvCache& operator=(KvCache&&) noexcept = default;

  int64_t n_ctx() const { return n_ctx_; }
  int64_t kv_dim() const { return kv_dim_; }
  uint64_t bytes() const { return 2 * uint64_t(n_) * sizeof(float); }

  float* k(int64_t layer, int64_t pos = 0) { return k_.get() + offset(layer, pos); }
  float* v(int64_t layer, int64_t pos = 0) { return v_.get() + offset(layer, pos); }
  const float* k(int64_t layer, int64_t pos = 0) const { return k_.get() + offset(layer, pos); }
  const float* v(int64_t layer, int64_t pos = 0) const { return v_.get() + offset(layer, pos); }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  using Floats = std::unique_ptr<float[], Free>;
  static Floats zeroed(size_t n);  // throws std::bad_alloc when the allocator refuses
  size_t offset(int64_t layer, int64_t pos) const { return size_t((layer * n_ctx_ + pos) * kv_dim_); }
  int64_t n_ctx_, kv_dim_;
  size_t n_ = 0;  // floats of K (and of V)
  Floats k_, v_;
};

}  // namespace ork::model
