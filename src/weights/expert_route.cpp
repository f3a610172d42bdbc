#include "weights/expert_route.h"

#include <algorithm>

#include "core/error.h"

namespace ork::weights {

ExpertRoute::ExpertRoute(const Plan& plan) : plan_(plan), named_(plan.expert_blocks.size()) {}

void ExpertRoute::name(int32_t block, std::vector<int32_t> experts) {
  ORK_CHECK(block >= 0 && size_t(block) < named_.size(), "expert route: block ", block, " of ",
            named_.size());
  const int32_t n_expert = int32_t(plan_.expert_blocks[size_t(block)].expert_first.size()) - 1;
  for (int32_t e : experts) {
    ORK_CHECK(e >= 0 && e < n_expert, "expert route: expert ", e, " of ", n_expert, " in layer ",
              plan_.expert_blocks[size_t(block)].layer);
  }
  named_[size_t(block)] = std::move(experts);
}

int32_t ExpertRoute::enter(int32_t u) const {
  const int32_t n = int32_t(plan_.units.size());
  for (size_t guard = 0; guard <= named_.size(); ++guard) {
    const int32_t b = plan_.unit_block.empty() ? -1 : plan_.unit_block[size_t(u)];
    if (b < 0) return u;
    const ExpertBlock& blk = plan_.expert_blocks[size_t(b)];
    if (u != blk.begin()) return u;
    const std::vector<int32_t>& nm = named_[size_t(b)];
    if (!nm.empty()) return blk.expert_first[size_t(nm.front())];
    u = blk.end() % n;  // nothing named: past the layer's experts
  }
  return u;
}

int32_t ExpertRoute::next(int32_t u) const {
  const int32_t n = int32_t(plan_.units.size());
  const int32_t b = plan_.unit_block.empty() ? -1 : plan_.unit_block[size_t(u)];
  if (b < 0) return enter((u + 1) % n);
  const ExpertBlock& blk = plan_.expert_blocks[size_t(b)];
  // The expert u belongs to: the last e with expert_first[e] <= u.
  const auto it = std::upper_bound(blk.expert_first.begin(), blk.expert_first.end(), u);
  const int32_t e = int32_t(it - blk.expert_first.begin()) - 1;
  if (u + 1 < blk.expert_first[size_t(e + 1)]) return u + 1;  // the rest of this expert
  const std::vector<int32_t>& nm = named_[size_t(b)];
  const auto pos = std::find(nm.begin(), nm.end(), e);
  if (pos != nm.end() && pos + 1 != nm.end()) return blk.expert_first[size_t(*(pos + 1))];
  return enter(blk.end() % n);
}

std::vector<int32_t> ExpertRoute::units_ahead(int32_t cur, uint32_t count) const {
  std::vector<int32_t> out{cur};
  int32_t u = cur;
  for (uint32_t j = 0; j < count; ++j) {
    u = next(u);
    if (u == cur) break;
    out.push_back(u);
  }
  return out;
}

}  // namespace ork::weights
