#include "runtime/speculative_rule.h"

#include <algorithm>

#include "core/error.h"

namespace ork::runtime {

Verdict verify_token(const std::vector<TokenProb>& p, const std::vector<TokenProb>& q, int32_t drafted,
                     Sampler& rng, std::vector<double>& scratch) {
  ORK_CHECK(!p.empty(), "speculative: the target distribution is empty");
  ORK_CHECK(drafted >= 0, "speculative: drafted token id ", drafted, " is negative");
  // scratch[id] = q(id), dense over every id that p, q or the draft names.
  int32_t max_id = drafted;
  for (const TokenProb& t : p) max_id = std::max(max_id, t.id);
  for (const TokenProb& t : q) max_id = std::max(max_id, t.id);
  scratch.assign(size_t(max_id) + 1, 0.0);
  if (q.empty()) {
    scratch[size_t(drafted)] = 1.0;
  } else {
    for (const TokenProb& t : q) scratch[size_t(t.id)] = t.p;
  }
  const double qd = scratch[size_t(drafted)];
  ORK_CHECK(qd > 0.0, "speculative: drafted token ", drafted, " has probability 0 under its draft");
  double pd = 0.0;
  for (const TokenProb& t : p)
    if (t.id == drafted) pd = t.p;
  if (pd >= qd) return {true, drafted};
  if (pd > 0.0 && rng.uniform() < pd / qd) return {true, drafted};

  // Rejected: draw from r(x) ∝ max(0, p(x) − q(x)), over p's candidates in p's order.
  const auto residual = [&](const TokenProb& t) { return std::max(0.0, t.p - scratch[size_t(t.id)]); };
  double total = 0.0;
  size_t positive = 0;
  int32_t only = -1;
  for (const TokenProb& t : p) {
    const double r = residual(t);
    total += r;
    if (r > 0.0) ++positive, only = t.id;
  }
  if (positive == 1) return {false, only};
  if (positive == 0) {
    // p <= q everywhere and yet rejected: only rounding allows it; draw from p itself.
    const double target = rng.uniform();
    double cum = 0.0;
    for (const TokenProb& t : p) {
      cum += t.p;
      if (cum > target) return {false, t.id};
    }
    return {false, p.back().id};
  }
  const double target = rng.uniform() * total;
  double cum = 0.0;
  int32_t last = -1;
  for (const TokenProb& t : p) {
    const double r = residual(t);
    if (r <= 0.0) continue;
    cum += r;
    last = t.id;
    if (cum > target) return {false, t.id};
  }
  return {false, last};
}

}  // namespace ork::runtime
