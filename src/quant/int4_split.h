// W4A8 on hardware that multiplies int4 × int4 only (RK3588; docs/hardware.md "W4A8 from int4 ×
// int4", after happyme531/rknpu2_matmul_open rk_npu_w4a8_quant.cpp): each int8 activation code q
// becomes two int4 codes, h = q >> 4 (arithmetic: the signed high nibble) and l = (q & 15) − 8, so
// that q = 16·h + l + 8 exactly for every q in [−128, 127]. The halves are two rows of A (row 2i
// holds h, row 2i + 1 holds l) so the weights are read once for both, and
//   Σ_k q·b = 16·Σ_k h·b + Σ_k l·b + 8·Σ_k b,
// the last term a per-column constant of the weights. All arithmetic is exact in int32 for
// K < 2^31 / 1024. Pure functions, thread-safe.
#pragma once

#include <cstdint>

namespace ork::quant {

// q: m × k int8 codes (row stride k) → out: 2m × k int4 codes in [−8, 7] (row stride k).
void split_int8_rows_to_int4(const int8_t* q, int64_t m, int64_t k, int8_t* out);

// corr[j] = 8 · Σ_k b[j][k] for b: n × k int4 codes (row stride k).
void int4_split_correction(const int8_t* b, int64_t n, int64_t k, int32_t* corr);

// r: 2m × n int32 results of the split rows (row stride n) → c: m × n (row stride n),
// c[i][j] = 16·r[2i][j] + r[2i + 1][j] + corr[j] (int32 wrapping arithmetic).
void combine_int4_split(const int32_t* r, int64_t m, int64_t n, const int32_t* corr, int32_t* c);

}  // namespace ork::quant
