// Requantization to int4 for the NPU's int4 × int4 → int16 tasks (docs/quant.md "int4 on the NPU"),
// the contract the CPU int4 path (runtime/cpu_int4_matmul.h) implements and the NPU path must
// reproduce: the integer sums are exact on both, so equal codes and scales give equal bits.
//
// Codes are symmetric, −7..7 (−8 is never produced). Weights carry one scale per output row and per
// group of `group` consecutive K columns (group = K: one scale per row); on the NPU a group is a K
// chunk, i.e. one task with its own int16 result, so group ≤ 480 (npu/layout_int4.h) unless it is
// the whole row. Formulas as requant.h, with 7 for 127:
//   scale = max |v| / 7 (f32 division), 0 for an all-zero (or underflowing) group → codes 0;
//   q = clamp(round_half_away_from_zero(v / scale), −7, 7)  (exact f32 division).
// Inputs must be finite (ork::Error naming the row and column). Pure, thread-safe.
#pragma once

#include <cstdint>

namespace ork::quant {

inline constexpr int kI4QMax = 7;

// Groups of a K-column row: ceil(k / group).
inline int64_t int4_groups(int64_t k, int64_t group) { return (k + group - 1) / group; }

// w: n × k f32 → q: n × k codes, scales: n × int4_groups(k, group) (row-major: scales[n·G + g]).
void quantize_weights_i4(const float* w, int64_t n, int64_t k, int64_t group, int8_t* q, float* scales);

// Activations, one scale per row (W4A4): x: m × k → q: m × k codes, scales: m.
void quantize_rows_i4(const float* x, int64_t m, int64_t k, int8_t* q, float* scales);

// y[i][j] = Σ_g (float(c[g][i][j]) · sa[i]) · sw[j·G + g], g ascending, in f32 (the first group
// assigns, later groups add). c: G blocks of m × n int32 (the per-group sums, block g at g·m·n).
void dequantize_i32_groups(const int32_t* c, int64_t groups, int64_t m, int64_t n, const float* sa,
                           const float* sw, float* y);

}  // namespace ork::quant
