// The CPU matmul against a weight stored in any GGUF element type.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"
#include "ops/cpu_features.h"
#include "quant/types.h"

namespace ork::ops {

// How matmul computes over quantized weights.
enum class MatmulMode {
  // W decoded to f32 exactly as quant decodes it, f32 dot products (contract below). The reference.
  kExact,
  // llama.cpp's CPU scheme where a kernel exists (has_fast_path): each X row is quantized once to
  // 8-bit blocks (qkernels.h: BlockQ8A for q8_0/q4_0, Q8_K for q4_K/q6_K) and every W block is
  // dotted with it in exact integers, scaled per block in f32, with the best SIMD level of the CPU.
  // f16 W keeps f32 activations (results equal kExact's). Other types run as kExact.
  // Error against the exact product: the activation rounding, at most Σ_blocks Σ|w|·d_x/2 with
  // d_x = max|x_block|/127, plus f32 accumulation; independent of threads, tiling and M.
  kFast,
};

// Whether kFast has kernels for weights of `type` (q8_0, q4_0, q4_K, q6_K, f16).
bool has_fast_path(quant::Type type);

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

// The same product in `mode`; kFast runs the kernels of `isa` (ork::Error when !isa_supported).
// Same shape rules and thread-safety as above; every output is computed by one thread with the
// same operations whatever the thread count, tiling and M, so results do not depend on them.
void matmul(ThreadPool& pool, const float* x, int64_t m, int64_t k, const void* w, quant::Type wtype,
            int64_t n, float* y, MatmulMode mode, Isa isa = best_isa());

}  // namespace ork::ops
