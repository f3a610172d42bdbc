// weights::ExpertRoute — which experts of each MoE layer the prefetcher should load, and the order
// in which the forward pass will use units under it.
//
// The planned order (Plan::units) runs through every expert of a layer; a MoE pass uses only the
// experts its router picked. The forward pass names them per layer (Plan::expert_blocks): exactly,
// once the layer's router has run (prefill: the experts the batch's tokens chose, in order of use —
// ascending index, as model::MoeFfn runs them), or as a guess for a layer whose router has not run
// yet (decode: model::ExpertPredictor). A layer with nothing named is skipped: no expert of it is
// loaded ahead until its router names them.
// units_ahead walks that order: within an expert its units in plan order; after a named expert the
// next named one; after the last named one (or an unnamed expert) the unit after the layer's experts;
// entering a layer's experts, its first named expert, or past them when none is named; cyclic.
// Thread-safety: a value type; the Prefetcher guards its copy with its mutex.
#pragma once

#include <cstdint>
#include <vector>

#include "weights/plan.h"

namespace ork::weights {

class ExpertRoute {
 public:
  explicit ExpertRoute(const Plan& plan);

  // Names the experts of expert block `block` (an index into Plan::expert_blocks) in order of use;
  // empty: none (skip the block). Throws ork::Error for a block or expert out of range.
  void name(int32_t block, std::vector<int32_t> experts);
  const std::vector<int32_t>& named(int32_t block) const { return named_.at(size_t(block)); }

  // `cur` followed by the next `count` units compute will use (fewer when the walk comes back to
  // `cur`, e.g. a model whose every unit is an unnamed expert).
  std::vector<int32_t> units_ahead(int32_t cur, uint32_t count) const;

 private:
  int32_t next(int32_t u) const;
  int32_t enter(int32_t u) const;  // u, or where the walk goes on when u begins an expert block

  const Plan& plan_;
  std::vector<std::vector<int32_t>> named_;  // [block] experts in order of use
};

}  // namespace ork::weights
