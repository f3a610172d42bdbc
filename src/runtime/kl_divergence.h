// runtime::KldAccumulator — how far one run's next-token distributions are from a base run's, by
// llama.cpp's `--kl-divergence` statistics (tools/perplexity/perplexity.cpp, kl_divergence() and its
// log_softmax(); ggml-org/llama.cpp, read 2026-12). Per scored position, with P the base
// distribution (decoded from a LogProbReader row) and Q the run under test (its logits):
//   KLD     = sum over i with log P_i > -16 of P_i (log P_i - log Q_i)   (nats; llama.cpp's cut)
//   NLL(Q)  = -log Q_target,  NLL(base) = -log P_target
//   same top: argmax Q == argmax P (first index among equals)
//   dp      = Q_target - P_target
// Summaries: PPL = exp(mean NLL) with llama.cpp's uncertainties (standard error of the mean; for
// the ratio and the difference with the covariance of the paired NLLs), mean/max/percentile KLD,
// the same-top fraction with its binomial standard error, RMS dp. Everything is accumulated in double
// (llama.cpp sums in float in places; ork's figures can differ from its in the last digits).
// Thread-safety: one thread at a time.
#pragma once

#include <cstdint>
#include <vector>

namespace ork::runtime {

struct KldSummary {
  int64_t count = 0;                                // scored positions
  double ppl = 0, ppl_err = 0;                      // PPL(Q)
  double ppl_base = 0, ppl_base_err = 0;            // PPL(base)
  double ln_ppl_ratio = 0, ln_ppl_ratio_err = 0;    // mean ln(PPL(Q)/PPL(base))
  double ppl_diff = 0, ppl_diff_err = 0;            // PPL(Q) - PPL(base)
  double kld_mean = 0, kld_mean_err = 0;            // nats
  double kld_max = 0, kld_p999 = 0, kld_p99 = 0, kld_p90 = 0, kld_median = 0, kld_min = 0;
  double same_top = 0, same_top_err = 0;            // fraction in [0, 1]
  double dp_rms = 0;                                // RMS of Q_target - P_target, a probability
  double dp_max = 0;                                // max |Q_target - P_target|
};

class KldAccumulator {
 public:
  // One scored position: the logits under test [n_vocab] (finite), the base's encoded row
  // (logprob_file.h) of the same n_vocab, and the token that followed (0 <= target < n_vocab).
  // Returns this position's KLD.
  double add(const float* logits, const uint16_t* base_row, int64_t n_vocab, int32_t target);

  int64_t count() const { return count_; }
  // Summary over every position added so far (count() >= 1).
  KldSummary summary() const;

 private:
  double sum_nll_ = 0, sum_nll2_ = 0, sum_nll_base_ = 0, sum_nll_base2_ = 0, sum_nll_nll_base_ = 0;
  double sum_kld_ = 0, sum_kld2_ = 0, sum_dp2_ = 0, max_dp_ = 0;
  int64_t same_top_ = 0, count_ = 0;
  std::vector<float> kld_values_;
};

}  // namespace ork::runtime
