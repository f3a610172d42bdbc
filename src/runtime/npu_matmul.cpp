#include "runtime/npu_matmul.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/quote.h"
#include "quant/hadamard.h"
#include "quant/requant.h"

namespace ork::runtime {

NpuMatmul::NpuMatmul(npu::Device& device, weights::Cache& cache, weights::Prefetcher* prefetcher,
                     std::shared_ptr<npu::MatmulScratch> scratch)
    : device_(device), cache_(cache), prefetcher_(prefetcher), scratch_(std::move(scratch)) {
  if (!scratch_) scratch_ = std::make_shared<npu::MatmulScratch>(device);
  const weights::Plan& plan = cache.plan();
  redirect_.resize(plan.weights.size());
  for (uint32_t d = 0; d < plan.domains_used && d < plan.scratch.size(); ++d) {
    scratch_->reserve(d, plan.scratch[d]);
  }
}

void NpuMatmul::redirect(int32_t weight, weights::Cache& other, int32_t other_weight) {
  ORK_CHECK(weight >= 0 && size_t(weight) < redirect_.size(), "redirect: weight ", weight, " out of range");
  ORK_CHECK(other_weight >= 0 && size_t(other_weight) < other.plan().weights.size(),
            "redirect: weight ", other_weight, " of the other model out of range");
  const weights::Plan& op = other.plan();
  // The other model's scratch need of that domain must be covered by the (shared or own) scratch.
  const uint32_t d = op.weights[size_t(other_weight)].domain;
  if (d < op.scratch.size()) scratch_->reserve(d, op.scratch[d]);
  redirect_[size_t(weight)] = {&other, other_weight};
}

void NpuMatmul::matmul(const model::Linear& w, const float* x, int64_t m, float* y) {
  ORK_CHECK(w.index >= 0 && size_t(w.index) < redirect_.size(), "weight ", quote(w.name()),
            " is not in the device plan");
  const Source src = redirect_[size_t(w.index)];
  weights::Cache& cache = src.cache != nullptr ? *src.cache : cache_;
  const int32_t widx = src.cache != nullptr ? src.weight : w.index;
  weights::Prefetcher* prefetcher = src.cache != nullptr ? nullptr : prefetcher_;
  const weights::Plan& plan = cache.plan();
  const weights::WeightPlan& wp = plan.weights[size_t(widx)];
  const int64_t k = w.k;
  xq_.resize(size_t(m * k));
  sa_.resize(size_t(m));
  quant::quantize_rows_i8(quant::rotate_for_int8(x, m, k, xr_), m, k, xq_.data(), sa_.data());

  for (size_t s = 0; s < wp.slices.size(); ++s) {
    const weights::Slice& sl = wp.slices[s];
    const int32_t unit = plan.first_unit[size_t(widx)] + int32_t(s);
    if (prefetcher != nullptr) prefetcher->advance(unit);
    const weights::Cache::Lease lease = cache.acquire(unit);
    const float* sb = cache.scales(widx) + sl.n0;
    const int64_t ns = sl.n1 - sl.n0;
    for (int64_t r0 = 0; r0 < m; r0 += plan.m_max) {
      const int64_t mc = std::min(plan.m_max, m - r0);
      c_.resize(size_t(mc * ns));
      ytmp_.resize(size_t(mc * ns));
      npu::matmul_i8(device_, *scratch_, lease.weight(), xq_.data() + r0 * k, mc, c_.data());
      quant::dequantize_i32(c_.data(), mc, ns, sa_.data() + r0, sb, ytmp_.data());
      for (int64_t i = 0; i < mc; ++i) {
        std::memcpy(y + (r0 + i) * w.n + sl.n0, ytmp_.data() + i * ns, size_t(ns) * sizeof(float));
      }
    }
  }
}

}  // namespace ork::runtime
