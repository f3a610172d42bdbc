// Requantization of f32 data to the NPU device formats (int8 with per-row scales, fp16), and the
// dequantization of int32 matmul accumulators back to f32.
//
// These rules are a contract shared with the simulated NPU and the CPU int8 matmul path: all three
// must produce bit-identical results, so every formula is stated here exactly, including the f32
// operation order. Divisions are exact IEEE f32 divisions (x / scale), never x * (1 / scale).
// round_half_away_from_zero is std::round on the f32 quotient.
//
// quantize_*_i8 inputs must be finite: a NaN or infinity throws ork::Error naming the row and column.
// All functions are pure (thread-safe); outputs must not alias inputs.
#pragma once

#include <cstdint>

#include "quant/decode.h"  // decode_row: any GGUF row type → f32
#include "quant/types.h"

namespace ork::quant {

inline constexpr int kI8Max = 127;  // int8 codes are symmetric: -127..127 (-128 is never produced)

// Weights W (N rows of K f32, row-major) → int8 symmetric per output channel (per row n):
//   scale[n] = max_k |W[n][k]| / 127   (f32 division)
//   scale[n] == 0 (an all-zero row, or a max so small the division underflows) → q[n][k] = 0 for
//   all k and scale[n] stored as 0;
//   q[n][k] = clamp(round_half_away_from_zero(W[n][k] / scale[n]), -127, 127).
// w: n*k floats; q: n*k int8 (row-major, same shape); scales: n floats.
void quantize_weights_i8(const float* w, int64_t n, int64_t k, int8_t* q, float* scales);

// Activations X (M rows of K, row-major) → int8 per row (per token), with the same rule per row:
//   scale[m] = max_k |X[m][k]| / 127;  q[m][k] = clamp(round_half_away(X[m][k] / scale[m]), ±127).
void quantize_rows_i8(const float* x, int64_t m, int64_t k, int8_t* q, float* scales);

// f32 → fp16 bits, element-wise, round to nearest even (overflow → ±inf; NaN stays NaN).
void to_f16(const float* x, int64_t n, uint16_t* out);

// Dequantizes an int32 accumulator matrix C (M×N, row-major) with row scales sa[m] and column
// scales sb[n]:
//   y[m][n] = float(C[m][n]) * sa[m] * sb[n]   (computed in this exact order, in f32:
//                                               (float(C) * sa[m]) * sb[n])
// c and y: m*n elements; sa: m floats; sb: n floats.
void dequantize_i32(const int32_t* c, int64_t m, int64_t n, const float* sa, const float* sb,
                    float* y);
// One element of dequantize_i32: every path that scales int32 sums (dequantize_i32, the FFN's fused
// pass in runtime/activation_source.cpp) computes it with this, so they agree bit for bit.
inline float dequantize_i32_one(int32_t c, float sa, float sb) {
  const float t = float(c) * sa;
  return t * sb;
}

}  // namespace ork::quant
