#include "runtime/kl_divergence.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "runtime/logprob_file.h"

namespace ork::runtime {
namespace {

struct MeanErr {
  double mean = 0, err = 0;
};

// Mean and standard error of the mean from a sum and a sum of squares.
MeanErr mean_and_err(double sum, double sum2, int64_t n) {
  MeanErr r;
  if (n < 1) return r;
  r.mean = sum / double(n);
  const double var = sum2 / double(n) - r.mean * r.mean;
  r.err = n > 1 && var > 0 ? std::sqrt(var / double(n - 1)) : 0.0;
  return r;
}

// Covariance of the two means (llama.cpp's covariance()).
double mean_covariance(double sa, double sb, double sab, int64_t n) {
  if (n < 2) return 0.0;
  return (sab / double(n) - (sa / double(n)) * (sb / double(n))) / double(n - 1);
}

// Linear interpolation between order statistics of sorted values (llama.cpp's percentile()).
double percentile(const std::vector<float>& sorted, double fraction) {
  if (fraction <= 0) return sorted.front();
  if (fraction >= 1) return sorted.back();
  const double p = fraction * double(sorted.size() - 1);
  const size_t ip = size_t(p);
  const double t = p - double(ip);
  return (1 - t) * sorted[ip] + t * sorted[std::min(ip + 1, sorted.size() - 1)];
}

}  // namespace

double KldAccumulator::add(const float* logits, const uint16_t* base_row, int64_t n_vocab, int32_t target) {
  ORK_CHECK(target >= 0 && target < n_vocab, "KLD: target token ", target, " is outside the vocabulary of ",
            n_vocab);
  int64_t imax = 0;
  for (int64_t i = 1; i < n_vocab; ++i)
    if (logits[i] > logits[imax]) imax = i;
  const double mx = logits[imax];
  double sum = 0;
  for (int64_t i = 0; i < n_vocab; ++i) sum += std::exp(double(logits[i]) - mx);
  const double log_z = mx + std::log(sum);  // log Q_i = logits[i] - log_z

  double kld = 0;
  int64_t imax_base = 0;
  double lp_base_max = decoded_log_prob(base_row, 0);
  for (int64_t i = 0; i < n_vocab; ++i) {
    const double lp = decoded_log_prob(base_row, i);
    if (lp > lp_base_max) {
      lp_base_max = lp;
      imax_base = i;
    }
    if (lp > -16.0) kld += std::exp(lp) * (lp - (double(logits[i]) - log_z));
  }
  const double nll = log_z - double(logits[target]);
  const double nll_base = -decoded_log_prob(base_row, target);
  sum_nll_ += nll;
  sum_nll2_ += nll * nll;
  sum_nll_base_ += nll_base;
  sum_nll_base2_ += nll_base * nll_base;
  sum_nll_nll_base_ += nll * nll_base;
  sum_kld_ += kld;
  sum_kld2_ += kld * kld;
  const double dp = std::exp(-nll) - std::exp(-nll_base);
  sum_dp2_ += dp * dp;
  max_dp_ = std::max(max_dp_, std::fabs(dp));
  if (imax == imax_base) ++same_top_;
  ++count_;
  kld_values_.push_back(float(kld));
  return kld;
}

KldSummary KldAccumulator::summary() const {
  ORK_CHECK(count_ >= 1, "KLD: no scored positions");
  KldSummary s;
  s.count = count_;
  const MeanErr q = mean_and_err(sum_nll_, sum_nll2_, count_);
  const MeanErr b = mean_and_err(sum_nll_base_, sum_nll_base2_, count_);
  const double cov = mean_covariance(sum_nll_, sum_nll_base_, sum_nll_nll_base_, count_);
  s.ppl = std::exp(q.mean);
  s.ppl_err = s.ppl * q.err;
  s.ppl_base = std::exp(b.mean);
  s.ppl_base_err = s.ppl_base * b.err;
  s.ln_ppl_ratio = q.mean - b.mean;
  s.ln_ppl_ratio_err = std::sqrt(std::max(0.0, q.err * q.err + b.err * b.err - 2 * cov));
  s.ppl_diff = s.ppl - s.ppl_base;
  const double ppl_cov = s.ppl * s.ppl_base * cov;
  s.ppl_diff_err =
      std::sqrt(std::max(0.0, s.ppl_err * s.ppl_err + s.ppl_base_err * s.ppl_base_err - 2 * ppl_cov));
  const MeanErr k = mean_and_err(sum_kld_, sum_kld2_, count_);
  s.kld_mean = k.mean;
  s.kld_mean_err = k.err;
  std::vector<float> sorted = kld_values_;
  std::sort(sorted.begin(), sorted.end());
  s.kld_max = sorted.back();
  s.kld_min = sorted.front();
  s.kld_p999 = percentile(sorted, 0.999);
  s.kld_p99 = percentile(sorted, 0.99);
  s.kld_p90 = percentile(sorted, 0.90);
  s.kld_median = percentile(sorted, 0.5);
  s.same_top = double(same_top_) / double(count_);
  s.same_top_err = count_ > 1 ? std::sqrt(s.same_top * (1 - s.same_top) / double(count_ - 1)) : 0.0;
  s.dp_rms = std::sqrt(sum_dp2_ / double(count_));
  s.dp_max = max_dp_;
  return s;
}

}  // namespace ork::runtime
