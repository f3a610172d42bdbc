#include "weights/packed.h"

#include <cstring>

#include "core/error.h"
#include "npu/layout.h"
#include "npu/layout_int4.h"
#include "npu/matmul.h"
#include "quant/decode.h"
#include "quant/hadamard.h"
#include "quant/requant.h"
#include "weights/packed_int4.h"

namespace ork::weights {

uint64_t packed_bytes(int64_t n, int64_t k) { return npu::packed_weight_bytes(n, k, npu::Dtype::kI8); }
uint64_t packed_bytes(int64_t n, int64_t k, npu::Dtype dtype) {
  return npu::packed_weight_bytes(n, k, dtype);
}

int64_t slice_row_align(npu::Dtype dtype) { return dtype == npu::Dtype::kI4 ? npu::kI4NGroup : 32; }

int64_t PackedView::scale_count() const {
  switch (dtype) {
    case npu::Dtype::kI8: return n;
    case npu::Dtype::kI4: return n;  // one per row (packed_int4.h)
    case npu::Dtype::kF16: return 0;
  }
  return 0;
}

QuantizedRows quantize_linear(const model::Linear& w, ThreadPool* pool) {
  QuantizedRows r;
  r.q.resize(size_t(w.n * w.k));
  r.scales.resize(size_t(w.n));
  const int64_t row_bytes = quant::row_bytes(w.w->type, w.k);
  auto rows = [&](int64_t begin, int64_t end) {
    std::vector<float> f(size_t(w.k));
    for (int64_t i = begin; i < end; ++i) {
      quant::decode_row(w.w->type, w.w->data + i * row_bytes, f.data(), w.k);
      quant::hadamard_rotate_rows(f.data(), 1, w.k, quant::int8_rotation_block(w.k));
      quant::quantize_weights_i8(f.data(), 1, w.k, r.q.data() + i * w.k, r.scales.data() + i);
    }
  };
  if (pool != nullptr) {
    pool->parallel_for(w.n, 16, rows);
  } else {
    rows(0, w.n);
  }
  return r;
}

PackedHost pack_linear(const model::Linear& w, ThreadPool* pool) {
  QuantizedRows q = quantize_linear(w, pool);
  PackedHost p;
  p.n = w.n;
  p.k = w.k;
  p.bytes.resize(packed_bytes(w.n, w.k));
  npu::pack_weight_into(q.q.data(), w.n, w.k, p.bytes.data());
  p.scales = std::move(q.scales);
  return p;
}

void copy_rows(const PackedView& w, int64_t n0, int64_t n1, uint8_t* dst) {
  using npu::Dtype;
  if (w.dtype == Dtype::kI4) {
    copy_rows_i4(w, n0, n1, dst);
    return;
  }
  ORK_CHECK(w.dtype == Dtype::kI8, "copy_rows: the weight is ", npu::dtype_name(w.dtype), ", not i8");
  ORK_CHECK(n0 >= 0 && n0 < n1 && n1 <= w.n && n0 % 32 == 0 && (n1 % 32 == 0 || n1 == w.n),
            "copy_rows: bad row range [", n0, ", ", n1, ") of ", w.n);
  const int64_t np = npu::pad_n(w.n, Dtype::kI8);
  const int64_t kp = npu::pad_k(w.k);
  const int64_t np_slice = npu::pad_n(n1 - n0, Dtype::kI8);
  for (int64_t s = 0; s < npu::k_segments(kp, Dtype::kI8); ++s) {
    const int64_t ks = npu::b_segment_width(s, kp, Dtype::kI8);
    const uint8_t* src = w.bytes + npu::b_segment_offset(s, np, Dtype::kI8) + n0 * ks;
    std::memcpy(dst + npu::b_segment_offset(s, np_slice, Dtype::kI8), src, size_t(np_slice * ks));
  }
}

}  // namespace ork::weights
