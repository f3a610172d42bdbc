#include "weights/plan.h"

#include <algorithm>

#include "core/checked.h"
#include "core/error.h"
#include "core/quote.h"
#include "weights/packed.h"
#include "weights/packed_int4.h"

namespace ork::weights {

Residency parse_residency(const std::string& t) {
  if (t == "auto") return Residency::kAuto;
  if (t == "resident") return Residency::kResident;
  if (t == "stream") return Residency::kStream;
  fail("residency ", quote(t), " is not one of auto, resident, stream");
}

const char* residency_name(Residency r) {
  switch (r) {
    case Residency::kAuto: return "auto";
    case Residency::kResident: return "resident";
    case Residency::kStream: return "stream";
  }
  return "?";
}

uint64_t WeightPlan::bytes() const {
  uint64_t b = 0;
  for (const Slice& s : slices) b += s.bytes;
  return b;
}

uint64_t WeightPlan::footprint() const {
  uint64_t b = 0;
  for (const Slice& s : slices) b += s.footprint;
  return b;
}

uint64_t Plan::weight_bytes() const {
  uint64_t b = 0;
  for (const WeightPlan& w : weights) b += w.bytes();
  return b;
}

uint64_t iova_footprint(uint64_t bytes) { return npu::iova_slot_bytes(bytes); }

namespace {

// Cuts a weight into N slices of at most max_bytes packed bytes (rows in multiples of
// slice_row_align(wtype)).
std::vector<Slice> slice_weight(const model::Linear& w, uint64_t max_bytes, npu::Dtype wtype) {
  const int64_t align = slice_row_align(wtype);
  const uint64_t row_bytes = std::max<uint64_t>(packed_bytes(align, w.k, wtype) / uint64_t(align), 1);
  int64_t rows = int64_t(max_bytes / row_bytes) / align * align;
  ORK_CHECK(rows >= align, "weight ", quote(w.name()), " (K = ", w.k, ") has rows too long for slices of ",
            max_bytes, " bytes");
  std::vector<Slice> out;
  for (int64_t n0 = 0; n0 < w.n; n0 += rows) {
    Slice s;
    s.n0 = n0;
    s.n1 = std::min(w.n, n0 + rows);
    s.bytes = packed_bytes(s.n1 - s.n0, w.k, wtype);
    s.footprint = iova_footprint(s.bytes);
    out.push_back(s);
  }
  return out;
}

// The plan cache's tasks for one weight: each slice at M = 1 (decode) and M = m_max (prefill
// chunks), twice over, so that other row counts (a prefill's last chunk) fit beside them for a while
// before the cache starts over (npu::MatmulScratch). Fused jobs (Q/K/V, gate/up) take the sum of
// their parts' tasks. An int4 weight's jobs have two rows of int4 codes per token (W4A8 by
// splitting, quant/int4_split.h).
uint64_t plan_tasks_for(const WeightPlan& w, int64_t m_max, uint32_t cores, npu::Dtype wtype) {
  const int64_t rows = wtype == npu::Dtype::kI4 ? 2 : 1;
  uint64_t t = 0;
  for (const Slice& s : w.slices) {
    t += npu::matmul_tasks(rows, w.linear->k, s.n1 - s.n0, wtype, cores);
    if (m_max > 1) t += npu::matmul_tasks(rows * m_max, w.linear->k, s.n1 - s.n0, wtype, cores);
  }
  return 2 * t;
}

// The scratch of one weight; plan_tasks add up over the weights of a domain (scratch_add).
npu::ScratchNeed scratch_for(const WeightPlan& w, int64_t m_max, uint32_t cores, npu::Dtype wtype) {
  const int64_t rows = wtype == npu::Dtype::kI4 ? 2 * m_max : m_max;
  npu::ScratchNeed need;
  for (const Slice& s : w.slices) {
    need.merge(npu::scratch_need(rows, w.linear->k, s.n1 - s.n0, wtype, cores));
  }
  need.plan_tasks = plan_tasks_for(w, m_max, cores, wtype);
  return need;
}

// `into` grows to hold `w`'s buffers too (element-wise max) and its cached jobs (a sum).
void scratch_add(npu::ScratchNeed& into, const npu::ScratchNeed& w) {
  const uint64_t plan_tasks = into.plan_tasks + w.plan_tasks;
  into.merge(w);
  into.plan_tasks = plan_tasks;
}

uint64_t scratch_footprint(const npu::ScratchNeed& n) {
  return iova_footprint(n.a) + iova_footprint(n.c) + iova_footprint(n.regcmd) + iova_footprint(n.tasks) +
         (n.plan_tasks > 0 ? iova_footprint(n.plan_regcmd_bytes()) + iova_footprint(n.plan_task_bytes()) : 0);
}

uint64_t max_footprint(const npu::ScratchNeed& n) {
  return std::max({iova_footprint(n.a), iova_footprint(n.c), iova_footprint(n.regcmd),
                   iova_footprint(n.tasks), iova_footprint(n.plan_regcmd_bytes())});
}

// What another model holds in domain d (weights/window_taken.h); nothing beyond the list.
WindowTaken taken_in(const std::vector<WindowTaken>& taken, uint32_t d) {
  return d < taken.size() ? taken[d] : WindowTaken{};
}

// " beside the N bytes of IOVA another model holds" when `taken` is not empty (for messages).
std::string beside(const std::vector<WindowTaken>& taken) {
  const uint64_t b = window_taken_bytes(taken);
  return b > 0 ? str_cat(" beside the ", b, " bytes of IOVA window another model on the device holds") : "";
}

// Fills domains in forward order, a layer at a time; false when the domains run out. When a layer
// group does not fit even a domain of its own, *too_big lists its weights (else it is left empty).
// A domain starts with what another model holds in it (p.taken).
bool place_resident(Plan& p, const npu::Capabilities& caps, std::string* why, std::vector<size_t>* too_big) {
  too_big->clear();
  p.window_used.clear();
  const uint64_t window = caps.window_bytes;
  // Linear::group: a dense layer's seven weights, a MoE layer's attention (and shared expert), each
  // expert's three, the output weight: consecutive runs of equal group numbers.
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < p.weights.size(); ++i) {
    if (i == 0 || p.weights[i].linear->group != p.weights[i - 1].linear->group) groups.emplace_back();
    groups.back().push_back(i);
  }
  uint32_t domain = 0;
  uint64_t used = 0, largest = 0;
  bool own = false;  // this model has placed a layer in `domain`
  WindowTaken other;
  auto open = [&](uint32_t d) {
    other = taken_in(p.taken, d);
    used = other.footprint;
    largest = other.largest;
    own = false;
    p.window_used.resize(d + 1, 0);
    p.window_used[d] = used + (other.footprint > 0 ? scratch_footprint(other.scratch) : 0);
  };
  open(0);
  npu::ScratchNeed scratch;
  p.domain_bytes.assign(1, 0);
  p.scratch.assign(1, {});
  auto fits = [&](uint64_t add_used, uint64_t add_largest, const npu::ScratchNeed& s) {
    npu::ScratchNeed both = s;  // the shared scratch: the larger of the two needs
    both.merge(other.scratch);
    const uint64_t big = std::max({largest, add_largest, max_footprint(both)});
    return used + add_used + scratch_footprint(both) + 2 * big <= window;
  };
  for (const auto& g : groups) {
    uint64_t g_fp = 0, g_big = 0;
    npu::ScratchNeed g_scratch = scratch;
    for (size_t j : g) {
      g_fp += p.weights[j].footprint();
      for (const Slice& s : p.weights[j].slices) g_big = std::max(g_big, s.footprint);
      scratch_add(g_scratch, scratch_for(p.weights[j], p.m_max, caps.cores, p.wtype));
    }
    while (!fits(g_fp, g_big, g_scratch)) {
      if (!own && other.footprint == 0) {
        *why = "one layer needs more than a whole IOMMU domain";
        *too_big = g;
        return false;
      }
      if (++domain >= caps.domains) {
        *why = str_cat("needs more than ", caps.domains, " IOMMU domains of ", window >> 20, " MiB", beside(p.taken));
        return false;
      }
      open(domain);
      g_scratch = {};
      for (size_t j : g) scratch_add(g_scratch, scratch_for(p.weights[j], p.m_max, caps.cores, p.wtype));
      p.domain_bytes.push_back(0);
      p.scratch.push_back({});
    }
    for (size_t j : g) {
      p.weights[j].domain = domain;
      p.domain_bytes[domain] += p.weights[j].bytes();
    }
    used += g_fp;
    largest = std::max(largest, g_big);
    own = true;
    scratch = g_scratch;
    p.scratch[domain] = scratch;
    npu::ScratchNeed both = scratch;
    both.merge(other.scratch);
    p.window_used[domain] = used + scratch_footprint(both);
  }
  p.domains_used = domain + 1;
  return true;
}

// Plan::expert_blocks and unit_block from the MoE layers of `weights` (units as sliced now).
void index_experts(Plan& p, const model::Weights& weights) {
  p.expert_blocks.clear();
  p.unit_block.assign(p.units.size(), -1);
  for (size_t il = 0; il < weights.layers.size(); ++il) {
    const model::LayerWeights& l = weights.layers[il];
    if (l.exp_gate.empty()) continue;
    ExpertBlock b;
    b.layer = int32_t(il);
    for (size_t e = 0; e < l.exp_gate.size(); ++e) {
      const int32_t g = l.exp_gate[e].index, u = l.exp_up[e].index, d = l.exp_down[e].index;
      ORK_CHECK(u == g + 1 && d == g + 2 && (e == 0 || g == l.exp_down[e - 1].index + 1), "weight plan: expert ", e,
                " of layer ", il, " is not in gate, up, down order after the expert before it");
      b.expert_first.push_back(p.first_unit[size_t(g)]);
    }
    const int32_t last = l.exp_down.back().index;
    b.expert_first.push_back(p.first_unit[size_t(last)] + int32_t(p.weights[size_t(last)].slices.size()));
    for (int32_t unit = b.begin(); unit < b.end(); ++unit) p.unit_block[size_t(unit)] = int32_t(p.expert_blocks.size());
    p.expert_blocks.push_back(std::move(b));
  }
}

// The packed bytes of the largest expert (gate + up + down) of `weights`; 0 for a dense model.
uint64_t largest_expert_bytes(const model::Weights& weights, npu::Dtype wtype) {
  uint64_t big = 0;
  for (const model::LayerWeights& l : weights.layers) {
    for (size_t e = 0; e < l.exp_gate.size(); ++e) {
      uint64_t b = 0;
      for (const model::Linear* w : {&l.exp_gate[e], &l.exp_up[e], &l.exp_down[e]}) b += packed_bytes(w->n, w->k, wtype);
      big = std::max(big, b);
    }
  }
  return big;
}

}  // namespace

