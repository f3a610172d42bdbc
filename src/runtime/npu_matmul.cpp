#include "runtime/npu_matmul.h"

#include <algorithm>
#include <cstring>

#include "core/copy_block.h"
#include "core/error.h"
#include "core/quote.h"
#include "quant/int4_split.h"
#include "quant/requant.h"
#include "weights/packed_int4.h"

namespace ork::runtime {

NpuMatmul::NpuMatmul(npu::Device& device, weights::Cache& cache, weights::Prefetcher* prefetcher,
                     std::shared_ptr<npu::MatmulScratch> scratch)
    : device_(device), cache_(cache), prefetcher_(prefetcher), scratch_(std::move(scratch)) {
  if (!scratch_) scratch_ = std::make_shared<npu::MatmulScratch>(device);
  const weights::Plan& plan = cache.plan();
  redirect_.resize(plan.weights.size());
  for (size_t b = 0; b < plan.expert_blocks.size(); ++b) {
    const size_t layer = size_t(plan.expert_blocks[b].layer);
    if (layer_block_.size() <= layer) layer_block_.resize(layer + 1, -1);
    layer_block_[layer] = int32_t(b);
  }
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

void NpuMatmul::expect_experts(int64_t layer, std::span<const int32_t> experts, bool guess) {
  if (prefetcher_ == nullptr || layer < 0 || size_t(layer) >= layer_block_.size() || layer_block_[size_t(layer)] < 0) {
    return;
  }
  const int32_t block = layer_block_[size_t(layer)];
  std::vector<int32_t> named(experts.begin(), experts.end());
  if (guess && expert_prefetch_ == weights::ExpertPrefetch::kNone) named.clear();  // nothing ahead of the router
  if (modeled_loads_ != nullptr) {
    const weights::Plan& plan = cache_.plan();
    const std::vector<int32_t>& first = plan.expert_blocks[size_t(block)].expert_first;
    std::vector<double>& at = named_at_[size_t(block)];
    std::vector<uint8_t>& g = guessed_[size_t(block)];
    const double now = modeled_loads_->timeline(modeled_now_());
    std::vector<double> next(at.size(), -1.0);
    std::vector<uint8_t> next_g(at.size(), 0);
    for (int32_t e : named) {
      if (e < 0 || size_t(e) >= at.size()) continue;
      next[size_t(e)] = at[size_t(e)] >= 0 ? at[size_t(e)] : now;
      next_g[size_t(e)] = guess;
    }
    for (size_t e = 0; e < at.size(); ++e) {
      if (!g[e] || next[e] >= 0) continue;
      // A guess dropped unused: what the prefetcher loaded for it took the loader's time.
      for (int32_t u = first[e]; u < first[e + 1]; ++u) {
        const uint64_t loads = cache_.load_count(u);
        if (loads == seen_loads_[size_t(u)]) continue;
        const weights::Unit& unit = plan.units[size_t(u)];
        modeled_loads_->charge_wasted(plan.weights[size_t(unit.weight)].slices[size_t(unit.slice)].bytes, at[e]);
        seen_loads_[size_t(u)] = loads;
      }
    }
    at = std::move(next);
    g = std::move(next_g);
  }
  prefetcher_->name_experts(block, std::move(named));
}

void NpuMatmul::model_loads(weights::ModeledLoads* loads, std::function<double()> now_ns) {
  modeled_loads_ = loads;
  modeled_now_ = std::move(now_ns);
  seen_loads_.assign(cache_.plan().units.size(), 0);
  named_at_.clear();
  guessed_.clear();
  for (const weights::ExpertBlock& b : cache_.plan().expert_blocks) {
    named_at_.emplace_back(b.expert_first.size() - 1, -1.0);
    guessed_.emplace_back(b.expert_first.size() - 1, 0);
  }
}

void NpuMatmul::quantize_input(const model::Linear& w, const ActivationSource& in, int64_t m, bool i4, bool a4) {
  // int4 weights carry their input's norm weight (weights/packed_int4.h): divide it out of the rows.
  const ActivationSource src = i4 ? in.unfold_norm(w) : in;
  if (a4) {
    src.quantize_i4(w, m, xq_, sa_, act_, row_);
  } else {
    src.quantize(w, m, xq_, sa_, act_, row_);
  }
}

std::pair<weights::Cache*, int32_t> NpuMatmul::source(const model::Linear& w) {
  ORK_CHECK(w.index >= 0 && size_t(w.index) < redirect_.size(), "weight ", quote(w.name()),
            " is not in the device plan");
  const Source src = redirect_[size_t(w.index)];
  if (src.cache != nullptr) return {src.cache, src.weight};
  return {&cache_, w.index};
}

bool NpuMatmul::runs_as_one_job(std::span<const model::Linear* const> ws) {
  const auto [c0, w0] = source(*ws[0]);
  const uint32_t domain = c0->plan().weights[size_t(w0)].domain;
  for (const model::Linear* w : ws) {
    const auto [cache, widx] = source(*w);
    const weights::Plan& plan = cache->plan();
    const weights::WeightPlan& wp = plan.weights[size_t(widx)];
    if (plan.mode != weights::Residency::kResident || wp.slices.size() != 1 || w->k != ws[0]->k ||
        wp.domain != domain || plan.wtype != c0->plan().wtype) {
      return false;
    }
  }
  return true;
}

void NpuMatmul::run_resident_group(std::span<const model::Linear* const> ws, const ActivationSource& in, int64_t m,
                                   std::span<float* const> ys, std::span<const int64_t> rows, bool sums_only) {
  const int64_t k = ws[0]->k;
  std::vector<std::pair<weights::Cache*, int32_t>> src;
  std::vector<weights::Cache::Lease> leases;
  std::vector<npu::PackedWeight> views;
  std::vector<const npu::PackedWeight*> packed;
  leases.reserve(ws.size());
  views.reserve(ws.size());
  for (size_t i = 0; i < ws.size(); ++i) {
    src.push_back(source(*ws[i]));
    auto& [cache, widx] = src.back();
    leases.push_back(cache->acquire(cache->plan().first_unit[size_t(widx)]));
    if (rows.empty()) {
      packed.push_back(&leases.back().weight());
    } else {
      views.push_back(npu::rows_view(leases.back().weight(), rows[i]));
      packed.push_back(&views.back());
    }
  }
  const int64_t m_max = src[0].first->plan().m_max;
  const bool i4 = packed[0]->dtype == npu::Dtype::kI4;
  const bool split = i4 && !int4_activations_;  // W4A8 by splitting: two int4 rows per token
  const int64_t rows_per_token = split ? 2 : 1;
  for (const model::Linear* w : ws) {
    ORK_CHECK(w->in_norm == ws[0]->in_norm, "one job of ", quote(ws[0]->name()), " and ", quote(w->name()),
              ": the weights read differently normalized inputs");
  }
  quantize_input(*ws[0], in, m, i4, i4 && int4_activations_);
  if (split) split_input(m, k);
  const int8_t* a = split ? halves_.data() : xq_.data();
  group_c_.resize(ws.size());
  std::vector<void*> cs(ws.size());
  for (int64_t r0 = 0; r0 < m; r0 += m_max) {
    const int64_t mc = std::min(m_max, m - r0);
    for (size_t i = 0; i < ws.size(); ++i) {
      group_c_[i].resize(size_t(rows_per_token * mc * packed[i]->n));
      cs[i] = group_c_[i].data();
    }
    npu::run_matmul_group(device_, *scratch_, packed, a + rows_per_token * r0 * k, rows_per_token * mc, cs);
    for (size_t i = 0; i < ws.size(); ++i) {
      const float* sb = src[i].first->scales(src[i].second);
      const int64_t n = ws[i]->n, nr = packed[i]->n;
      const int32_t* sums = group_c_[i].data();
      if (split) sums = combine_halves(*ws[i], *src[i].first, src[i].second, sums, mc, 0, nr);
      if (sums_only) {  // bit patterns into the float storage (GatedSums)
        for (int64_t r = 0; r < mc; ++r)
          std::memcpy(ys[i] + (r0 + r) * n, sums + r * nr, size_t(nr) * sizeof(int32_t));
        continue;
      }
      if (nr == n) {  // the one slice covers every row of the weight: results land in place
        quant::dequantize_i32(sums, mc, n, sa_.data() + r0, sb, ys[i] + r0 * n);
        continue;
      }
      ytmp_.resize(size_t(mc * nr));
      quant::dequantize_i32(sums, mc, nr, sa_.data() + r0, sb, ytmp_.data());
      copy_block(ytmp_.data(), mc, nr, ys[i] + r0 * n, n);
    }
  }
}

void NpuMatmul::split_input(int64_t m, int64_t k) {
  halves_.resize(size_t(2 * m * k));
  quant::split_int8_rows_to_int4(xq_.data(), m, k, halves_.data());
}

const int32_t* NpuMatmul::combine_halves(const model::Linear& w, const weights::Cache& cache, int32_t widx,
                                         const int32_t* r, int64_t mc, int64_t n0, int64_t ns) {
  const int32_t* corr = cache.corrections(widx);
  ORK_CHECK(corr != nullptr, "weight ", quote(w.name()), " has no int4 corrections");
  c_.resize(size_t(mc * ns));
  quant::combine_int4_split(r, mc, ns, corr + n0, c_.data());
  return c_.data();
}

void NpuMatmul::matmul_rows(std::span<const model::Linear* const> ws, const float* x, int64_t m,
                            std::span<float* const> ys, std::span<const int64_t> rows) {
  matmul_rows(ws, ActivationSource::rows(x), m, ys, rows);
}

void NpuMatmul::matmul_rows(std::span<const model::Linear* const> ws, const ActivationSource& in, int64_t m,
                            std::span<float* const> ys, std::span<const int64_t> rows) {
  ORK_CHECK(ws.size() == ys.size() && ws.size() == rows.size() && !ws.empty(), "matmul rows: ", ws.size(),
            " weights, ", ys.size(), " outputs, ", rows.size(), " row counts");
  ORK_CHECK(runs_as_one_job(ws), "matmul rows: the weights are not resident single slices of one domain");
  run_resident_group(ws, in, m, ys, rows);
}

void NpuMatmul::matmul_rows(const model::Linear& w, const ActivationSource& in, int64_t m, float* y, int64_t rows) {
  const model::Linear* one[] = {&w};
  float* outs[] = {y};
  const int64_t counts[] = {rows};
  ORK_CHECK(runs_as_one_job(one), "matmul rows: ", quote(w.name()), " is not a resident single slice");
  run_resident_group(one, in, m, outs, counts);
}

void NpuMatmul::matmul_group(std::span<const model::Linear* const> ws, const float* x, int64_t m,
                             std::span<float* const> ys) {
  ORK_CHECK(ws.size() == ys.size() && !ws.empty(), "matmul group: ", ws.size(), " weights, ", ys.size(),
            " outputs");
  // One job needs every weight resident (nothing to stream in between), one slice each, one domain.
  if (ws.size() == 1 || !runs_as_one_job(ws)) {
    MatmulBackend::matmul_group(ws, x, m, ys);
    return;
  }
  run_resident_group(ws, ActivationSource::rows(x), m, ys, {});
}

void NpuMatmul::matmul(const model::Linear& w, const float* x, int64_t m, float* y) {
  run(w, ActivationSource::rows(x), m, y);
}

void NpuMatmul::matmul(const model::Linear& w, const ActivationSource& in, int64_t m, float* y) { run(w, in, m, y); }

void NpuMatmul::matmul_sums(std::span<const model::Linear* const> ws, const ActivationSource& in, int64_t m,
                            std::span<float* const> ys, std::span<const int64_t> rows) {
  ORK_CHECK(ws.size() == ys.size() && !ws.empty() && (rows.empty() || rows.size() == ws.size()), "matmul sums: ",
            ws.size(), " weights, ", ys.size(), " outputs, ", rows.size(), " row counts");
  ORK_CHECK(runs_as_one_job(ws), "matmul sums: ", quote(ws[0]->name()), " and its group are not resident single slices of one domain");
  run_resident_group(ws, in, m, ys, rows, true);
}

const float* NpuMatmul::weight_scales(const model::Linear& w) {
  const auto [cache, widx] = source(w);
  return cache->scales(widx);
}

void NpuMatmul::describe_sums(std::span<const model::Linear* const> ws, std::span<float* const> ys,
                              std::span<const int64_t> rows, std::span<model::UnscaledRows> out) {
  for (size_t i = 0; i < ws.size(); ++i)
    out[i] = {ys[i], ws[i]->n, rows.empty() ? ws[i]->n : rows[i], sa_.data(), weight_scales(*ws[i])};
}

void NpuMatmul::matmul_group_unscaled(std::span<const model::Linear* const> ws, const model::ResidualNorm& in,
                                      int64_t m, std::span<float* const> ys, std::span<model::UnscaledRows> out) {
  if (!runs_as_one_job(ws)) {
    MatmulBackend::matmul_group_unscaled(ws, in, m, ys, out);
    return;
  }
  run_sums_unscaled(ws, ActivationSource::residual_rows(&in), m, ys, out);
}

void NpuMatmul::run_sums_unscaled(std::span<const model::Linear* const> ws, const ActivationSource& in, int64_t m,
                                  std::span<float* const> ys, std::span<model::UnscaledRows> out) {
  ORK_CHECK(out.size() == ws.size() && ys.size() == ws.size(), "matmul group: ", ws.size(), " weights, ", ys.size(),
            " outputs, ", out.size(), " results");
  run_resident_group(ws, in, m, ys, {}, true);
  describe_sums(ws, ys, {}, out);
}

model::UnscaledRows NpuMatmul::matmul_unscaled(const model::Linear& w, const float* x, int64_t m, float* y) {
  const model::Linear* one[] = {&w};
  if (!runs_as_one_job(one)) return MatmulBackend::matmul_unscaled(w, x, m, y);
  float* ys[] = {y};
  model::UnscaledRows out[1];
  run_sums_unscaled(one, ActivationSource::rows(x), m, ys, out);
  return out[0];
}

model::UnscaledRows NpuMatmul::ffn(const model::Linear& gate, const model::Linear& up, const model::Linear& down,
                                   ops::Glu glu, const model::ResidualNorm& in, int64_t m, float* gate_out,
                                   float* up_out, float* act, float* y) {
  const model::Linear* gu[] = {&gate, &up};
  if (!runs_as_one_job(gu)) return MatmulBackend::ffn(gate, up, down, glu, in, m, gate_out, up_out, act, y);
  model::check_ffn_shapes(gate, up, down);
  float* outs[] = {gate_out, up_out};
  run_resident_group(gu, ActivationSource::residual_rows(&in), m, outs, {}, true);
  ffn_sa_.assign(sa_.begin(), sa_.begin() + m);  // sa_ is down's own next
  GatedSums sums;
  model::UnscaledRows both[2];
  describe_sums(gu, outs, {}, both);
  sums.gate = both[0], sums.up = both[1];
  sums.gate.sa = sums.up.sa = ffn_sa_.data();
  const ActivationSource gated = ActivationSource::gated_sums(glu, &sums);
  const model::Linear* one[] = {&down};
  if (!runs_as_one_job(one)) {
    run(down, gated, m, y);
    return model::UnscaledRows::f32(y, down.n);
  }
  float* ys[] = {y};
  model::UnscaledRows out[1];
  run_sums_unscaled(one, gated, m, ys, out);
  return out[0];
}

void NpuMatmul::matmul_glu(const model::Linear& down, ops::Glu glu, const float* gate, const float* up, int64_t m,
                           float* act, float* y) {
  (void)act;
  run(down, ActivationSource::gated(glu, gate, up), m, y);
}

void NpuMatmul::run(const model::Linear& w, const ActivationSource& in, int64_t m, float* y) {
  const auto [cache_ptr, widx] = source(w);
  weights::Cache& cache = *cache_ptr;
  weights::Prefetcher* prefetcher = cache_ptr == &cache_ ? prefetcher_ : nullptr;  // none for a redirect
  const weights::Plan& plan = cache.plan();
  const weights::WeightPlan& wp = plan.weights[size_t(widx)];
  const int64_t k = w.k;
  const bool i4 = plan.wtype == npu::Dtype::kI4;
  const bool split = i4 && !int4_activations_;
  quantize_input(w, in, m, i4, i4 && int4_activations_);
  if (split) split_input(m, k);

  for (size_t s = 0; s < wp.slices.size(); ++s) {
    const weights::Slice& sl = wp.slices[s];
    const int32_t unit = plan.first_unit[size_t(widx)] + int32_t(s);
    if (prefetcher != nullptr) prefetcher->advance(unit);
    const weights::Cache::Lease lease = cache.acquire(unit);
    if (modeled_loads_ != nullptr && cache_ptr == &cache_) {
      const uint64_t loads = cache.load_count(unit);
      // A routed expert can load from when it was named (guessed or routed) on.
      const int32_t block = plan.unit_block.empty() ? -1 : plan.unit_block[size_t(unit)];
      double requested = 0.0;
      if (block >= 0) {
        const std::vector<int32_t>& first = plan.expert_blocks[size_t(block)].expert_first;
        const size_t e = size_t(std::upper_bound(first.begin(), first.end(), unit) - first.begin()) - 1;
        const double at = named_at_[size_t(block)][e];
        requested = at >= 0 ? at : modeled_loads_->timeline(modeled_now_());
      }
      modeled_loads_->acquire(modeled_now_(), sl.bytes, loads != seen_loads_[size_t(unit)], requested, block >= 0);
      seen_loads_[size_t(unit)] = loads;
    }
    const float* sb = cache.scales(widx) + sl.n0;
    const int64_t ns = sl.n1 - sl.n0;
    for (int64_t r0 = 0; r0 < m; r0 += plan.m_max) {
      const int64_t mc = std::min(plan.m_max, m - r0);
      ORK_CHECK(lease.weight().dtype == plan.wtype, "weight ", quote(w.name()), " is loaded as ",
                npu::dtype_name(lease.weight().dtype), ", the plan has ", npu::dtype_name(plan.wtype));
      const int32_t* sums = nullptr;
      if (split) {
        r_.resize(size_t(2 * mc * ns));
        npu::run_matmul(device_, *scratch_, lease.weight(), halves_.data() + 2 * r0 * k, 2 * mc, r_.data());
        sums = combine_halves(w, cache, widx, r_.data(), mc, sl.n0, ns);
      } else if (i4) {  // W4A4: the int4 codes are the job's rows
        c_.resize(size_t(mc * ns));
        npu::run_matmul(device_, *scratch_, lease.weight(), xq_.data() + r0 * k, mc, c_.data());
        sums = c_.data();
      } else {
        c_.resize(size_t(mc * ns));
        npu::matmul_i8(device_, *scratch_, lease.weight(), xq_.data() + r0 * k, mc, c_.data());
        sums = c_.data();
      }
      ytmp_.resize(size_t(mc * ns));
      quant::dequantize_i32(sums, mc, ns, sa_.data() + r0, sb, ytmp_.data());
      copy_block(ytmp_.data(), mc, ns, y + r0 * w.n + sl.n0, w.n);
    }
  }
}

}  // namespace ork::runtime
