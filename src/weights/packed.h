// The device form of a linear weight, on the host: W (N rows of K) quantized to int8 per output row
// (after the block-Hadamard rotation of its K inputs, quant/hadamard.h; then
// quant::quantize_weights_i8: symmetric, scale = max|row| / 127) and tiled in the NPU's native B
// layout (npu::pack_weight_into). This is what a device buffer of the weight holds, what an .orkpack
// stores, and what the CPU int8 path computes with (before tiling), so all three agree bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "model/weights.h"
#include "npu/layout.h"

namespace ork::weights {

// A non-owning view of packed bytes and scales (from a PackedHost or a mapped .orkpack).
// dtype kI8 (the runtime's default): int8 codes + per-row scales. kI4 (--npu-wtype i4,
// weights/packed_int4.h): int4 codes in K chunks of 480 + one scale per row. kF16
// (ork convert --dtype f16): fp16 bits in the native fp16 B layout, scales null.
struct PackedView {
  const uint8_t* bytes = nullptr;  // packed_bytes(n, k, dtype) bytes, native B layout
  const float* scales = nullptr;   // [scale_count()] (kI8, kI4: per row); null for kF16
  int64_t n = 0, k = 0;
  npu::Dtype dtype = npu::Dtype::kI8;
  int64_t scale_count() const;     // kI8, kI4: n; kF16: 0
};

// Bytes of the packed int8 form of an N×K weight (padding included); of the `dtype` form.
uint64_t packed_bytes(int64_t n, int64_t k);
uint64_t packed_bytes(int64_t n, int64_t k, npu::Dtype dtype);
// Rows of a slice of a packed weight start at a multiple of this: 32 (kI8, kF16), 64 (kI4).
int64_t slice_row_align(npu::Dtype dtype);

// Owns packed bytes and scales.
struct PackedHost {
  std::vector<uint8_t> bytes;
  std::vector<float> scales;
  int64_t n = 0, k = 0;
  npu::Dtype dtype = npu::Dtype::kI8;
  PackedView view() const {
    return {bytes.data(), scales.empty() ? nullptr : scales.data(), n, k, dtype};
  }
};

// W decoded from its GGUF type and quantized to int8 per row: q is N×K row-major.
struct QuantizedRows {
  std::vector<int8_t> q;
  std::vector<float> scales;
};

// Decodes and quantizes the weight of `w` (rows in parallel on `pool` when given).
QuantizedRows quantize_linear(const model::Linear& w, ThreadPool* pool);
// quantize_linear, then tiling into the native layout.
PackedHost pack_linear(const model::Linear& w, ThreadPool* pool);

// Writes the native packed layout of rows [n0, n1) of `w` — exactly what packing those rows alone
// would give — to dst (packed_bytes(n1 - n0, w.k, w.dtype) bytes). n0 must be a multiple of
// slice_row_align(w.dtype) and n1 one too or w.n. A K-segmented weight (K > npu::k_segment_width)
// is gathered segment by segment. w.dtype must be kI8 or kI4 (copy_rows_i4).
void copy_rows(const PackedView& w, int64_t n0, int64_t n1, uint8_t* dst);

}  // namespace ork::weights
