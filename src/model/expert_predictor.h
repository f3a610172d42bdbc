// model::ExpertPredictor — guesses, before a decode token's router runs at layer l, which experts it
// will pick, from what routing did before: per-layer expert frequency and co-occurrence with the
// experts the same token picked at layer l − 1 (routing is skewed and local across layers). A
// guess is a set of `slots` experts; a wrong one would cost bandwidth only (a prefetch nobody uses),
// so it is scored by hit rate (chosen experts that were guessed) and wasted guesses.
// score(e) = freq[l][e] + Σ_{p ∈ previous layer's choice} co[l][p][e], ties to the lower index
// (co-occurrence is kept for at most kMaxCoExperts experts: n_layer · n_expert² counters).
// Thread-safety: none (one forward pass owns it).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ork::model {

struct ExpertPredictionStats {
  uint64_t predicted = 0;  // experts guessed (slots per predicted layer step)
  uint64_t needed = 0;     // experts chosen at those steps
  uint64_t hits = 0;       // chosen experts that had been guessed
  double hit_rate() const { return needed > 0 ? double(hits) / double(needed) : 0.0; }
  uint64_t wasted() const { return predicted - hits; }  // guesses not chosen (≤ slots each)
};

class ExpertPredictor {
 public:
  static constexpr int64_t kMaxCoExperts = 256;
  // n_layer layers of n_expert experts; `slots` experts guessed per layer step (>= 1).
  ExpertPredictor(int64_t n_layer, int64_t n_expert, int64_t slots);

  // The guess for layer il given the experts `prev` the token chose at layer il − 1 (empty for
  // layer 0): `slots` distinct experts, best first.
  std::vector<int32_t> predict(int64_t il, std::span<const int32_t> prev) const;

  // Learns that a token chose `chosen` at layer il after `prev` at il − 1. When `guess` is given
  // (the predict() made before routing), the step is scored in stats().
  void observe(int64_t il, std::span<const int32_t> prev, std::span<const int32_t> chosen,
               const std::vector<int32_t>* guess);

  const ExpertPredictionStats& stats() const { return stats_; }

 private:
  int64_t n_layer_, n_expert_, slots_;
  std::vector<uint32_t> freq_;  // [layer][expert]
  std::vector<uint32_t> co_;    // [layer][prev expert][expert]
  ExpertPredictionStats stats_;
};

}  // namespace ork::model
