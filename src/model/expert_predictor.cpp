#include "model/expert_predictor.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"

namespace ork::model {

ExpertPredictor::ExpertPredictor(int64_t n_layer, int64_t n_expert, int64_t slots)
    : n_layer_(n_layer), n_expert_(n_expert), slots_(slots) {
  ORK_CHECK(n_layer >= 1 && n_expert >= 1 && slots >= 1 && slots <= n_expert, "ExpertPredictor: ", slots,
            " slots of ", n_expert, " experts, ", n_layer, " layers");
  freq_.assign(size_t(n_layer * n_expert), 0);
  if (n_expert <= kMaxCoExperts) co_.assign(size_t(n_layer * n_expert * n_expert), 0);
}

std::vector<int32_t> ExpertPredictor::predict(int64_t il, std::span<const int32_t> prev) const {
  ORK_CHECK(il >= 0 && il < n_layer_, "ExpertPredictor: layer ", il, " of ", n_layer_);
  std::vector<uint64_t> score(static_cast<size_t>(n_expert_));
  for (int64_t e = 0; e < n_expert_; ++e) score[size_t(e)] = freq_[size_t(il * n_expert_ + e)];
  for (int32_t p : co_.empty() ? std::span<const int32_t>() : prev) {
    const uint32_t* row = co_.data() + (il * n_expert_ + p) * n_expert_;
    for (int64_t e = 0; e < n_expert_; ++e) score[size_t(e)] += row[e];
  }
  std::vector<int32_t> order(static_cast<size_t>(n_expert_));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + slots_, order.end(), [&](int32_t a, int32_t b) {
    return score[size_t(a)] > score[size_t(b)] || (score[size_t(a)] == score[size_t(b)] && a < b);
  });
  order.resize(size_t(slots_));
  return order;
}

void ExpertPredictor::observe(int64_t il, std::span<const int32_t> prev, std::span<const int32_t> chosen,
                              const std::vector<int32_t>* guess) {
  ORK_CHECK(il >= 0 && il < n_layer_, "ExpertPredictor: layer ", il, " of ", n_layer_);
  if (guess != nullptr) {
    stats_.predicted += guess->size();
    stats_.needed += chosen.size();
    for (int32_t e : chosen) stats_.hits += std::find(guess->begin(), guess->end(), e) != guess->end();
  }
  for (int32_t e : chosen) {
    ORK_CHECK(e >= 0 && e < n_expert_, "ExpertPredictor: expert ", e, " of ", n_expert_);
    ++freq_[size_t(il * n_expert_ + e)];
    if (co_.empty()) continue;
    for (int32_t p : prev) ++co_[size_t((il * n_expert_ + p) * n_expert_ + e)];
  }
}

}  // namespace ork::model
