// Decoders of the plain formats: f32 (copy), f16 and bf16 (exact widening).
#include <cstdint>
#include <cstring>

#include "core/fp16.h"
#include "core/fp16_rows.h"
#include "quant/decode.h"

namespace ork::quant {

void decode_f32(const void* src, float* dst, int64_t n) {
  const int64_t count = block_count(Type::F32, n);
  if (count > 0) std::memcpy(dst, src, size_t(count) * sizeof(float));
}

void decode_f16(const void* src, float* dst, int64_t n) {
  const int64_t count = block_count(Type::F16, n);
  if (reinterpret_cast<uintptr_t>(src) % alignof(uint16_t) == 0) {  // the bulk conversion (same values)
    f16_to_f32_n(static_cast<const uint16_t*>(src), count, dst);
    return;
  }
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
