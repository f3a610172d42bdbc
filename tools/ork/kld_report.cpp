#include "kld_report.h"

#include <cstdio>

namespace ork::cli {

void print_kld_text(const runtime::KldSummary& s, int64_t n_chunk, int64_t n_ctx) {
  std::printf("PPL(Q) = %.4f +/- %.4f, PPL(base) = %.4f +/- %.4f over %lld tokens (%lld windows of %lld, "
              "second halves scored)\n",
              s.ppl, s.ppl_err, s.ppl_base, s.ppl_base_err, (long long)s.count, (long long)n_chunk,
              (long long)n_ctx);
  std::printf("PPL(Q) - PPL(base) = %.4f +/- %.4f (%+.3f %%), ln(PPL(Q)/PPL(base)) = %.6f +/- %.6f\n",
              s.ppl_diff, s.ppl_diff_err, 100.0 * s.ppl_diff / s.ppl_base, s.ln_ppl_ratio, s.ln_ppl_ratio_err);
  std::printf("KLD mean = %.6f +/- %.6f, max %.6f, 99.9%% %.6f, 99%% %.6f, median %.6f\n", s.kld_mean,
              s.kld_mean_err, s.kld_max, s.kld_p999, s.kld_p99, s.kld_median);
  std::printf("same top token = %.3f +/- %.3f %%, RMS dp = %.3f %%, max |dp| = %.3f %%\n", 100.0 * s.same_top,
              100.0 * s.same_top_err, 100.0 * s.dp_rms, 100.0 * s.dp_max);
}

void add_kld_json(JsonWriter& j, const runtime::KldSummary& s) {
  j.key("ppl").value(s.ppl);
  j.key("ppl_err").value(s.ppl_err);
  j.key("ppl_base").value(s.ppl_base);
  j.key("ppl_base_err").value(s.ppl_base_err);
  j.key("dppl").value(s.ppl_diff);
  j.key("dppl_err").value(s.ppl_diff_err);
  j.key("dppl_pct").value(100.0 * s.ppl_diff / s.ppl_base);
  j.key("ln_ppl_ratio").value(s.ln_ppl_ratio);
  j.key("ln_ppl_ratio_err").value(s.ln_ppl_ratio_err);
  j.key("kld_mean").value(s.kld_mean);
  j.key("kld_mean_err").value(s.kld_mean_err);
  j.key("kld_max").value(s.kld_max);
  j.key("kld_p999").value(s.kld_p999);
  j.key("kld_p99").value(s.kld_p99);
  j.key("kld_p90").value(s.kld_p90);
  j.key("kld_median").value(s.kld_median);
  j.key("kld_min").value(s.kld_min);
  j.key("same_top").value(s.same_top);
  j.key("same_top_err").value(s.same_top_err);
  j.key("dp_rms").value(s.dp_rms);
  j.key("dp_max").value(s.dp_max);
}

}  // namespace ork::cli
