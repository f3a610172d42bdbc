// Exact int8 GEMM with int32 results (the CPU side of the w8a8 path).
#pragma once

#include <cstdint>

#include "core/thread_pool.h"

namespace ork::ops {

// Largest K for which gemm_i8 cannot overflow int32: |a·b| <= 128·128 per product.
inline constexpr int64_t kGemmI8MaxK = INT32_MAX / (128 * 128);

// C[M×N] = A[M×K] · Bᵀ in exact integer arithmetic.
//   a: M rows of K int8 (row stride K); b: N rows of K int8 (row stride K);
//   c: M rows of N int32 (row stride N), must not overlap a or b.
// Runs the int8 dot of the best SIMD level of the CPU (ops/qkernels.h).
// M, N, K >= 0 and K <= kGemmI8MaxK (ork::Error naming K otherwise). `pool` may be null (runs on the
// calling thread); otherwise the work is split over tiles of B rows and blocks of A rows.
// The result is exact, so it is independent of the thread count and of the summation order.
void gemm_i8(ThreadPool* pool, const int8_t* a, const int8_t* b, int64_t m, int64_t n, int64_t k,
             int32_t* c);

}  // namespace ork::ops
