// Decoding GGUF rows to f32: one function per format, and decode_row over any supported type.
//
// Every decoder computes exactly what ggml's dequantize_row_* computes (ggml/src/ggml-quants.c), in
// the same f32 operation order, so results are bit-identical to ggml's scalar reference.
// docs/quant.md states each formula.
//
// Contract shared by all decoders: `src` holds n / block_size blocks (any alignment), `dst` has room
// for n floats; n must be a non-negative multiple of the block size, else ork::Error naming the type.
// They match quant::DecodeFn and are the `decode` entries of the traits table.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "quant/types.h"

namespace ork::quant {

// Decodes one row of n elements of `type` from `src` into `dst`. Throws ork::Error naming the type
// when it is not supported or when n is not a whole number of blocks.
void decode_row(Type type, const void* src, float* dst, int64_t n);

// Plain formats (decode_float.cpp).
void decode_f32(const void* src, float* dst, int64_t n);
void decode_f16(const void* src, float* dst, int64_t n);
void decode_bf16(const void* src, float* dst, int64_t n);

// Legacy 32-element block formats (decode_legacy.cpp).
void decode_q4_0(const void* src, float* dst, int64_t n);
void decode_q4_1(const void* src, float* dst, int64_t n);
void decode_q5_0(const void* src, float* dst, int64_t n);
void decode_q5_1(const void* src, float* dst, int64_t n);
void decode_q8_0(const void* src, float* dst, int64_t n);
void decode_q8_1(const void* src, float* dst, int64_t n);  // d * q (ggml has no q8_1 dequantizer)

// K formats, 256-element super-blocks (decode_k.cpp).
void decode_q2_K(const void* src, float* dst, int64_t n);
void decode_q3_K(const void* src, float* dst, int64_t n);
void decode_q4_K(const void* src, float* dst, int64_t n);
void decode_q5_K(const void* src, float* dst, int64_t n);
void decode_q6_K(const void* src, float* dst, int64_t n);
void decode_q8_K(const void* src, float* dst, int64_t n);

// Non-uniform 4-bit grids (decode_iq4.cpp).
void decode_iq4_nl(const void* src, float* dst, int64_t n);
void decode_iq4_xs(const void* src, float* dst, int64_t n);

}  // namespace ork::quant
