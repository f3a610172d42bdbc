// weights::Plan — where each linear weight lives on the device: resident in an IOMMU domain, or
// streamed through a budget in one domain.
//
// IOVA facts the plan relies on (docs/hardware.md): a buffer occupies an aligned slot of its size
// rounded up to a power of two (its "footprint"); page 0 is never mapped; a buffer larger than half
// a window can never map. So weights are cut along N into slices of at most max_slice_bytes, and a
// domain is filled only while footprints (weights and the matmul scratch of that domain) leave two
// largest slots of slack for alignment.
// Resident placement keeps each placement group (model::Linear::group: a dense layer's weights; of a
// MoE layer, its attention, and each expert's gate/up/down apart — the expert is the unit, so a
// layer's experts may spread over domains) in one domain and fills domains along the forward pass,
// so a dense token switches domains once per domain used (plus once back to the first).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/weights.h"
#include "npu/device.h"
#include "npu/matmul.h"
#include "weights/window_taken.h"

namespace ork::weights {

enum class Residency { kAuto, kResident, kStream };
Residency parse_residency(const std::string& text);  // "auto" | "resident" | "stream"
const char* residency_name(Residency r);

struct PlanOptions {
  Residency residency = Residency::kAuto;
  uint64_t budget_bytes = uint64_t(3072) << 20;  // streaming: weight bytes resident at once
  int64_t m_max = 128;                          // rows per device matmul (prefill is chunked)
  // [domain] what another model on the same device holds (weights/window_taken.h): resident domains
  // fill only the rest of each window, a stream budget only the rest of its domain's window, and the
  // scratch of a domain is the larger of the two needs. Empty: the device is this model's alone.
  std::vector<WindowTaken> taken;
  // Device form of every weight: kI8 (int8 per row) or kI4 (weights/packed_int4.h: half the bytes;
  // its matmuls are int4 tasks, npu/matmul_int4.h, whose scratch is allocated per call).
  npu::Dtype wtype = npu::Dtype::kI8;
};

struct Slice {
  int64_t n0 = 0, n1 = 0;  // rows [n0, n1) of the weight (n0 a multiple of slice_row_align(wtype))
  uint64_t bytes = 0;      // packed bytes (of Plan::wtype)
  uint64_t footprint = 0;  // IOVA slot bytes
};

struct WeightPlan {
  const model::Linear* linear = nullptr;
  std::vector<Slice> slices;
  uint32_t domain = 0;  // resident: its domain; streamed: the streaming domain
  uint64_t bytes() const;
  uint64_t footprint() const;
};

// One slice of one weight: the unit the cache loads, evicts and prefetches.
struct Unit {
  int32_t weight = 0;  // Linear::index
  int32_t slice = 0;   // index into WeightPlan::slices
};

// The routed experts of one MoE layer in Plan::units: expert e's gate, up and down slices are the
// units [expert_first[e], expert_first[e + 1]); the layer's experts span [expert_first.front(),
// expert_first.back()). The prefetcher loads only the experts named for it (weights/expert_route.h).
struct ExpertBlock {
  int32_t layer = 0;
  std::vector<int32_t> expert_first;  // [n_expert + 1] unit indices, ascending
  int32_t begin() const { return expert_first.front(); }
  int32_t end() const { return expert_first.back(); }
};

struct Plan {
  Residency mode = Residency::kResident;  // resolved: kResident or kStream
  std::vector<WeightPlan> weights;        // indexed by Linear::index
  std::vector<Unit> units;                // every slice, in forward-pass order
  std::vector<int32_t> first_unit;        // [weight] → index of its first unit
  uint32_t domains_used = 0;
  std::vector<uint64_t> domain_bytes;     // weight bytes per domain used
  std::vector<npu::ScratchNeed> scratch;  // matmul scratch per domain used (kI4: what one int4 call allocates)
  uint64_t budget_bytes = 0;              // streaming budget (weights), after fitting the window
  uint64_t max_slice_bytes = 0;
  int64_t m_max = 0;
  npu::Dtype wtype = npu::Dtype::kI8;     // PlanOptions::wtype
  // Units the prefetcher keeps loaded ahead of the one in use: cores + 1; a streamed MoE plan with
  // expert-sized slots goes as deep as the budget holds expert weights (>= cores + 1).
  uint32_t prefetch_slots = 0;
  // Streamed MoE (docs/residency.md "Expert-sized slots"): when the largest expert (its gate, up and
  // down, packed) takes at most budget / (cores + 1), each expert weight is one slice and
  // expert_slot_bytes is that expert's bytes, expert_slots = budget / expert_slot_bytes (>= cores + 1).
  // 0 and 0: resident, dense, or an expert too large, tiled under max_slice_bytes like any weight.
  uint64_t expert_slot_bytes = 0;
  uint32_t expert_slots = 0;
  std::vector<ExpertBlock> expert_blocks;  // one per MoE layer, in forward order (every mode)
  std::vector<int32_t> unit_block;         // [unit] its index in expert_blocks, or -1 (not a routed expert)
  std::string reason;                     // why this mode (for --stats and messages)
  std::vector<WindowTaken> taken;         // PlanOptions::taken, as planned beside
  // [domain] IOVA slot bytes the plan counts in each domain used: another model's weights (taken),
  // this model's weights (streamed: the budget) and the (shared) scratch; the planner keeps each one,
  // plus alignment slack, within the window.
  std::vector<uint64_t> window_used;

  uint64_t weight_bytes() const;          // all weights, packed
  const Slice& slice(const Unit& u) const { return weights[size_t(u.weight)].slices[size_t(u.slice)]; }
};

// IOVA slot bytes of a buffer of `bytes`: page-rounded, then rounded up to a power of two.
uint64_t iova_footprint(uint64_t bytes);

// Plans `weights` on a device with `caps`. Throws ork::Error when residency is forced to kResident
// and the model does not fit the domains, or when even one slice cannot stream through the window.
Plan make_plan(const model::Weights& weights, const npu::Capabilities& caps, const PlanOptions& opts);

}  // namespace ork::weights
