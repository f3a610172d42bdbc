// weights::WindowTaken — what another model's plan holds in each IOMMU domain of a shared device, so
// that a plan made after it (a speculative target planned beside its resident draft) leaves it room.
//
// The IOVA window of a domain then holds both models' weights and one matmul scratch: the scratch is
// shared (runtime::EngineOptions::share_scratch_with), so its buffers are the element-wise larger of
// the two needs, not a sum.
#pragma once

#include <cstdint>
#include <vector>

#include "npu/matmul.h"

namespace ork::weights {

struct Plan;

struct WindowTaken {
  uint64_t footprint = 0;   // IOVA slot bytes of the other model's weight buffers (power-of-two slots)
  uint64_t largest = 0;     // its largest slot (alignment slack)
  npu::ScratchNeed scratch; // the scratch already sized for it (a shared scratch grows to the larger)
};

// [domain] what `p` holds, the WindowTaken it was itself planned beside included (so plans chain):
// resident: Σ slice footprints of the weights of each domain; streamed: in its streaming domain twice
// its budget (a budget's slices may each take a slot up to twice their bytes) plus a slice of slack.
// The scratch of each domain used is p.scratch[d], merged with what was taken before.
std::vector<WindowTaken> window_taken(const Plan& p);

// Σ footprint over the domains.
uint64_t window_taken_bytes(const std::vector<WindowTaken>& taken);

}  // namespace ork::weights
