#include "weights/window_taken.h"

#include <algorithm>

#include "weights/plan.h"

namespace ork::weights {

std::vector<WindowTaken> window_taken(const Plan& p) {
  std::vector<WindowTaken> t = p.taken;
  const size_t domains = std::max<size_t>(p.domains_used, p.scratch.size());
  if (t.size() < domains) t.resize(domains);
  if (p.mode == Residency::kStream) {
    WindowTaken& s = t[0];
    s.footprint += 2 * p.budget_bytes + iova_footprint(p.max_slice_bytes);
    s.largest = std::max(s.largest, iova_footprint(p.max_slice_bytes));
  } else {
    for (const WeightPlan& w : p.weights) {
      if (w.slices.empty()) continue;
      if (t.size() <= w.domain) t.resize(w.domain + 1);
      for (const Slice& sl : w.slices) {
        t[w.domain].footprint += sl.footprint;
        t[w.domain].largest = std::max(t[w.domain].largest, sl.footprint);
      }
    }
  }
  for (size_t d = 0; d < p.scratch.size() && d < p.domains_used; ++d) t[d].scratch.merge(p.scratch[d]);
  return t;
}

uint64_t window_taken_bytes(const std::vector<WindowTaken>& taken) {
  uint64_t b = 0;
  for (const WindowTaken& t : taken) b += t.footprint;
  return b;
}

}  // namespace ork::weights
