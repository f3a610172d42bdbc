// The activation quantizers of qkernels.h written with the CPU's vector instructions (x86-64 with
// AVX2, AArch64 with NEON); internal to src/ops/. quantize_row_q8a and quantize_row_q8k call them
// where quantize_rows_simd_available() says so, the portable functions elsewhere.
//
// Same bits as the portable functions for finite inputs: d = max|x| / 127 (a maximum, exact in any
// order), id = 1/d, and each q = round-half-even(x · id) taken from the bits of x · id + 1.5·2^23 —
// the addition the portable code makes before subtracting 1.5·2^23 again: |x · id| ≤ 127 up to one
// rounding, so the integer is the low bits of that sum's mantissa, never past ±127 (the portable
// clamp never acts). A row holding NaN or ±Inf gives unspecified values (the callers check their
// inputs finite first). Pure, thread-safe.
#pragma once

#include <cstdint>

#include "ops/qkernels.h"

namespace ork::ops::detail {

bool quantize_rows_simd_available();
// k a multiple of 32 (q8a) or 256 (q8k); only where quantize_rows_simd_available().
void quantize_row_q8a_simd(const float* x, int64_t k, BlockQ8A* y);
void quantize_row_q8k_simd(const float* x, int64_t k, quant::BlockQ8_K* y);

}  // namespace ork::ops::detail
