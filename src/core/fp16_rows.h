// Bulk fp16 → f32 conversion, exact (the same values as f16_to_f32 in fp16.h, element by element).
//
// Uses the CPU's conversion instructions where there are some (x86-64 F16C when the CPU reports it,
// aarch64 Advanced SIMD FCVTL), the portable f16_to_f32 otherwise. Both are exact for every finite
// value, subnormals included, and for ±inf; a NaN stays a NaN (its payload bits may differ: the
// instructions quiet a signalling NaN). Thread-safety: pure function.
#pragma once

#include <cstdint>

namespace ork {

// dst[i] = f16_to_f32(src[i]) for i < n (n >= 0); src and dst must not overlap.
void f16_to_f32_n(const uint16_t* src, int64_t n, float* dst);

}  // namespace ork
