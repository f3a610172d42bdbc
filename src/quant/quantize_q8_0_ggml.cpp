// ggml's reference Q8_0 quantizer (quantize_row_q8_0_ref, ggml/src/ggml-quants.c), the rounding
// of a q8_0 KV cache. Per block of 32: amax = max |x|, d = amax / 127 (f32), stored as fp16 (round to
// nearest even); id = d ? 1 / d : 0 in f32; q = roundf(x · id) (ties away from zero).
// ggml's CPU backends differ in the last step: x86 AVX multiplies by 127 / amax and rounds ties to
// even, NEON rounds ties to even (docs/memory.md); the two agree with this one except at exact ties.
#include <cmath>

#include "core/fp16.h"
#include "quant/block_io.h"
#include "quant/blocks.h"
#include "quant/quantize.h"
#include "quant/rounding.h"
#include "quant/types.h"

namespace ork::quant {

void quantize_q8_0_ggml(const float* src, void* dst, int64_t n) {
  const int64_t nb = block_count(Type::Q8_0, n);
  detail::check_finite(src, n, "q8_0", 0);
  for (int64_t i = 0; i < nb; ++i) {
    const float* x = src + i * kQK;
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ8_0 b{};
    b.d = f32_to_f16(d);
    for (int j = 0; j < kQK; ++j) b.qs[j] = int8_t(std::round(x[j] * id));
    detail::store_block(dst, i, b);
  }
}

}  // namespace ork::quant
