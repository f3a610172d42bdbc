// Decoders of IQ4_NL and IQ4_XS with ggml's dequantize_row_iq4_nl / _iq4_xs arithmetic
// (ggml/src/ggml-quants.c): the f32 scale times the grid value kIQ4NLValues[index] (int8 → f32);
// IQ4_XS first forms its sub-block scale dl = d * (ls - 32) in f32.
#include "core/fp16.h"
#include "quant/block_io.h"
#include "quant/blocks.h"
#include "quant/decode.h"

namespace ork::quant {

void decode_iq4_nl(const void* src, float* dst, int64_t n) {
  const int64_t nb = block_count(Type::IQ4_NL, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK) {
    const auto b = detail::load_block<BlockIQ4_NL>(src, i);
    const float d = f16_to_f32(b.d);
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = d * float(kIQ4NLValues[b.qs[j] & 0x0f]);
      dst[j + kQK / 2] = d * float(kIQ4NLValues[b.qs[j] >> 4]);
    }
  }
}

void decode_iq4_xs(const void* src, float* dst, int64_t n) {
  const int64_t nb = block_count(Type::IQ4_XS, n);
  for (int64_t i = 0; i < nb; ++i) {
    const auto b = detail::load_block<BlockIQ4_XS>(src, i);
    const float d = f16_to_f32(b.d);
    for (int ib = 0; ib < kQK_K / 32; ++ib, dst += 32) {
      const int ls = ((b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0x0f) | (((b.scales_h >> (2 * ib)) & 3) << 4);
      const float dl = d * float(ls - 32);
      const uint8_t* qs = b.qs + 16 * ib;
      for (int j = 0; j < 16; ++j) {
        dst[j] = dl * float(kIQ4NLValues[qs[j] & 0x0f]);
        dst[j + 16] = dl * float(kIQ4NLValues[qs[j] >> 4]);
      }
    }
  }
}

}  // namespace ork::quant
