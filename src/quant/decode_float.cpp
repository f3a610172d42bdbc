// Decoders of the plain formats: f32 (copy), f16 and bf16 (exact widening).
#include <cstring>

#include "core/fp16.h"
#include "quant/decode.h"

namespace ork::quant {

void decode_f32(const void* src, float* dst, int64_t n) {
  const int64_t count = block_count(Type::F32, n);
  if (count > 0) std::memcpy(dst, src, size_t(count) * sizeof(float));
}

void decode_f16(const void* src, float* dst, int64_t n) {
  const int64_t count = block_count(Type::F16, n);
  const auto* p = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < count; ++i) {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, sizeof h);
    dst[i] = f16_to_f32(h);
  }
}

void decode_bf16(const void* src, float* dst, int64_t n) {
  const int64_t count = block_count(Type::BF16, n);
  const auto* p = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < count; ++i) {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, sizeof h);
    dst[i] = bf16_to_f32(h);
  }
}

}  // namespace ork::quant
