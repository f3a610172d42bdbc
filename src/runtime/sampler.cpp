#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace ork::runtime {
namespace {

void validate(const SamplerParams& p) {
  ORK_CHECK(std::isfinite(p.temperature),
            "sampler: temperature=", p.temperature, " must be a finite number");
  ORK_CHECK(p.top_k >= 0, "sampler: top_k=", p.top_k, " must be >= 0 (0 disables)");
  ORK_CHECK(p.top_p > 0.0f && p.top_p <= 1.0f, "sampler: top_p=", p.top_p,
            " must be in (0, 1] (1 disables)");
  ORK_CHECK(p.min_p >= 0.0f && p.min_p <= 1.0f, "sampler: min_p=", p.min_p,
            " must be in [0, 1] (0 disables)");
  ORK_CHECK(std::isfinite(p.repeat_penalty) && p.repeat_penalty > 0.0f,
            "sampler: repeat_penalty=", p.repeat_penalty, " must be finite and > 0 (1 disables)");
  ORK_CHECK(p.repeat_last_n >= 0, "sampler: repeat_last_n=", p.repeat_last_n,
            " must be >= 0 (0 disables)");
}

uint64_t effective_seed(uint64_t seed) {
  if (seed != SamplerParams::kRandomSeed) return seed;
  std::random_device rd;
  return (uint64_t(rd()) << 32) ^ uint64_t(rd());
}

}  // namespace

Sampler::Sampler(SamplerParams p) : p_(p), seed_(0) {
  validate(p_);
  seed_ = effective_seed(p_.seed);
  rng_.seed(seed_);
}

void Sampler::accept(int32_t token) {
  ORK_CHECK(token >= 0, "sampler: accepted token id ", token, " is negative");
  if (p_.repeat_last_n == 0) return;
  history_.push_back(token);
  while (history_.size() > size_t(p_.repeat_last_n)) history_.pop_front();
}

void Sampler::reset() {
  history_.clear();
  rng_.seed(seed_);
}

int32_t Sampler::prepare(const float* logits, int32_t n_vocab) {
  ORK_CHECK(n_vocab >= 1, "sampler: n_vocab=", n_vocab, " must be >= 1");
  cand_.resize(size_t(n_vocab));
  for (int32_t i = 0; i < n_vocab; ++i) {
    const float l = logits[i];
    ORK_CHECK(!std::isnan(l) && l != INFINITY, "sampler: logit[", i, "]=", l,
              " is not a number or +inf");
    cand_[size_t(i)] = {i, l};
  }

  // 1. Repetition penalty, once per distinct token of the history.
  if (p_.repeat_penalty != 1.0f && !history_.empty()) {
    penalized_.assign(history_.begin(), history_.end());
    std::sort(penalized_.begin(), penalized_.end());
    penalized_.erase(std::unique(penalized_.begin(), penalized_.end()), penalized_.end());
    for (int32_t id : penalized_) {
      if (id >= n_vocab) continue;
      float& l = cand_[size_t(id)].logit;
      l = l > 0.0f ? l / p_.repeat_penalty : l * p_.repeat_penalty;
    }
  }

  // 2. Greedy.
  if (p_.temperature <= 0.0f) {
    int32_t best = 0;
    for (int32_t i = 1; i < n_vocab; ++i)
      if (cand_[size_t(i)].logit > cand_[size_t(best)].logit) best = i;
    return best;
  }

  // 3. Drop −inf, sort (logit descending, id ascending).
  cand_.erase(std::remove_if(cand_.begin(), cand_.end(),
                             [](const Candidate& c) { return c.logit == -INFINITY; }),
              cand_.end());
  ORK_CHECK(!cand_.empty(), "sampler: every logit is -inf, nothing to sample");
  const auto better = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  // 4. Top-k (only the k best need sorting).
  if (p_.top_k > 0 && size_t(p_.top_k) < cand_.size()) {
    std::partial_sort(cand_.begin(), cand_.begin() + p_.top_k, cand_.end(), better);
    cand_.resize(size_t(p_.top_k));
  } else {
    std::sort(cand_.begin(), cand_.end(), better);
  }
  const double l_max = double(cand_[0].logit);

  // 5. Top-p over the softmax of the kept logits.
  if (p_.top_p < 1.0f) {
    double sum = 0.0;
    for (const Candidate& c : cand_) sum += std::exp(double(c.logit) - l_max);
    double cum = 0.0;
    size_t keep = cand_.size();
    for (size_t i = 0; i < cand_.size(); ++i) {
      cum += std::exp(double(cand_[i].logit) - l_max) / sum;
      if (cum >= double(p_.top_p)) {
        keep = i + 1;
        break;
      }
    }
    cand_.resize(keep);
  }

  // 6. Min-p relative to the most likely token.
  if (p_.min_p > 0.0f) {
    size_t keep = 1;
    while (keep < cand_.size() && std::exp(double(cand_[keep].logit) - l_max) >= double(p_.min_p))
      ++keep;
    cand_.resize(keep);
  }

  // 7–8. Temperature and softmax weights (unnormalized; the draw scales by their sum).
  std::vector<double>& w = weights_;
  w.resize(cand_.size());
  total_ = 0.0;
  for (size_t i = 0; i < cand_.size(); ++i) {
    w[i] = std::exp((double(cand_[i].logit) - l_max) / double(p_.temperature));
    total_ += w[i];
  }
  return -1;
}

int32_t Sampler::sample(const float* logits, int32_t n_vocab) {
  const int32_t greedy = prepare(logits, n_vocab);
  if (greedy >= 0) return greedy;
  // 9. Draw.
  const double target = uniform() * total_;
  double cum = 0.0;
  for (size_t i = 0; i < cand_.size(); ++i) {
    cum += weights_[i];
    if (cum > target) return cand_[i].id;
  }
  return cand_.back().id;
}

double Sampler::uniform() { return double(rng_() >> 11) * 0x1.0p-53; }

void Sampler::distribution(const float* logits, int32_t n_vocab, std::vector<TokenProb>& out) {
  out.clear();
  const int32_t greedy = prepare(logits, n_vocab);
  if (greedy >= 0) {
    out.push_back({greedy, 1.0});
    return;
  }
  out.reserve(cand_.size());
  for (size_t i = 0; i < cand_.size(); ++i) out.push_back({cand_[i].id, weights_[i] / total_});
}

}  // namespace ork::runtime
