#include "runtime/draft_model.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace ork::runtime {
namespace {

SamplerParams draft_params(SamplerParams p) {
  p.repeat_penalty = 1.0f;
  p.repeat_last_n = 0;
  // A stream of its own, fixed by the target's seed (a random seed stays random).
  if (p.seed != SamplerParams::kRandomSeed) {
    p.seed = (p.seed ^ 0x5bd1e995d3a2c4f1ull) + 1;
    if (p.seed == SamplerParams::kRandomSeed) p.seed = 0;
  }
  return p;
}

// The largest softmax probability of a row of logits (temperature 1).
double top_softmax(const float* l, int64_t n) {
  const float mx = *std::max_element(l, l + n);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(double(l[i]) - double(mx));
  return 1.0 / sum;
}

int32_t draw(const std::vector<TokenProb>& q, double u) {
  double cum = 0.0;
  for (const TokenProb& t : q) {
    cum += t.p;
    if (cum > u) return t.id;
  }
  return q.back().id;
}

}  // namespace

void check_draft_vocab(const model::Model& target, const model::Model& draft) {
  const model::Tokenizer& a = target.tokenizer();
  const model::Tokenizer& b = draft.tokenizer();
  ORK_CHECK(a.n_vocab() == b.n_vocab() && target.config().n_vocab == draft.config().n_vocab,
            "--draft: the draft model's vocabulary has ", draft.config().n_vocab,
            " tokens, the target's ", target.config().n_vocab, " (the draft must share the tokenizer)");
  for (int32_t id = 0; id < a.n_vocab(); ++id) {
    ORK_CHECK(a.vocab().tokens[size_t(id)] == b.vocab().tokens[size_t(id)], "--draft: token ", id,
              " of the draft model differs from the target's (the draft must share the tokenizer)");
  }
}

DraftModel::DraftModel(Engine& draft, int64_t n_ctx, const SamplerParams& params, float p_min)
    : owned_(std::make_unique<Context>(draft, n_ctx)), ctx_(*owned_), sampler_(draft_params(params)), p_min_(p_min) {
  ORK_CHECK(p_min >= 0.0f && p_min <= 1.0f, "--draft-p-min ", p_min, " is outside [0, 1]");
}

DraftModel::DraftModel(Context& draft_ctx, const SamplerParams& params, float p_min)
    : ctx_(draft_ctx), sampler_(draft_params(params)), p_min_(p_min) {
  ORK_CHECK(p_min >= 0.0f && p_min <= 1.0f, "--draft-p-min ", p_min, " is outside [0, 1]");
}

void DraftModel::propose(const std::vector<int32_t>& seq, int64_t max_k, Draft& out) {
  out.clear();
  ORK_CHECK(!seq.empty(), "draft: empty sequence");
  // Keep the common prefix of what the cache holds and seq, but always re-evaluate seq's last token
  // (its logits are the first draft's).
  size_t keep = 0;
  while (keep < evaluated_.size() && keep + 1 < seq.size() && evaluated_[keep] == seq[keep]) ++keep;
  keep = size_t(ctx_.keepable(std::min<int64_t>(int64_t(keep), ctx_.n_past())));  // a ring may not reach back
  ctx_.truncate(int64_t(keep));
  evaluated_.resize(keep);
  std::vector<int32_t> batch(seq.begin() + int64_t(keep), seq.end());
  max_k = std::min<int64_t>(max_k, ctx_.n_ctx() - int64_t(seq.size()) + 1);
  if (max_k <= 0 || int64_t(seq.size()) > ctx_.n_ctx()) return;

  const bool greedy = sampler_.params().temperature <= 0.0f;
  std::vector<TokenProb> q;
  for (int64_t i = 0; i < max_k; ++i) {
    const float* logits = ctx_.eval(batch);
    evaluated_.insert(evaluated_.end(), batch.begin(), batch.end());
    sampler_.distribution(logits, int32_t(ctx_.n_vocab()), q);
    const double top = greedy ? top_softmax(logits, ctx_.n_vocab()) : q.front().p;
    if (top < double(p_min_)) break;
    const int32_t id = greedy ? q.front().id : draw(q, sampler_.uniform());
    out.tokens.push_back(id);
    out.q.push_back(greedy ? std::vector<TokenProb>{} : q);
    if (i + 1 == max_k) break;  // the last draft needs no logits of its own
    batch.assign(1, id);
  }
}

}  // namespace ork::runtime
