#include "ops/qkernels.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace ork::ops {
namespace {

// Quantizes n floats with d = max|x| / 127 (n <= 256); returns d.
float quantize_symmetric(const float* x, int n, int8_t* q) {
  float amax = 0.0f;
  for (int i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int i = 0; i < n; ++i) {
    // |x·id| <= 127 up to one rounding; the clamp keeps 127.00001 and NaN-free inputs in range.
    const float v = std::nearbyint(x[i] * id);
    q[i] = int8_t(std::clamp(v, -127.0f, 127.0f));
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
