// KvCache — the keys and values of one sequence, for every layer, in f32.
//
// Layout per layer: [n_ctx][kv_dim] for K and for V (kv_dim = n_head_kv * head_dim), i.e. position-
// major, heads contiguous inside a position — the layout ops::attention reads.
// Ownership: owns its memory. Thread-safety: none (one sequence, one writer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ork::model {

class KvCache {
 public:
  KvCache(int64_t n_layer, int64_t n_ctx, int64_t kv_dim);

  int64_t n_ctx() const { return n_ctx_; }
  int64_t kv_dim() const { return kv_dim_; }
  uint64_t bytes() const { return uint64_t(k_.size() + v_.size()) * sizeof(float); }

  float* k(int64_t layer, int64_t pos = 0) { return k_.data() + offset(layer, pos); }
  float* v(int64_t layer, int64_t pos = 0) { return v_.data() + offset(layer, pos); }
  const float* k(int64_t layer, int64_t pos = 0) const { return k_.data() + offset(layer, pos); }
  const float* v(int64_t layer, int64_t pos = 0) const { return v_.data() + offset(layer, pos); }

 private:
  size_t offset(int64_t layer, int64_t pos) const { return size_t((layer * n_ctx_ + pos) * kv_dim_); }
  int64_t n_ctx_, kv_dim_;
  std::vector<float> k_, v_;
};

}  // namespace ork::model
