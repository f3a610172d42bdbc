// The attention tile kernels on binary16 KV rows read in place (attention_tiles.h): the grid helpers
// of attention_grid.inc where each key's eight values are widened as they are loaded — one
// vcvtph2ps (x86-64 with AVX2, FMA and F16C) or two fcvtl (AArch64) — instead of loaded from an f32
// copy of the block.
#include "ops/attention_tiles.h"

#include <cstring>

#include "core/error.h"
#include "core/fp16.h"
#include "ops/vec.h"

// V8 values cross only always_inline helpers, never a call: GCC's note that a 32-byte vector argument
// has no fixed ABI (-Wpsabi) does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"
#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace ork::ops::detail {

#if defined(__x86_64__) || defined(__aarch64__)
namespace {

typedef float V8 __attribute__((vector_size(32)));
[[gnu::always_inline]] inline V8 load8(const uint16_t* p) {
#if defined(__x86_64__)
  return V8(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
#else
  const float32x4_t lo = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
  const float32x4_t hi = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p + 4)));
  V8 v;
  std::memcpy(&v, &lo, sizeof lo);
  std::memcpy(reinterpret_cast<char*>(&v) + sizeof lo, &hi, sizeof hi);
  return v;
#endif
}
[[gnu::always_inline]] inline float to_f32(uint16_t h) { return f16_to_f32(h); }

#include "ops/attention_grid.inc"

}  // namespace

bool grid_f16_available() {
#if defined(__x86_64__)
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                          __builtin_cpu_supports("f16c");
  return yes;
#else
  return true;  // AArch64: binary16 conversion is part of the base instruction set
#endif
}

void block_scores_f16(Row* rows, int64_t n_rows, const uint16_t* k, int64_t stride, int64_t j0, int64_t j1,
                      int64_t head_dim, float scale) {
  block_scores_of(rows, n_rows, Block<uint16_t>{k, stride, j0, j1}, head_dim, scale);
}

void block_values_f16(Row* rows, int64_t n_rows, const uint16_t* v, int64_t stride, int64_t j0, int64_t j1,
                      int64_t head_dim) {
  block_values_of(rows, n_rows, Block<uint16_t>{v, stride, j0, j1}, head_dim);
}

#else  // other CPUs: the f32 copy of each block (attention_tiles.cpp)
bool grid_f16_available() { return false; }
void block_scores_f16(Row*, int64_t, const uint16_t*, int64_t, int64_t, int64_t, int64_t, float) {
  ORK_CHECK(false, "ops::detail::block_scores_f16: no kernel for this CPU");
}
void block_values_f16(Row*, int64_t, const uint16_t*, int64_t, int64_t, int64_t, int64_t) {
  ORK_CHECK(false, "ops::detail::block_values_f16: no kernel for this CPU");
}
#endif

}  // namespace ork::ops::detail

#if defined(__x86_64__)
#pragma GCC pop_options
#endif
