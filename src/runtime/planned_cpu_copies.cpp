#include "runtime/planned_cpu_copies.h"

#include <vector>

#include "model/linear_calls.h"

namespace ork::runtime {

namespace {

// NpuMatmul::runs_as_one_job over the plan alone: every weight resident, one slice, one domain.
bool one_job(const model::LinearCall& call, const weights::Plan& plan) {
  if (plan.mode != weights::Residency::kResident) return false;
  const uint32_t domain = plan.weights[size_t(call.weights[0]->index)].domain;
  for (const model::Linear* w : call.weights) {
    const weights::WeightPlan& wp = plan.weights[size_t(w->index)];
    if (wp.slices.size() != 1 || wp.domain != domain || w->k != call.weights[0]->k) return false;
  }
  return true;
}

}  // namespace

uint64_t cpu_copy_bytes(const model::Linear& w, npu::Dtype wtype) {
  const uint64_t n = uint64_t(w.n), k = uint64_t(w.k);
  const uint64_t codes = wtype == npu::Dtype::kI4 ? n * ((k + 1) / 2) : n * k;
  return codes + n * sizeof(float);
}

PlannedCpuCopies planned_cpu_copy_bytes(const Scheduler& scheduler, const model::Weights& weights,
                                        const weights::Plan& plan) {
  PlannedCpuCopies r;
  std::vector<bool> copied(weights.linears().size(), false);
  for (const model::Linear* w : weights.linears()) r.all_bytes += cpu_copy_bytes(*w, scheduler.wtype());
  for (const model::LinearCall& call : model::linear_calls(weights)) {
    std::vector<int64_t> ns;
    for (const model::Linear* w : call.weights) ns.push_back(w->n);
    const bool can_split = one_job(call, plan);
    for (const int64_t m : {int64_t(1), plan.m_max}) {
      const Choice c = scheduler.choose(m, call.weights[0]->k, ns, can_split);
      if (!c.cpu && !c.split) continue;
      for (const model::Linear* w : call.weights) {
        if (copied[size_t(w->index)]) continue;
        copied[size_t(w->index)] = true;
        r.bytes += cpu_copy_bytes(*w, scheduler.wtype());
        ++r.weights;
      }
    }
  }
  return r;
}

}  // namespace ork::runtime
