// Dot-product kernels on GGUF weight blocks against quantized activations, one table per ISA
// (internal to src/ops/; ops::matmul's fast mode and ops::gemm_i8 call them).
//
// The "fast" CPU path, as llama.cpp's: each activation row is quantized once to 8-bit blocks
// (BlockQ8A for the 32-element formats, quant::BlockQ8_K for the K formats; f16 weights take f32
// activations), then every weight block is dotted with its activation block in exact integer
// arithmetic and the per-block integers are scaled and summed in f32.
//
// Each ISA's table lives in its own translation unit (qkernels_<isa>.cpp) compiled for that ISA
// and including only POD headers, so no out-of-line code built for a higher ISA can leak into the
// baseline code. Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"
#include "ops/cpu_features.h"
#include "quant/blocks.h"

namespace ork::ops {

// 32 activations quantized symmetrically: x ≈ d·qs, d = max|x| / 127, qs = round-half-even(x / d)
// (computed as x · (1/d)); sum = Σ qs (the Q4_0 kernels use it for the −8 offset).
struct BlockQ8A {
  float d;
  int32_t sum;
  int8_t qs[quant::kQK];
};
static_assert(sizeof(BlockQ8A) == 40);

// Activation row formats.
enum class ActFormat { kF32, kQ8A, kQ8K };

// Quantizes k floats (k a multiple of 32) to k/32 BlockQ8A: with the CPU's vector instructions
// where this binary has them for it (AVX2, NEON: ops/quantize_rows_simd.h), else
// quantize_row_q8a_portable; the same integers on every ISA for finite x (a non-finite x gives
// unspecified values: callers check their inputs first).
void quantize_row_q8a(const float* x, int64_t k, BlockQ8A* y);
// Quantizes k floats (k a multiple of 256) to k/256 quant::BlockQ8_K with the same rule as
// quantize_row_q8a over 256 elements (d = max|x| / 127) and bsums[j] = Σ qs[16j .. 16j+15].
void quantize_row_q8k(const float* x, int64_t k, quant::BlockQ8_K* y);
// The same in portable code (GCC vector extensions), the reference the vector versions are tested
// against.
void quantize_row_q8a_portable(const float* x, int64_t k, BlockQ8A* y);
void quantize_row_q8k_portable(const float* x, int64_t k, quant::BlockQ8_K* y);

// Bytes of one activation row of k values in format f.
int64_t act_row_bytes(ActFormat f, int64_t k);

// The m rows of x (k floats each) in format f, rows of act_row_bytes(f, k) bytes: x itself for kF32,
// else quantized once (rows in parallel on `pool` when there are many) into a buffer of the calling
// thread that stays valid until its next call. Every format quantizes row by row with the functions
// above, so the bytes do not depend on the thread count.
const uint8_t* quantize_activations(ThreadPool& pool, ActFormat f, const float* x, int64_t m, int64_t k);

// How a matmul splits X rows across tasks when its column tiles alone cannot keep every thread busy
// (prefill on a small matrix): `blocks` blocks of `per` rows, at least kRowBlock rows each, aiming at
// `tasks_per_thread` tasks per thread. It changes which thread computes an output, never how.
struct RowSplit {
  int64_t blocks = 1, per = 0;
};
inline constexpr int64_t kRowBlock = 16;
RowSplit split_rows(int64_t m, int64_t n_tiles, int threads, int64_t tasks_per_thread);

// Weight rows (row stride ws bytes) against activation rows (stride xs bytes), over nb blocks:
//   y[i·ys + j] = dot(weight row j, activation row i) for j < nw, i < nx
// with 1 <= nw <= kTileW, 1 <= nx <= kTileX. Every output is computed by the same sequence of
// operations whatever nw, nx and its position in the tile, so results do not depend on tiling.
inline constexpr int kTileW = 4;
inline constexpr int kTileX = 4;
using TileFn = void (*)(int64_t nb, const uint8_t* w, int64_t ws, int nw, const uint8_t* x,
                        int64_t xs, int nx, float* y, int64_t ys);

struct QKernels {
  TileFn q8_0;  // BlockQ8_0 × BlockQ8A
  TileFn q4_0;  // BlockQ4_0 × BlockQ8A
  TileFn q4_k;  // BlockQ4_K × BlockQ8_K
  TileFn q6_k;  // BlockQ6_K × BlockQ8_K
  TileFn f16;   // fp16 × f32, nb = elements; numerics of vec::dot (mul then add, 8 lanes)
  // Σ a[i]·b[i] over k int8 pairs, exact in int32 for k <= ops::kGemmI8MaxK.
  int32_t (*dot_i8)(const int8_t* a, const int8_t* b, int64_t k);
};

// The table of `isa`; throws ork::Error when this binary has no kernels for it or the CPU cannot
// run them (isa_supported(isa) is false).
const QKernels& qkernels(Isa isa);

// Per-ISA tables (defined in the ISA's translation unit; null when not built for this target).
const QKernels* qkernels_scalar();
const QKernels* qkernels_avx2();
const QKernels* qkernels_avx512vnni();
const QKernels* qkernels_neon();

}  // namespace ork::ops
