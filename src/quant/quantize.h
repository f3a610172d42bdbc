// Reference quantizers: f32 rows to GGUF blocks, one function per format.
//
// They are simple and deterministic, not ggml's error-minimising search: scales come from each
// block's max-abs (symmetric formats) or min/max (the _1 and K "min" formats), every quantity is
// chosen so that no element is clamped, and each element is rounded to the nearest level (ties away
// from zero) by exact division. Scales stored as fp16 are rounded up (offsets down) to fp16 first and
// the quants computed against the stored values, so the decoded error per element is at most half a
// quantization step (docs/quant.md gives each bound). Used to build test models and test data.
//
// Contract shared by all: `src` holds n finite floats, `dst` has room for row_bytes(type, n) bytes
// (any alignment); n must be a non-negative multiple of the block size. Throws ork::Error naming the
// type and the element when an input is not finite, or the block when a scale overflows fp16.
// They match quant::QuantizeFn and are the `quantize` entries of the traits table.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

namespace ork::quant {

// Plain formats (quantize_float.cpp): copy, f32 → fp16 / bf16 round to nearest even.
void quantize_f32(const float* src, void* dst, int64_t n);
void quantize_f16(const float* src, void* dst, int64_t n);
void quantize_bf16(const float* src, void* dst, int64_t n);

// Legacy formats (quantize_legacy.cpp).
void quantize_q4_0(const float* src, void* dst, int64_t n);
void quantize_q4_1(const float* src, void* dst, int64_t n);
void quantize_q5_0(const float* src, void* dst, int64_t n);
void quantize_q5_1(const float* src, void* dst, int64_t n);
void quantize_q8_0(const float* src, void* dst, int64_t n);
void quantize_q8_1(const float* src, void* dst, int64_t n);

// ggml's own Q8_0 quantizer (quantize_row_q8_0_ref; quantize_q8_0_ggml.cpp), not the reference
// above: d = fp16(amax / 127) and q = roundf(x / (amax / 127)), so an element may decode up to half
// a step plus the scale's fp16 rounding away. What a q8_0 KV cache stores (model/kv_cache.h), to
// round K and V exactly as llama.cpp does. Same contract as the others.
void quantize_q8_0_ggml(const float* src, void* dst, int64_t n);

// K formats (quantize_k.cpp).
void quantize_q2_K(const float* src, void* dst, int64_t n);
void quantize_q3_K(const float* src, void* dst, int64_t n);
void quantize_q4_K(const float* src, void* dst, int64_t n);
void quantize_q5_K(const float* src, void* dst, int64_t n);
void quantize_q6_K(const float* src, void* dst, int64_t n);
void quantize_q8_K(const float* src, void* dst, int64_t n);

// Non-uniform 4-bit grids (quantize_iq4.cpp): the scale maps the block's extremes inside the grid's
// [-127, 113] and each element takes the nearest grid value (not ggml's scale search).
void quantize_iq4_nl(const float* src, void* dst, int64_t n);
void quantize_iq4_xs(const float* src, void* dst, int64_t n);

}  // namespace ork::quant
