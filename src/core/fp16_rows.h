// Bulk fp16 ↔ f32 conversion: the same values as f16_to_f32 / f32_to_f16 in fp16.h, element by element.
//
// Uses the CPU's conversion instructions where there are some (x86-64 F16C when the CPU reports it,
// aarch64 Advanced SIMD FCVTL / FCVTN), the portable functions otherwise. f16 → f32 is exact for every
// finite value, subnormals included, and for ±inf; f32 → f16 rounds to nearest, ties to even, as
// f32_to_f16 does, for every finite value (subnormal results and overflow to ±inf included) and for
// ±inf. A NaN stays a NaN in both directions (its payload bits may differ: the instructions keep
// the payload's top bits and quiet a signalling NaN). Thread-safety: pure functions.
#pragma once

#include <cstdint>

namespace ork {

// dst[i] = f16_to_f32(src[i]) for i < n (n >= 0); src and dst must not overlap.
void f16_to_f32_n(const uint16_t* src, int64_t n, float* dst);

// Row r of `rows` rows of n halves at src + r·src_stride → dst + r·n (dst dense), as f16_to_f32_n
// per row, in one call (the attention tiles convert a block of cached keys at once).
void f16_to_f32_rows(const uint16_t* src, int64_t rows, int64_t n, int64_t src_stride, float* dst);

// dst[i] = f32_to_f16(src[i]) for i < n (n >= 0); src and dst must not overlap.
void f32_to_f16_n(const float* src, int64_t n, uint16_t* dst);

}  // namespace ork
