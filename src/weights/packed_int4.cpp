#include "weights/packed_int4.h"

#include <cstring>

#include "core/error.h"
#include "npu/layout.h"
#include "npu/layout_int4.h"
#include "quant/decode.h"
#include "quant/hadamard.h"
#include "quant/norm_fold.h"
#include "quant/requant_int4.h"

namespace ork::weights {

QuantizedRowsI4 quantize_linear_i4(const model::Linear& w, int64_t group, ThreadPool* pool) {
  QuantizedRowsI4 r;
  if (group < w.k) npu::check_i4_chunk(group);
  r.group = group < w.k ? group : w.k;
  r.groups = quant::int4_groups(w.k, r.group);
  r.q.resize(size_t(w.n * w.k));
  r.scales.resize(size_t(w.n * r.groups));
  const int64_t row_bytes = quant::row_bytes(w.w->type, w.k);
  auto rows = [&](int64_t begin, int64_t end) {
    std::vector<float> f(size_t(w.k));
    for (int64_t i = begin; i < end; ++i) {
      quant::decode_row(w.w->type, w.w->data + i * row_bytes, f.data(), w.k);
      if (w.in_norm != nullptr) quant::fold_norm_into_row(f.data(), w.in_norm, w.k);
      quant::hadamard_rotate_rows(f.data(), 1, w.k, quant::int8_rotation_block(w.k));
      quant::quantize_weights_i4(f.data(), 1, w.k, r.group, r.q.data() + i * w.k, r.scales.data() + i * r.groups);
    }
  };
  if (pool != nullptr) {
    pool->parallel_for(w.n, 16, rows);
  } else {
    rows(0, w.n);
  }
  return r;
}

PackedHost pack_linear_i4(const model::Linear& w, ThreadPool* pool) {
  QuantizedRowsI4 q = quantize_linear_i4(w, w.k, pool);
  ORK_CHECK(q.groups == 1, "pack_linear_i4: ", q.groups, " scale groups for K = ", w.k);
  PackedHost p;
  p.n = w.n;
  p.k = w.k;
  p.dtype = npu::Dtype::kI4;
  p.bytes.resize(npu::packed_weight_bytes_i4(w.n, w.k));
  npu::pack_b_i4(q.q.data(), w.n, w.k, p.bytes.data(), false, npu::kI4KChunk);
  p.scales = std::move(q.scales);
  return p;
}

void copy_rows_i4(const PackedView& w, int64_t n0, int64_t n1, uint8_t* dst) {
  ORK_CHECK(w.dtype == npu::Dtype::kI4, "copy_rows_i4: the weight is ", npu::dtype_name(w.dtype), ", not i4");
  ORK_CHECK(n0 >= 0 && n0 < n1 && n1 <= w.n && n0 % npu::kI4NGroup == 0 &&
                (n1 % npu::kI4NGroup == 0 || n1 == w.n),
            "copy_rows_i4: bad row range [", n0, ", ", n1, ") of ", w.n);
  const int64_t np = npu::pad_n_i4(w.n), kp = npu::pad_k(w.k);
  const int64_t np_slice = npu::pad_n_i4(n1 - n0);
  // Within a chunk the 64-row groups are outermost: the slice's rows are one run of bytes.
  for (int64_t c = 0; c < npu::i4_k_chunks(kp); ++c) {
    const int64_t kc = npu::i4_chunk_width(c, kp);
    const uint8_t* src = w.bytes + npu::i4_chunk_offset(c, np) + n0 * kc / 2;
    std::memcpy(dst + npu::i4_chunk_offset(c, np_slice), src, size_t(np_slice * kc / 2));
  }
}

std::vector<int32_t> int4_split_corrections(const PackedView& w) {
  ORK_CHECK(w.dtype == npu::Dtype::kI4, "int4_split_corrections: the weight is ", npu::dtype_name(w.dtype));
  const int64_t np = npu::pad_n_i4(w.n), kp = npu::pad_k(w.k);
  std::vector<int32_t> corr(size_t(w.n), 0);
  for (int64_t c = 0; c < npu::i4_k_chunks(kp); ++c) {
    const int64_t kc = npu::i4_chunk_width(c, kp);
    const uint8_t* block = w.bytes + npu::i4_chunk_offset(c, np);
    for (int64_t j = 0; j < w.n; ++j) {
      int32_t s = 0;
      for (int64_t t = 0; t < kc; ++t) s += npu::i4_nibble(block[npu::i4_b_byte_in_chunk(j, t, kc)], npu::i4_high_nibble(t));
      corr[size_t(j)] += 8 * s;
    }
  }
  return corr;
}

}  // namespace ork::weights
