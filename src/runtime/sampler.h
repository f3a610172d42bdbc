// Sampler — picks the next token from a row of logits (llama.cpp's default chain, reduced).
#pragma once

#include <cstdint>
#include <deque>
#include <random>
#include <vector>

namespace ork::runtime {

struct SamplerParams {
  // Seed value that means "draw a seed from std::random_device at construction" (llama.cpp's
  // LLAMA_DEFAULT_SEED plays the same role). Any other value is used as is.
  static constexpr uint64_t kRandomSeed = 0xFFFFFFFFFFFFFFFFull;

  float temperature = 0.8f;     // <= 0: greedy; else finite
  int top_k = 40;               // >= 0; 0 disables
  float top_p = 0.95f;          // in (0, 1]; 1 disables
  float min_p = 0.05f;          // in [0, 1]; 0 disables
  float repeat_penalty = 1.0f;  // finite, > 0; 1 disables
  int repeat_last_n = 64;       // >= 0 tokens of history penalized; 0 disables
  uint64_t seed = kRandomSeed;
};

// Chain applied by sample(), in this order:
//   1. repetition penalty: every distinct token among the last repeat_last_n accepted tokens has its
//      logit divided by repeat_penalty when > 0, multiplied by it otherwise (once per token);
//   2. temperature <= 0: return the argmax (the lowest id among equal logits);
//   3. drop −inf logits, sort by logit descending (ties: lower id first);
//   4. top-k (keep the k best); 5. top-p (softmax over the kept, in double; keep the shortest prefix
//      whose cumulative probability reaches top_p); 6. min-p (keep tokens with
//      exp(l − l_max) >= min_p); 7. divide (l − l_max) by temperature; 8. softmax in double;
//   9. draw: u = (rng() >> 11) · 2⁻⁵³ from std::mt19937_64, pick the first candidate (in sorted
//      order) whose cumulative weight exceeds u · Σ weights.
// A given seed, params, logits and history give the same token on every platform.
// Thread-safety: none; use one Sampler per sequence.
struct TokenProb {
  int32_t id;
  double p;
};

class Sampler {
 public:
  // Throws ork::Error naming the first invalid parameter and its value.
  explicit Sampler(SamplerParams p);

  // Picks a token in [0, n_vocab). logits: n_vocab >= 1 floats, none NaN or +inf (ork::Error naming
  // the index otherwise); not modified. In sampling mode at least one logit must be > −inf.
  // Does not add the token to the history: call accept() for that.
  int32_t sample(const float* logits, int32_t n_vocab);

  // The distribution sample() draws from for these logits and this history: the candidates in
  // sorted order (steps 1–8) with their probabilities (in double, summing to 1); greedy: the argmax
  // with probability 1. Same preconditions and errors as sample(); consumes no random number.
  void distribution(const float* logits, int32_t n_vocab, std::vector<TokenProb>& out);

  // The next number of the random stream sample() draws with, uniform in [0, 1) (53 bits).
  double uniform();

  // Adds a token (>= 0) to the penalty history (keeps the last repeat_last_n).
  void accept(int32_t token);

  // Clears the history and restarts the random stream from the seed.
  void reset();

  const SamplerParams& params() const { return p_; }
  // The seed in use (the drawn one when params().seed == kRandomSeed).
  uint64_t seed() const { return seed_; }

 private:
  struct Candidate {
    int32_t id;
    float logit;
  };

  // Steps 1–8 into cand_ and weights_ (total_ = Σ weights_); returns the argmax when greedy, else -1.
  int32_t prepare(const float* logits, int32_t n_vocab);

  SamplerParams p_;
  uint64_t seed_;
  double total_ = 0.0;
  std::mt19937_64 rng_;
  std::deque<int32_t> history_;
  std::vector<Candidate> cand_;  // scratch reused across calls
  std::vector<int32_t> penalized_;  // distinct history tokens (scratch)
  std::vector<double> weights_;     // draw weights (scratch)
};

}  // namespace ork::runtime
