// Reference encoders of the plain formats: f32 (copy), f16 and bf16 (round to nearest even).
#include <cstdint>
#include <cstring>

#include "core/fp16.h"
#include "core/fp16_rows.h"
#include "quant/quantize.h"
#include "quant/rounding.h"
#include "quant/types.h"

namespace ork::quant {

void quantize_f32(const float* src, void* dst, int64_t n) {
  const int64_t count = block_count(Type::F32, n);
  detail::check_finite(src, count, "f32", 0);
  if (count > 0) std::memcpy(dst, src, size_t(count) * sizeof(float));
}

void quantize_f16(const float* src, void* dst, int64_t n) {
  const int64_t count = block_count(Type::F16, n);
  detail::check_finite(src, count, "f16", 0);
  if (reinterpret_cast<uintptr_t>(dst) % alignof(uint16_t) == 0) {  // the bulk conversion wants halves
    f32_to_f16_n(src, count, static_cast<uint16_t*>(dst));
    return;
  }
  auto* p = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < count; ++i) {
    const uint16_t h = f32_to_f16(src[i]);
    std::memcpy(p + 2 * i, &h, sizeof h);
  }
}

void quantize_bf16(const float* src, void* dst, int64_t n) {
  const int64_t count = block_count(Type::BF16, n);
  detail::check_finite(src, count, "bf16", 0);
  auto* p = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < count; ++i) {
    const uint16_t h = f32_to_bf16(src[i]);
    std::memcpy(p + 2 * i, &h, sizeof h);
  }
}

}  // namespace ork::quant
