#include "runtime/cpu_int8_matmul.h"

#include "core/copy_block.h"
#include "core/error.h"
#include "core/quote.h"
#include "ops/matmul_w8a8.h"
#include "quant/hadamard.h"

namespace ork::runtime {

const weights::QuantizedRows& CpuInt8Matmul::quantized(const model::Linear& w) {
  ORK_CHECK(w.index >= 0 && size_t(w.index) < quantized_.size(), "weight ", quote(w.name()), " has no index");
  std::lock_guard lock(mutex_);
  auto& slot = quantized_[size_t(w.index)];
  if (!slot) slot = std::make_unique<weights::QuantizedRows>(weights::quantize_linear(w, &pool_));
  return *slot;
}

void CpuInt8Matmul::matmul(const model::Linear& w, const float* x, int64_t m, float* y) {
  const weights::QuantizedRows& q = quantized(w);
  ops::matmul_w8a8(pool_, quant::rotate_for_int8(x, m, w.k, xr_), m, w.k, q.q.data(), q.scales.data(), w.n, y);
}

void CpuInt8Matmul::matmul_rows(const model::Linear& w, const float* x, int64_t m, int64_t n0, float* y) {
  ORK_CHECK(n0 >= 0 && n0 < w.n, "matmul rows: first row ", n0, " of a ", w.n, "-row weight");
  const weights::QuantizedRows& q = quantized(w);
  const int64_t nr = w.n - n0;
  const int8_t* rows = q.q.data() + n0 * w.k;
  const float* xr = quant::rotate_for_int8(x, m, w.k, xr_);
  if (m == 1) {
    ops::matmul_w8a8(pool_, xr, 1, w.k, rows, q.scales.data() + n0, nr, y + n0);
    return;
  }
  ytmp_.resize(size_t(m * nr));
  ops::matmul_w8a8(pool_, xr, m, w.k, rows, q.scales.data() + n0, nr, ytmp_.data());
  copy_block(ytmp_.data(), m, nr, y + n0, w.n);
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
