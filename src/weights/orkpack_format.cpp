#include "weights/orkpack_format.h"

#include <cstring>

#include "core/error.h"
#include "weights/hash64.h"

namespace ork::weights {

Fingerprint fingerprint_of(const gguf::File& file) {
  const MappedFile& m = file.mapping();
  Fingerprint f;
  f.size = m.size();
  const uint64_t data_off = file.data_offset() <= m.size() ? file.data_offset() : m.size();
  f.meta_hash = hash64(m.data(), size_t(data_off), 0);
  const uint64_t d = m.size() - data_off;
  constexpr uint64_t kWindow = 4096, kWindows = 16;
  if (d <= kWindow * kWindows) {
    f.data_hash = hash64(m.data() + data_off, size_t(d), 0);
  } else {
    uint64_t h = 0;
    for (uint64_t i = 0; i < kWindows; ++i) {
      const uint64_t off = data_off + i * (d - kWindow) / (kWindows - 1);
      h = hash64(m.data() + off, size_t(kWindow), h);
    }
    f.data_hash = h;
  }
  return f;
}

uint32_t dtype_code(npu::Dtype d) {
  switch (d) {
    case npu::Dtype::kI8: return 0;
    case npu::Dtype::kF16: return 1;
    case npu::Dtype::kI4: return 2;
  }
  fail("dtype_code: unknown dtype");
}

npu::Dtype dtype_from_code(uint32_t code, const std::string& what) {
  if (code == 0) return npu::Dtype::kI8;
  if (code == 1) return npu::Dtype::kF16;
  if (code == 2) return npu::Dtype::kI4;
  fail(what, ": unknown dtype code ", code, " (0 = i8, 1 = f16, 2 = i4)");
}

void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
void put_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}
uint32_t get_u32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(p[i]) << (8 * i);
  return v;
}
uint64_t get_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

}  // namespace ork::weights
