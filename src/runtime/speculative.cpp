#include "runtime/speculative.h"

#include <algorithm>

#include "core/error.h"
#include "core/json.h"
#include "core/timer.h"
#include "npu/sim/sim_kernel.h"
#include "runtime/speculative_rule.h"

namespace ork::runtime {
namespace {

// What the target's device has done so far: weight bytes streamed and modeled board time.
struct DeviceCounters {
  uint64_t bytes_streamed = 0;
  double modeled_ns = 0;
};

DeviceCounters counters(Engine& e) {
  DeviceCounters c;
  if (e.plan() != nullptr) c.bytes_streamed = e.residency_stats().bytes_streamed;
  if (e.device() != nullptr && e.device()->sim_kernel() != nullptr)
    c.modeled_ns = e.device()->sim_kernel()->stats().modeled_ns;
  return c;
}

}  // namespace

std::string SpeculativeStats::to_json() const {
  JsonWriter j;
  j.begin_object();
  j.key("source").value(source);
  j.key("target_passes").value(target_passes);
  j.key("drafted").value(drafted);
  j.key("accepted").value(accepted);
  j.key("acceptance_rate").value(acceptance_rate());
  j.key("mean_accepted").value(mean_accepted());
  j.key("passes_per_token").value(passes_per_token());
  j.key("draft_ms").value(draft_ms);
  j.key("verify_ms").value(verify_ms);
  j.key("bytes_streamed").value(bytes_streamed);
  j.key("bytes_streamed_per_token").value(generated > 0 ? double(bytes_streamed) / double(generated) : 0.0);
  j.key("modeled_ms").value(modeled_ns / 1e6);
  j.end_object();
  return j.str();
}

SpeculativeResult generate_speculative(Context& target, DraftSource& draft, Sampler& sampler,
                                       const std::vector<int32_t>& prompt, int64_t n_predict,
                                       const SpeculativeOptions& options,
                                       const std::function<bool(int32_t)>& on_token) {
  ORK_CHECK(!prompt.empty(), "the prompt is empty (no tokens)");
  ORK_CHECK(n_predict >= 0, "number of tokens to predict ", n_predict, " is negative");
  ORK_CHECK(target.n_past() == 0, "generate needs an empty context");
  ORK_CHECK(int64_t(prompt.size()) < target.n_ctx(), "the prompt of ", prompt.size(),
            " tokens does not fit in the context of ", target.n_ctx(), " tokens (use --ctx)");
  ORK_CHECK(options.draft_max >= 1, "--draft-max ", options.draft_max, " must be >= 1");
  ORK_CHECK(options.draft_min >= 0 && options.draft_min <= options.draft_max, "--draft-min ",
            options.draft_min, " must be in [0, --draft-max ", options.draft_max, "]");
  const model::Tokenizer& tok = target.engine().model().tokenizer();
  const int32_t n_vocab = int32_t(target.n_vocab());

  SpeculativeResult res;
  GenerateResult& r = res.gen;
  SpeculativeStats& st = res.stats;
  st.source = draft.name();
  r.n_prompt = int64_t(prompt.size());
  for (int32_t t : prompt) sampler.accept(t);
  std::vector<int32_t> seq = prompt;

  Stopwatch sw;
  const float* logits = target.eval(prompt);
  r.prompt_ms = sw.elapsed_ms();
  sw.reset();
  const DeviceCounters before = counters(target.engine());

  // Emits one token; false when generation ends with it.
  bool stop = false;
  const auto emit = [&](int32_t id) {
    sampler.accept(id);
    seq.push_back(id);
    r.tokens.push_back(id);
    if (!on_token(id)) return false;
    if (tok.is_eog(id)) {
      r.hit_eog = true;
      return false;
    }
    return int64_t(r.tokens.size()) < n_predict;
  };

  if (n_predict > 0) stop = !emit(sampler.sample(logits, n_vocab));
  else stop = true;

  Draft d;
  std::vector<TokenProb> p;
  std::vector<double> scratch;
  std::vector<int32_t> batch;
  while (!stop) {
    // The target's cache holds seq[0, n - 1); seq's last token is evaluated with the drafts.
    if (target.n_past() >= target.n_ctx()) {
      r.hit_ctx = true;
      break;
    }
    const int64_t room = target.n_ctx() - target.n_past() - 1;
    const int64_t k_max =
        std::min({options.draft_max, room, n_predict - int64_t(r.tokens.size()) - 1});
    d.clear();
    if (k_max >= std::max<int64_t>(options.draft_min, 1)) {
      Stopwatch dw;
      draft.propose(seq, k_max, d);
      st.draft_ms += dw.elapsed_ms();
      ORK_CHECK(int64_t(d.tokens.size()) <= k_max, "draft: ", d.tokens.size(), " tokens proposed, at most ",
                k_max, " asked");
      ORK_CHECK(d.q.empty() || d.q.size() == d.tokens.size(), "draft: ", d.q.size(),
                " distributions for ", d.tokens.size(), " tokens");
      if (int64_t(d.tokens.size()) < options.draft_min) d.clear();
    }
    const int64_t k = int64_t(d.tokens.size());
    Stopwatch vw;
    batch.assign(1, seq.back());
    batch.insert(batch.end(), d.tokens.begin(), d.tokens.end());
    const int64_t n_past0 = target.n_past();
    const std::vector<float>& rows = target.eval_all(batch);
    ++st.target_passes;
    if (k > 0) ++st.rounds_with_draft;

    // Drafts judged and kept. Every draft of a pass counts as drafted (those after a rejection are
    // rejected with it), except those after a stop (an end token, n_predict, on_token): only the
    // judged ones count in that pass.
    int64_t judged = 0, kept = 0;
    for (int64_t j = 0; j <= k && !stop; ++j) {
      const float* row = rows.data() + size_t(j) * size_t(n_vocab);
      int32_t id;
      bool accepted = false;
      if (j < k) {
        ++judged;
        sampler.distribution(row, n_vocab, p);
        const Verdict v = verify_token(p, d.q.empty() ? std::vector<TokenProb>{} : d.q[size_t(j)],
                                       d.tokens[size_t(j)], sampler, scratch);
        id = v.token;
        accepted = v.accepted;
      } else {
        id = sampler.sample(row, n_vocab);
      }
      if (accepted) ++kept;
      stop = !emit(id);
      if (!accepted) break;
    }
    st.drafted += stop ? judged : k;
    st.accepted += kept;
    // Keep seq's previous last token and the kept drafts; the token emitted last is evaluated next.
    target.truncate(n_past0 + 1 + kept);
    st.verify_ms += vw.elapsed_ms();
  }
  // The first token came from the prompt's pass.
  st.generated = std::max<int64_t>(0, int64_t(r.tokens.size()) - 1);
  const DeviceCounters after = counters(target.engine());
  st.bytes_streamed = after.bytes_streamed - before.bytes_streamed;
  st.modeled_ns = after.modeled_ns - before.modeled_ns;
  r.gen_ms = sw.elapsed_ms();
  return res;
}

}  // namespace ork::runtime
