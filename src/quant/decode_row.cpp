#include "quant/decode.h"

namespace ork::quant {

void decode_row(Type type, const void* src, float* dst, int64_t n) {
  const TypeTraits& t = traits(type);  // throws for an unsupported type
  block_count(type, n);                // throws for a partial block, naming the type
  t.decode(src, dst, n);
}

}  // namespace ork::quant
