#include "ops/qkernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "ops/quantize_rows_simd.h"

namespace ork::ops {
namespace {

// Inlined into the ORK_VECTOR_CLONES row functions below: the operations are per-element IEEE
// arithmetic and an exact max, so every clone produces the same integers.
// Quantizes n floats with d = max|x| / 127 (n <= 256, a multiple of 8); returns d.
// Rounding is half to even, as nearbyint in the default mode: for |v| <= 2^22, (v + 1.5·2^23) −
// 1.5·2^23 rounds v to an integer in one f32 addition; here |v| <= 127 up to one rounding.
// max|x| over eight lanes held as one GCC vector: written as an array of eight scalars, GCC 12 kept
// the loop scalar (eight vmaxss a step in the AVX2 clone; one vmaxps now).
__attribute__((always_inline)) inline float quantize_symmetric(const float* __restrict x, int n, int8_t* __restrict q) {
  typedef float F8 __attribute__((vector_size(32)));
  typedef uint32_t U8 __attribute__((vector_size(32)));
  F8 m = {};
  for (int i = 0; i < n; i += 8) {
    U8 bits;
    __builtin_memcpy(&bits, x + i, sizeof bits);
    const F8 a = F8(bits & 0x7fffffffu);  // |x|, as std::fabs
    m = m > a ? m : a;
  }
  float amax = 0.0f;
  for (int l = 0; l < 8; ++l) amax = std::max(amax, m[l]);
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  constexpr float kRound = 12582912.0f;  // 1.5 · 2^23
  for (int i = 0; i < n; ++i) {
    // The clamp keeps 127.00001 (one rounding above 127) in range.
    const float v = (x[i] * id + kRound) - kRound;
    q[i] = int8_t(v < -127.0f ? -127.0f : (v > 127.0f ? 127.0f : v));
  }
  return d;
}

}  // namespace

// The row functions are the vector clones (quantize_symmetric inlined into each), not the block
// function: a clone's call goes through its resolver, once per row instead of once per block.
ORK_VECTOR_CLONES void quantize_row_q8a_portable(const float* x, int64_t k, BlockQ8A* y) {
  for (int64_t b = 0; b < k / quant::kQK; ++b) {
    BlockQ8A& blk = y[b];
    blk.d = quantize_symmetric(x + b * quant::kQK, quant::kQK, blk.qs);
    int32_t s = 0;
    for (int i = 0; i < quant::kQK; ++i) s += blk.qs[i];
    blk.sum = s;
  }
}

ORK_VECTOR_CLONES void quantize_row_q8k_portable(const float* x, int64_t k, quant::BlockQ8_K* y) {
  for (int64_t b = 0; b < k / quant::kQK_K; ++b) {
    quant::BlockQ8_K& blk = y[b];
    blk.d = quantize_symmetric(x + b * quant::kQK_K, quant::kQK_K, blk.qs);
    for (int j = 0; j < quant::kQK_K / 16; ++j) {
      int32_t s = 0;
      for (int i = 0; i < 16; ++i) s += blk.qs[16 * j + i];
      blk.bsums[j] = int16_t(s);
    }
  }
}

void quantize_row_q8a(const float* x, int64_t k, BlockQ8A* y) {
  if (detail::quantize_rows_simd_available())
    detail::quantize_row_q8a_simd(x, k, y);
  else
    quantize_row_q8a_portable(x, k, y);
}

void quantize_row_q8k(const float* x, int64_t k, quant::BlockQ8_K* y) {
  if (detail::quantize_rows_simd_available())
    detail::quantize_row_q8k_simd(x, k, y);
  else
    quantize_row_q8k_portable(x, k, y);
}

int64_t act_row_bytes(ActFormat f, int64_t k) {
  switch (f) {
    case ActFormat::kQ8A: return k / quant::kQK * int64_t(sizeof(BlockQ8A));
    case ActFormat::kQ8K: return k / quant::kQK_K * int64_t(sizeof(quant::BlockQ8_K));
    case ActFormat::kF32: return k * int64_t(sizeof(float));
  }
  return 0;
}

const uint8_t* quantize_activations(ThreadPool& pool, ActFormat f, const float* x, int64_t m, int64_t k) {
  if (f == ActFormat::kF32) return reinterpret_cast<const uint8_t*>(x);
  const int64_t ab = act_row_bytes(f, k);
  thread_local std::vector<uint8_t> buf;
  if (buf.size() < size_t(m * ab)) buf.resize(size_t(m * ab));
  uint8_t* out = buf.data();
  const auto quantize = [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      if (f == ActFormat::kQ8A)
        quantize_row_q8a(x + r * k, k, reinterpret_cast<BlockQ8A*>(out + r * ab));
      else
        quantize_row_q8k(x + r * k, k, reinterpret_cast<quant::BlockQ8_K*>(out + r * ab));
    }
  };
  if (m >= 8)
    pool.parallel_for(m, 4, quantize);
  else
    quantize(0, m);
  return out;
}

RowSplit split_rows(int64_t m, int64_t n_tiles, int threads, int64_t tasks_per_thread) {
  RowSplit s;
  const int64_t want = tasks_per_thread * int64_t(threads);
  if (n_tiles < want && m > kRowBlock)
    s.blocks = std::min<int64_t>((m + kRowBlock - 1) / kRowBlock, (want + n_tiles - 1) / n_tiles);
  s.per = (m + s.blocks - 1) / s.blocks;
  return s;
}

const QKernels& qkernels(Isa isa) {
  const QKernels* t = nullptr;
  if (isa_supported(isa)) {
    switch (isa) {
      case Isa::kScalar: t = qkernels_scalar(); break;
      case Isa::kAvx2: t = qkernels_avx2(); break;
      case Isa::kAvx512Vnni: t = qkernels_avx512vnni(); break;
      case Isa::kNeonDot: t = qkernels_neon(); break;
    }
  }
  ORK_CHECK(t != nullptr, "ops: no kernels for ISA '", isa_name(isa), "' on this CPU/build");
  return *t;
}

}  // namespace ork::ops
