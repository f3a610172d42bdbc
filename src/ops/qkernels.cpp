#include "ops/qkernels.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace ork::ops {
namespace {

// ORK_VECTOR_CLONES: the operations are per-element IEEE arithmetic and an exact max, so every clone
// produces the same integers.
// Quantizes n floats with d = max|x| / 127 (n <= 256, a multiple of 8); returns d.
// Rounding is half to even, as nearbyint in the default mode: for |v| <= 2^22, (v + 1.5·2^23) −
// 1.5·2^23 rounds v to an integer in one f32 addition; here |v| <= 127 up to one rounding.
ORK_VECTOR_CLONES float quantize_symmetric(const float* __restrict x, int n, int8_t* __restrict q) {
  float lanes[8] = {};
  for (int i = 0; i < n; i += 8)
    for (int l = 0; l < 8; ++l) {
      const float a = std::fabs(x[i + l]);
      lanes[l] = lanes[l] > a ? lanes[l] : a;
    }
  float amax = 0.0f;
  for (float a : lanes) amax = std::max(amax, a);
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

void quantize_row_q8a(const float* x, int64_t k, BlockQ8A* y) {
  for (int64_t b = 0; b < k / quant::kQK; ++b) {
    BlockQ8A& blk = y[b];
    blk.d = quantize_symmetric(x + b * quant::kQK, quant::kQK, blk.qs);
    int32_t s = 0;
    for (int i = 0; i < quant::kQK; ++i) s += blk.qs[i];
    blk.sum = s;
  }
}

void quantize_row_q8k(const float* x, int64_t k, quant::BlockQ8_K* y) {
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
