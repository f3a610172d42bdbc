// The CPU matmul against a weight stored in any GGUF element type.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"
#include "quant/types.h"

namespace ork::ops {

// Y[M×N] = X[M×K] · Wᵀ.
//   x: M rows of K f32, row-major (row stride K).
//   w: N rows of K elements in GGUF type `wtype`, row stride quant::row_bytes(wtype, K) bytes.
//   y: M rows of N f32, row-major (row stride N). Must not overlap x or w.
// f32 W is read in place when 4-byte aligned, else decoded like the other types (same result).
// K must be a whole number of `wtype` blocks (ork::Error naming K and the type otherwise);
// M, N, K >= 0 (K = 0 writes zeros). Parallel over tiles of W rows (and blocks of X rows when there
// are few tiles) on `pool`; a quantized tile is decoded once to f32 into per-thread scratch and
// reused for every X row.
// Numerics: every output is vec::dot(x row, decoded w row) — f32 products accumulated in 8 lanes
// (element i into lane i % 8, ascending), lanes summed pairwise. The result is therefore independent
// of the thread count and of M (row i of Y depends only on row i of X).
// Thread-safety: reentrant; calls on the same pool are serialized by the pool.
void matmul(ThreadPool& pool, const float* x, int64_t m, int64_t k, const void* w, quant::Type wtype,
            int64_t n, float* y);

}  // namespace ork::ops
