#include "ops/moe_route.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "ops/softmax.h"

namespace ork::ops {

void moe_route(const float* logits, int64_t n_expert, int64_t k, bool normalize, int32_t* experts,
               float* weights) {
  ORK_CHECK(n_expert >= 1 && k >= 1 && k <= n_expert, "moe_route: top-", k, " of ", n_expert, " experts");
  thread_local std::vector<float> p;
  thread_local std::vector<int32_t> order;
  p.assign(logits, logits + n_expert);
  softmax(p.data(), n_expert);
  order.resize(size_t(n_expert));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
    return p[size_t(a)] > p[size_t(b)] || (p[size_t(a)] == p[size_t(b)] && a < b);
  });
  float sum = 0.0f;
  for (int64_t j = 0; j < k; ++j) {
    experts[j] = order[size_t(j)];
    weights[j] = p[size_t(order[size_t(j)])];
    sum += weights[j];
  }
  if (!normalize) return;
  sum = std::max(sum, 6.103515625e-5f);
  for (int64_t j = 0; j < k; ++j) weights[j] /= sum;
}

}  // namespace ork::ops
