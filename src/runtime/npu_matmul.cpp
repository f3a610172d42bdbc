#include "runtime/npu_matmul.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "quant/requant.h"

namespace ork::runtime {

NpuMatmul::NpuMatmul(npu::Device& device, weights::Cache& cache, weights::Prefetcher* prefetcher)
    : device_(device), cache_(cache), prefetcher_(prefetcher), scratch_(device) {
  const weights::Plan& plan = cache.plan();
  for (uint32_t d = 0; d < plan.domains_used; ++d) scratch_.reserve(d, plan.scratch[d]);
}

void NpuMatmul::matmul(const model::Linear& w, const float* x, int64_t m, float* y) {
  const weights::Plan& plan = cache_.plan();
  ORK_CHECK(w.index >= 0 && size_t(w.index) < plan.weights.size(), "weight '", w.name(),
            "' is not in the device plan");
  const weights::WeightPlan& wp = plan.weights[size_t(w.index)];
  const int64_t k = w.k;
  xq_.resize(size_t(m * k));
  sa_.resize(size_t(m));
  quant::quantize_rows_i8(x, m, k, xq_.data(), sa_.data());

  for (size_t s = 0; s < wp.slices.size(); ++s) {
    const weights::Slice& sl = wp.slices[s];
    const int32_t unit = plan.first_unit[size_t(w.index)] + int32_t(s);
    if (prefetcher_ != nullptr) prefetcher_->advance(unit);
    const weights::Cache::Lease lease = cache_.acquire(unit);
    const float* sb = cache_.scales(w.index) + sl.n0;
    const int64_t ns = sl.n1 - sl.n0;
    for (int64_t r0 = 0; r0 < m; r0 += plan.m_max) {
      const int64_t mc = std::min(plan.m_max, m - r0);
      c_.resize(size_t(mc * ns));
      ytmp_.resize(size_t(mc * ns));
      npu::matmul_i8(device_, scratch_, lease.weight(), xq_.data() + r0 * k, mc, c_.data());
      quant::dequantize_i32(c_.data(), mc, ns, sa_.data() + r0, sb, ytmp_.data());
      for (int64_t i = 0; i < mc; ++i) {
        std::memcpy(y + (r0 + i) * w.n + sl.n0, ytmp_.data() + i * ns, size_t(ns) * sizeof(float));
      }
    }
  }
}

}  // namespace ork::runtime
