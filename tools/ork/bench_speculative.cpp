#include "bench_speculative.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "speculative_flags.h"
#include "core/timer.h"
#include "npu/sim/sim_kernel.h"
#include "runtime/context.h"
#include "runtime/generator.h"
#include "runtime/sampler.h"
#include "runtime/speculative.h"

namespace ork::cli {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

double modeled_ns(runtime::Engine* e) {
  if (e == nullptr || e->device() == nullptr || e->device()->sim_kernel() == nullptr) return 0;
  return e->device()->sim_kernel()->stats().modeled_ns;
}

}  // namespace

void bench_speculative(const Args& args, runtime::Engine& target, runtime::Engine* draft_engine, int64_t n_gen,
                       int reps, JsonWriter* j) {
  runtime::SamplerParams sp;
  sp.temperature = 0.0f;
  const int64_t n_vocab = target.model().config().n_vocab;
  std::mt19937 gen{300};
  std::vector<int32_t> prompt(16);
  for (int32_t& id : prompt) id = int32_t(gen() % uint32_t(n_vocab));
  const int64_t n_ctx = int64_t(prompt.size()) + n_gen + 1;
  SpeculativeSetup setup = speculative_setup(args, target, draft_engine, n_ctx, sp);
  runtime::Engine* draft = setup.draft_engine;
  const bool sim = target.device() != nullptr && target.device()->sim_kernel() != nullptr;
  // Modeled time of everything simulated: the target's device, and the draft's when it has its own.
  const auto modeled = [&] {
    double ns = modeled_ns(&target);
    if (draft != nullptr && draft->device() != target.device()) ns += modeled_ns(draft);
    return ns / 1e6;
  };
  // The prompt's pass, priced once, to leave decode-only modeled figures.
  double prompt_modeled_ms = 0;
  {
    runtime::Context ctx(target, n_ctx);
    const double m0 = modeled();
    ctx.eval(prompt);
    prompt_modeled_ms = modeled() - m0;
  }

  std::vector<double> base_tps, spec_tps, draft_ms, verify_ms, base_mod, spec_mod;
  runtime::SpeculativeStats st;
  std::vector<int32_t> base_tokens, spec_tokens;
  for (int r = 0; r < reps; ++r) {  // interleaved: load drift hits both alike
    {
      runtime::Context ctx(target, n_ctx);
      runtime::Sampler s(sp);
      const double m0 = modeled();
      const runtime::GenerateResult g = runtime::generate(ctx, s, prompt, n_gen, [](int32_t) { return true; });
      base_mod.push_back(modeled() - m0 - prompt_modeled_ms);
      base_tokens = g.tokens;
      base_tps.push_back(g.gen_ms > 0 ? 1000.0 * double(g.tokens.size()) / g.gen_ms : 0.0);
    }
    runtime::Context ctx(target, n_ctx);
    runtime::Sampler s(sp);
    const double m0 = modeled();
    const runtime::SpeculativeResult sr =
        runtime::generate_speculative(ctx, *setup.source, s, prompt, n_gen, setup.options, [](int32_t) { return true; });
    spec_mod.push_back(modeled() - m0 - prompt_modeled_ms);
    spec_tokens = sr.gen.tokens;
    st = sr.stats;
    spec_tps.push_back(sr.gen.gen_ms > 0 ? 1000.0 * double(sr.gen.tokens.size()) / sr.gen.gen_ms : 0.0);
    draft_ms.push_back(sr.stats.draft_ms);
    verify_ms.push_back(sr.stats.verify_ms);
  }
  const double base = median(base_tps), spec = median(spec_tps);
  const double gen_tokens = double(std::max<size_t>(spec_tokens.size(), 2) - 1);
  const double base_mod_tok = median(base_mod) / double(std::max<size_t>(base_tokens.size(), 2) - 1);
  const double spec_mod_tok = median(spec_mod) / gen_tokens;
  if (j != nullptr) {
    j->key("speculative").begin_object();
    j->key("source").value(st.source);
    j->key("draft_max").value(setup.options.draft_max);
    j->key("tokens_identical").value(base_tokens == spec_tokens);
    j->key("greedy_tg_tok_per_s_median").value(base);
    j->key("sd_tok_per_s_median").value(spec);
    j->key("sd_tok_per_s_runs").begin_array();
    for (double v : spec_tps) j->value(v);
    j->end_array();
    j->key("greedy_tg_tok_per_s_runs").begin_array();
    for (double v : base_tps) j->value(v);
    j->end_array();
    j->key("speedup").value(base > 0 ? spec / base : 0.0);
    j->key("acceptance_rate").value(st.acceptance_rate());
    j->key("mean_accepted").value(st.mean_accepted());
    j->key("tokens_per_target_pass").value(st.passes_per_token() > 0 ? 1.0 / st.passes_per_token() : 0.0);
    j->key("draft_ms_median").value(median(draft_ms));
    j->key("verify_ms_median").value(median(verify_ms));
    j->key("bytes_streamed_per_token").value(st.generated > 0 ? double(st.bytes_streamed) / double(st.generated) : 0.0);
    if (sim) {
      j->key("modeled").value(true);
      j->key("board_profile").value(target.device()->sim_kernel()->options().board.name);
      j->key("modeled_ms_per_token_target_only").value(base_mod_tok);
      j->key("modeled_ms_per_token_with_draft").value(spec_mod_tok);
      j->key("modeled_speedup").value(spec_mod_tok > 0 ? base_mod_tok / spec_mod_tok : 0.0);
    }
    j->end_object();
    return;
  }
  std::printf("speculative (%s, K %lld, greedy, %lld tokens): %.2f t/s vs %.2f t/s target-only (%.2fx, medians of %d, "
              "measured), acceptance %.1f%%, %.2f tokens per target pass, draft %.1f ms, verify %.1f ms%s\n",
              st.source.c_str(), (long long)setup.options.draft_max, (long long)spec_tokens.size(), spec, base,
              base > 0 ? spec / base : 0.0, reps, 100.0 * st.acceptance_rate(),
              st.passes_per_token() > 0 ? 1.0 / st.passes_per_token() : 0.0, median(draft_ms), median(verify_ms),
              base_tokens == spec_tokens ? "" : "; TOKENS DIFFER from target-only");
  if (sim) {
    std::printf("  modeled (board profile %s, NPU jobs only): %.3f ms per token with the draft, %.3f target-only "
                "(%.2fx)\n",
                target.device()->sim_kernel()->options().board.name.c_str(), spec_mod_tok, base_mod_tok,
                spec_mod_tok > 0 ? base_mod_tok / spec_mod_tok : 0.0);
  }
}

}  // namespace ork::cli