Plan make_plan(const model::Weights& weights, const npu::Capabilities& caps, const PlanOptions& o) {
  ORK_CHECK(caps.window_bytes >= (uint64_t(1) << 20) && caps.domains >= 1, "device has no usable window");
  ORK_CHECK(o.m_max >= 1, "m_max must be >= 1");
  Plan p;
  p.m_max = o.m_max;
  p.taken = o.taken;
  ORK_CHECK(o.wtype == npu::Dtype::kI8 || o.wtype == npu::Dtype::kI4, "device weight type ",
            npu::dtype_name(o.wtype), " cannot be planned (i8 or i4)");
  p.wtype = o.wtype;
  p.prefetch_slots = caps.cores + 1;

  // Slices of weight i: at most max_slice[i] bytes.
  auto slice_all = [&](const std::vector<uint64_t>& max_slice) {
    p.max_slice_bytes = *std::max_element(max_slice.begin(), max_slice.end());
    p.weights.clear();
    size_t i = 0;
    for (const model::Linear* l : weights.linears()) {
      WeightPlan w;
      w.linear = l;
      w.slices = slice_weight(*l, max_slice[i++], p.wtype);
      p.weights.push_back(std::move(w));
    }
    p.units.clear();
    p.first_unit.clear();
    for (size_t i = 0; i < p.weights.size(); ++i) {
      p.first_unit.push_back(int32_t(p.units.size()));
      for (size_t s = 0; s < p.weights[i].slices.size(); ++s) p.units.push_back({int32_t(i), int32_t(s)});
    }
    index_experts(p, weights);
  };

  std::string why;
  const size_t n_weights = weights.linears().size();
  ORK_CHECK(n_weights > 0, "the model has no linear weights to plan");
  if (o.residency != Residency::kStream) {
    // Resident slices: at most a quarter of a window, so several share a domain. A layer group that
    // does not fit a domain of its own (a large output weight, say) has its slices halved, down to a
    // 64th of the window, before the whole model gives up residency.
    std::vector<uint64_t> max_slice(n_weights, caps.window_bytes / 4);
    for (;;) {
      slice_all(max_slice);
      std::vector<size_t> too_big;
      if (place_resident(p, caps, &why, &too_big)) {
        p.mode = Residency::kResident;
        p.reason = str_cat("resident in ", p.domains_used, " IOMMU domain(s)");
        return p;
      }
      bool finer = false;  // out of domains (no group too big): finer slices do not make room
      for (size_t j : too_big) {
        if (max_slice[j] / 2 < caps.window_bytes / 64) continue;
        max_slice[j] /= 2;
        finer = true;
      }
      if (!finer) break;
    }
    ORK_CHECK(o.residency == Residency::kAuto, "the model cannot be resident: it ", why, " (",
              p.weight_bytes(), " packed weight bytes; use --residency stream or auto)");
  }

  // Streaming through domain 0: the window holds the scratch, and the weights under the budget, in
  // what another model leaves of it.
  p.mode = Residency::kStream;
  p.reason = o.residency == Residency::kStream ? "streaming (forced)" : "streaming: the model " + why;
  const WindowTaken other = taken_in(o.taken, 0);
  ORK_CHECK(other.footprint < caps.window_bytes, "the IOVA window of ", caps.window_bytes >> 20,
            " MiB in domain 0 is full: another model on the device holds ", other.footprint, " bytes of it");
  const uint64_t window = caps.window_bytes - other.footprint;  // what is left to this model
  const uint64_t slots = p.prefetch_slots + 1;  // in use + prefetched
  uint64_t budget = std::min<uint64_t>(o.budget_bytes, window / 2);
  uint64_t max_slice = 1;
  while (max_slice * 2 <= budget / slots) max_slice *= 2;
  ORK_CHECK(max_slice >= 4096, "the streaming budget of ", budget,
            " bytes is too small for ", slots, " weight slots", beside(o.taken));
  // Expert-sized slots (the seed's MoE refinement): an expert that fits budget / (cores + 1) streams
  // as one slice per weight, so the budget holds budget / expert_bytes whole experts; a larger one is
  // tiled under max_slice like a dense weight.
  const uint64_t expert_bytes = largest_expert_bytes(weights, p.wtype);
  std::vector<uint64_t> max_slices(n_weights, max_slice);
  auto expert_sized = [&](uint64_t b) { return expert_bytes > 0 && expert_bytes * p.prefetch_slots <= b; };
  bool whole_experts = expert_sized(budget);
  if (whole_experts) {
    for (const model::LayerWeights& l : weights.layers) {
      for (size_t e = 0; e < l.exp_gate.size(); ++e) {
        for (const model::Linear* w : {&l.exp_gate[e], &l.exp_up[e], &l.exp_down[e]}) {
          max_slices[size_t(w->index)] = std::max(max_slice, packed_bytes(w->n, w->k, p.wtype));
        }
      }
    }
  }
  uint64_t slack = 0, scratch_fp = 0;
  npu::ScratchNeed scratch;
  for (;;) {
    slice_all(max_slices);
    scratch = {};
    for (const WeightPlan& w : p.weights) scratch_add(scratch, scratch_for(w, p.m_max, caps.cores, p.wtype));
    npu::ScratchNeed both = scratch;  // a shared scratch: the larger of the two needs
    both.merge(other.scratch);
    scratch_fp = scratch_footprint(both);
    // Alignment slack: the largest slot; beside another model's buffers (and a scratch that grows among
    // them, reallocated into an aligned slot of its new size) two of the largest slots, as resident domains.
    const uint64_t big = iova_footprint(p.max_slice_bytes);
    slack = other.footprint > 0 ? 2 * std::max(big, max_footprint(both)) : big;
    const bool room = scratch_fp + p.max_slice_bytes + slack <= window;
    if (!whole_experts || (room && expert_sized(std::min(budget, window - scratch_fp - slack)))) break;
    whole_experts = false;  // beside the scratch the expert no longer fits (cores + 1) times: tile it
    max_slices.assign(n_weights, max_slice);
  }
  ORK_CHECK(scratch_fp + p.max_slice_bytes + slack <= window, "the IOVA window of ",
            caps.window_bytes >> 20, " MiB cannot hold the matmul scratch (", scratch_fp,
            " bytes) and two weight slices", beside(o.taken));
  p.budget_bytes = std::min(budget, window - scratch_fp - slack);
  if (whole_experts) {
    p.expert_slot_bytes = expert_bytes;
    p.expert_slots = uint32_t(p.budget_bytes / expert_bytes);
    // As deep as the budget holds expert weights beside the one in use (the cache stops a prefetch
    // that would evict a unit ahead, so larger dense slices on the way only shorten the queue).
    uint64_t big_expert_weight = 0;
    for (const ExpertBlock& b : p.expert_blocks) {
      for (int32_t u = b.begin(); u < b.end(); ++u) big_expert_weight = std::max(big_expert_weight, p.slice(p.units[size_t(u)]).bytes);
    }
    p.prefetch_slots = std::max<uint32_t>(p.prefetch_slots, uint32_t(p.budget_bytes / big_expert_weight) - 1);
  }
  p.window_used.assign(1, other.footprint + scratch_fp + p.budget_bytes);
  p.domains_used = 1;
  p.scratch.assign(1, scratch);
  p.domain_bytes.assign(1, 0);
  for (WeightPlan& w : p.weights) w.domain = 0;
  return p;
}

}  // namespace ork::weights
