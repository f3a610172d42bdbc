#include "runtime/cpu_int8_matmul.h"

#include "core/copy_block.h"
#include "core/error.h"
#include "core/quote.h"
#include "ops/matmul_w8a8.h"

namespace ork::runtime {

const weights::QuantizedRows& CpuInt8Matmul::quantized(const model::Linear& w) {
  ORK_CHECK(w.index >= 0 && size_t(w.index) < quantized_.size(), "weight ", quote(w.name()), " has no index");
  std::lock_guard lock(mutex_);
  auto& slot = quantized_[size_t(w.index)];
  if (!slot) slot = std::make_unique<weights::QuantizedRows>(weights::quantize_linear(w, &pool_));
  return *slot;
}

void CpuInt8Matmul::quantize_input(const model::Linear& w, const ActivationSource& in, int64_t m) {
  in.quantize(w, m, xq_, sa_, act_, row_);
}

void CpuInt8Matmul::matmul(const model::Linear& w, const float* x, int64_t m, float* y) {
  const weights::QuantizedRows& q = quantized(w);
  quantize_input(w, ActivationSource::rows(x), m);
  ops::matmul_w8a8_quantized(pool_, xq_.data(), sa_.data(), m, w.k, q.q.data(), q.scales.data(), w.n, y);
}

void CpuInt8Matmul::matmul_glu(const model::Linear& down, ops::Glu glu, const float* gate, const float* up, int64_t m,
                               float* act, float* y) {
  (void)act;
  const weights::QuantizedRows& q = quantized(down);
  quantize_input(down, ActivationSource::gated(glu, gate, up), m);
  ops::matmul_w8a8_quantized(pool_, xq_.data(), sa_.data(), m, down.k, q.q.data(), q.scales.data(), down.n, y);
}

void CpuInt8Matmul::matmul_rows(const model::Linear& w, const float* x, int64_t m, int64_t n0, float* y) {
  matmul_rows(w, ActivationSource::rows(x), m, n0, y);
}

void CpuInt8Matmul::matmul_rows(const model::Linear& w, const ActivationSource& in, int64_t m, int64_t n0, float* y) {
  ORK_CHECK(n0 >= 0 && n0 < w.n, "matmul rows: first row ", n0, " of a ", w.n, "-row weight");
  const weights::QuantizedRows& q = quantized(w);
  const int64_t nr = w.n - n0;
  const int8_t* rows = q.q.data() + n0 * w.k;
  quantize_input(w, in, m);
  if (m == 1 || n0 == 0) {  // the columns are y's rows (or one row): written in place
    ops::matmul_w8a8_quantized(pool_, xq_.data(), sa_.data(), m, w.k, rows, q.scales.data() + n0, nr, y + n0);
    return;
  }
  ytmp_.resize(size_t(m * nr));
  ops::matmul_w8a8_quantized(pool_, xq_.data(), sa_.data(), m, w.k, rows, q.scales.data() + n0, nr, ytmp_.data());
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
