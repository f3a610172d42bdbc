// The int4 device form of a linear weight (`--npu-wtype i4`; docs/quant.md "int4 on the NPU"):
// W (N rows of K) decoded, rotated by the int8 path's block-Hadamard transform (quant/hadamard.h),
// quantized to int4 codes −7..7 with one f32 scale per row and group of kNpuI4Group columns
// (quant/requant_int4.h; one group per row when K ≤ kNpuI4Group), and packed in the NPU's int4 B
// layout with K chunks of kNpuI4Group columns (npu/layout_int4.h), so each group is one int4 task
// with its own int16 sum. The CPU int4 path (`--cpu-int4 w4a8-g32`, runtime/cpu_int4_matmul.h)
// quantizes with the same function, so the two agree bit for bit.
// PackedView of this form: dtype kI4, bytes npu::packed_weight_bytes_i4(n, k), scales n × groups
// (row-major: scales[row · groups + g]), groups = i4_groups(k).
// Pure functions, thread-safe (the pool, when given, runs rows in parallel).
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "model/weights.h"
#include "weights/packed.h"

namespace ork::weights {

inline constexpr int64_t kNpuI4Group = 32;  // weight-scale group = K chunk of an int4 task

// Scale groups per row of a K-column int4 weight: ceil(K / 32) (= the K chunks of its packing).
int64_t i4_groups(int64_t k);

// W decoded, rotated and quantized to int4: q is N×K codes (row-major), scales N × groups.
struct QuantizedRowsI4 {
  int64_t group = 0;   // columns per scale group (K when group ≥ K)
  int64_t groups = 0;  // scale groups per row
  std::vector<int8_t> q;
  std::vector<float> scales;
};
// `group`: a multiple of 32 in [32, 480], or ≥ K for one scale per row (ork::Error otherwise).
QuantizedRowsI4 quantize_linear_i4(const model::Linear& w, int64_t group, ThreadPool* pool);

// quantize_linear_i4 with kNpuI4Group, then npu::pack_b_i4 with K chunks of kNpuI4Group columns.
PackedHost pack_linear_i4(const model::Linear& w, ThreadPool* pool);

// Writes rows [n0, n1) of a kI4 weight — exactly what packing those rows alone gives — to dst
// (npu::packed_weight_bytes_i4(n1 − n0, k) bytes). n0 must be a multiple of 64, n1 a multiple of 64
// or w.n (ork::Error otherwise).
void copy_rows_i4(const PackedView& w, int64_t n0, int64_t n1, uint8_t* dst);

// The W4A8-by-splitting correction of every (group, row) of a kI4 weight: corr[g · n + j] =
// 8 · Σ codes of row j in K chunk g (quant/int4_split.h), read from the packed bytes. groups × n.
std::vector<int32_t> int4_split_corrections(const PackedView& w);

}  // namespace ork::weights
