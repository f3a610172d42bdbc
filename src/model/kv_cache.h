// KvCache — the keys and values of one sequence, for every layer, in f32, f16 or q8_0 (KvType).
//
// Layout per layer: [n_ctx][row] for K and for V, a row being one position's kv_dim values
// (kv_dim = n_head_kv * head_dim, heads contiguous) in the cache's type: kv_row_bytes(type, kv_dim)
// bytes. f32 rows are the layout ops::attention reads (k_f32/v_f32); other types are written with
// store() (rounded as llama.cpp's cache rounds them) and read back as f32 with load().
// Ring layers (a sliding-window layer's cache bounded by its window): a layer given ring rows R < n_ctx
// keeps position p in row p mod R, so only the last R positions written are held (valid_from()).
// Positions stay absolute everywhere (store, load, RoPE, the mask); only the row a position lands in
// changes. k_f32/v_f32 are for full layers only; k_bytes/v_bytes of a ring layer address one
// position's row (consecutive positions are contiguous only up to the ring's end).
// Memory: zeroed pages from the allocator (calloc; for large caches fresh anonymous pages), so a
// long context costs resident memory only for the positions written (bytes() is the reservation).
// Ownership: owns its memory; copies copy it. Thread-safety: none (one sequence, one writer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "model/kv_type.h"

namespace ork::model {

class KvCache {
 public:
  // ork::Error when the type cannot hold rows of kv_dim (q8_0: kv_dim not a multiple of 32).
  KvCache(int64_t n_layer, int64_t n_ctx, int64_t kv_dim, KvType type = KvType::kF32);
  // ring_rows[l] in [1, n_ctx): layer l is a ring of that many rows; 0 (or a missing entry): full.
  KvCache(int64_t n_layer, int64_t n_ctx, int64_t kv_dim, KvType type, const std::vector<int64_t>& ring_rows);
  KvCache(const KvCache& o);
  KvCache& operator=(const KvCache& o);
  KvCache(KvCache&&) noexcept = default;
  KvCache& operator=(KvCache&&) noexcept = default;

  int64_t n_layer() const { return n_layer_; }
  int64_t n_ctx() const { return n_ctx_; }
  int64_t kv_dim() const { return kv_dim_; }
  KvType type() const { return type_; }
  uint64_t row_bytes() const { return row_bytes_; }  // one position's K (or V) of one layer
  uint64_t bytes() const { return 2 * n_; }
  int64_t rows(int64_t layer) const { return rows_[size_t(layer)]; }  // n_ctx for a full layer
  bool ring(int64_t layer) const { return rows_[size_t(layer)] < n_ctx_; }
  // The first position of `layer` still held: 0 for a full layer, else past what later stores
  // overwrote (positions >= valid_from that were written are intact).
  int64_t valid_from(int64_t layer) const { return valid_from_[size_t(layer)]; }
  // Positions >= n are dropped (a rollback): a ring layer's held range ends at n, so after a rollback
  // to 0 it starts over.
  void forget_from(int64_t n);
  // Declares that `layer` holds positions from `from` on (a restored state: the caller wrote their
  // rows through k_bytes/v_bytes). ork::Error for from < 0, or from != 0 on a full layer.
  void set_valid_from(int64_t layer, int64_t from);

  // Rounds and writes rows k, v [n][kv_dim] (f32) at positions pos..pos+n-1 of `layer`; ork::Error
  // for values the type cannot hold (kv_store_rows). Requires 0 <= pos, pos + n <= n_ctx.
  void store(int64_t layer, int64_t pos, int64_t n, const float* k, const float* v);
  // Reads positions pos..pos+n-1 of `layer` back as f32 rows into k, v [n][kv_dim]. A ring layer:
  // ork::Error unless pos >= valid_from(layer) and n <= rows(layer).
  void load(int64_t layer, int64_t pos, int64_t n, float* k, float* v) const;

  // f32 caches only (ork::Error otherwise): the rows in place, [n_ctx - pos][kv_dim] from pos.
  const float* k_f32(int64_t layer, int64_t pos = 0) const;
  const float* v_f32(int64_t layer, int64_t pos = 0) const;

  // The raw rows of any type, from position pos of `layer` (row_bytes() per position).
  uint8_t* k_bytes(int64_t layer, int64_t pos = 0) { return k_.get() + offset(layer, pos); }
  uint8_t* v_bytes(int64_t layer, int64_t pos = 0) { return v_.get() + offset(layer, pos); }
  const uint8_t* k_bytes(int64_t layer, int64_t pos = 0) const { return k_.get() + offset(layer, pos); }
  const uint8_t* v_bytes(int64_t layer, int64_t pos = 0) const { return v_.get() + offset(layer, pos); }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  using Bytes = std::unique_ptr<uint8_t[], Free>;
  static Bytes zeroed(size_t n);  // throws std::bad_alloc when the allocator refuses
  size_t offset(int64_t layer, int64_t pos) const {
    const int64_t r = rows_[size_t(layer)];
    return size_t(first_row_[size_t(layer)] + (r < n_ctx_ ? pos % r : pos)) * row_bytes_;
  }
  // Calls f(pos, n) for each run of positions [pos, pos + n) contiguous in `layer`'s rows.
  template <class F>
  void runs(int64_t layer, int64_t pos, int64_t n, F f) const;
  int64_t n_layer_, n_ctx_, kv_dim_;
  KvType type_;
  uint64_t row_bytes_;
  std::vector<int64_t> rows_, first_row_, valid_from_;  // [layer]
  size_t n_ = 0;  // bytes of K (and of V)
  Bytes k_, v_;
};

}  // namespace ork::model
