#include "runtime/cpu_int8_matmul.h"

#include "core/error.h"
#include "core/quote.h"
#include "ops/matmul_w8a8.h"
#include "quant/hadamard.h"

namespace ork::runtime {

void CpuInt8Matmul::matmul(const model::Linear& w, const float* x, int64_t m, float* y) {
  ORK_CHECK(w.index >= 0 && size_t(w.index) < quantized_.size(), "weight ", quote(w.name()), " has no index");
  const weights::QuantizedRows* q = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto& slot = quantized_[size_t(w.index)];
    if (!slot) slot = std::make_unique<weights::QuantizedRows>(weights::quantize_linear(w, &pool_));
    q = slot.get();
  }
  ops::matmul_w8a8(pool_, quant::rotate_for_int8(x, m, w.k, xr_), m, w.k, q->q.data(), q->scales.data(), w.n, y);
}

uint64_t CpuInt8Matmul::quantized_bytes() const {
  std::lock_guard lock(mutex_);
  uint64_t b = 0;
  for (const auto& q : quantized_) {
    if (q) b += q->q.size() * sizeof(q->q[0]) + q->scales.size() * sizeof(q->scales[0]);
  }
  return b;
}

}  // namespace ork::runtime
