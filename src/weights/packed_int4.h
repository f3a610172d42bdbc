// The int4 device form of a linear weight (`--npu-wtype i4`; docs/quant.md "int4 on the NPU"):
// W (N rows of K) decoded, its columns multiplied by the input's norm weight when it has one
// (model::Linear::in_norm, quant/norm_fold.h: the activations are divided by the same factors),
// rotated by the int8 path's block-Hadamard transform (quant/hadamard.h),
// quantized to int4 codes −7..7 with one f32 scale per row (quant/requant_int4.h), and packed in the
// NPU's int4 B layout with K chunks of npu::kI4KChunk (480) columns (npu/layout_int4.h): each chunk
// is one int4 task whose int16 sum cannot overflow, the chunks' sums are added in int32 on the host
// (npu/task_split_int4.h), so the device gives the exact int32 row sums. The CPU int4 path
// (`--cpu-int4 w4a8`, runtime/cpu_int4_matmul.h) quantizes with the same function, so the two agree
// bit for bit.
// PackedView of this form: dtype kI4, bytes npu::packed_weight_bytes_i4(n, k), scales n (one per row).
// Pure functions, thread-safe (the pool, when given, runs rows in parallel).
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "model/weights.h"
#include "weights/packed.h"

namespace ork::weights {

// W decoded, norm-folded, rotated and quantized to int4: q is N×K codes (row-major), scales N × groups.
struct QuantizedRowsI4 {
  int64_t group = 0;   // columns per scale group (K when group ≥ K)
  int64_t groups = 0;  // scale groups per row
  std::vector<int8_t> q;
  std::vector<float> scales;
};
// `group`: a multiple of 32 in [32, 480], or ≥ K for one scale per row (ork::Error otherwise).
QuantizedRowsI4 quantize_linear_i4(const model::Linear& w, int64_t group, ThreadPool* pool);

// quantize_linear_i4 with one scale per row, then npu::pack_b_i4 with K chunks of npu::kI4KChunk.
PackedHost pack_linear_i4(const model::Linear& w, ThreadPool* pool);

// Writes rows [n0, n1) of a kI4 weight — exactly what packing those rows alone gives — to dst
// (npu::packed_weight_bytes_i4(n1 − n0, k) bytes). n0 must be a multiple of 64, n1 a multiple of 64
// or w.n (ork::Error otherwise).
void copy_rows_i4(const PackedView& w, int64_t n0, int64_t n1, uint8_t* dst);

// The W4A8-by-splitting correction of every row of a kI4 weight: corr[j] = 8 · Σ codes of row j
// (quant/int4_split.h), read from the packed bytes. n entries.
std::vector<int32_t> int4_split_corrections(const PackedView& w);

}  // namespace ork::weights
