// The CPU int8 matmul (w8a8): the reference of the NPU's int8 path.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"

namespace ork::ops {

// Y[M×N] ≈ X[M×K] · Wᵀ through int8:
//   1. quant::quantize_rows_i8(x, m, k, xq, sa)      — X to int8, one scale per row;
//   2. ops::gemm_i8(&pool, xq, wq, m, n, k, c)       — exact int32 C = Xq · Wqᵀ;
//   3. quant::dequantize_i32(c, m, n, sa, w_scales, y).
// These are exactly the calls and formulas the NPU path is specified by (quant/requant.h), so the
// result is bit-identical to it and independent of the thread count.
//   x: M rows of K f32 (finite: ork::Error naming the row/column otherwise).
//   wq: N rows of K int8 and w_scales: N floats, as made by quant::quantize_weights_i8.
//   y: M rows of N f32; must not overlap the inputs.
// K <= kGemmI8MaxK. Scratch (M·K int8, M floats, M·N int32) is held per calling thread and reused.
void matmul_w8a8(ThreadPool& pool, const float* x, int64_t m, int64_t k, const int8_t* wq,
                 const float* w_scales, int64_t n, float* y);

// Steps 2 and 3 only, on activations the caller quantized (xq: M rows of K int8, sa: M row scales —
// quant::quantize_rows_i8 or quant::quantize_activations_i8). Same contract otherwise.
void matmul_w8a8_quantized(ThreadPool& pool, const int8_t* xq, const float* sa, int64_t m, int64_t k,
                           const int8_t* wq, const float* w_scales, int64_t n, float* y);

}  // namespace ork::ops
