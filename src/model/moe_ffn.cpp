#include "model/moe_ffn.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/quote.h"
#include "ops/activation.h"
#include "ops/matmul.h"
#include "ops/moe_route.h"

namespace ork::model {

MoeFfn::MoeFfn(const Config& config, MatmulBackend& backend, ThreadPool& pool)
    : c_(config), backend_(backend), pool_(pool),
      predictor_(config.n_layer, std::max<int64_t>(config.n_expert, 1), std::max<int64_t>(config.n_expert_used, 1)) {
  ORK_CHECK(config.is_moe(), "MoeFfn: the model has no experts");
}

const MoeStats& MoeFfn::stats() const {
  stats_.prediction = predictor_.stats();
  return stats_;
}

uint64_t MoeFfn::scratch_bytes(int64_t n) const {
  const int64_t ff = std::max(c_.n_ff_exp, c_.n_ff_shexp);
  const int64_t floats = n * (c_.n_expert + 2 * c_.n_expert_used + 3 * c_.n_embd + 3 * ff + 1);
  return uint64_t(floats) * sizeof(float);
}

void MoeFfn::ensure(int64_t n) {
  const int64_t E = c_.n_embd, K = c_.n_expert_used;
  const int64_t ff = std::max(c_.n_ff_exp, c_.n_ff_shexp);
  logits_.resize(size_t(n * c_.n_expert));
  sel_.resize(size_t(n * K));
  wts_.resize(size_t(n * K));
  rows_.resize(size_t(n * K));
  slots_.resize(size_t(n * K));
  start_.assign(size_t(c_.n_expert + 1), 0);
  // An expert gets each token at most once, so n rows bound every gathered matrix.
  xg_.resize(size_t(n * E));
  yg_.resize(size_t(n * E));
  gate_.resize(size_t(n * ff));
  up_.resize(size_t(n * ff));
  act_.resize(size_t(n * ff));
  sh_logit_.resize(size_t(n));
  out_.assign(size_t(n * E), 0.0f);
}

const float* MoeFfn::run(int64_t il, const LayerWeights& l, const float* h, int64_t n) {
  const int64_t E = c_.n_embd, X = c_.n_expert, K = c_.n_expert_used;
  ORK_CHECK(l.router != nullptr && int64_t(l.exp_gate.size()) == X, "MoeFfn: layer without experts");
  for (int64_t i = 0; i < n * E; ++i) {
    if (!std::isfinite(h[i])) {
      fail("non-finite value (", h[i], ") in the input of the router ", quote(l.exp_gate[0].name()),
           "'s layer at batch row ", i / E, ", element ", i % E, ": the weights or the input hold NaN/Inf or overflowed");
    }
  }
  ensure(n);

  // Routing: f32 logits, softmax, top-k (and normalization) per token.
  ops::matmul(pool_, h, n, E, l.router, quant::Type::F32, X, logits_.data());
  // The same tokens at the previous layer: their choices there condition the predictor.
  const bool chained = prev_il_ == il - 1 && prev_n_ == n;
  for (int64_t t = 0; t < n; ++t) {
    const std::span<const int32_t> prev =
        chained ? std::span<const int32_t>(prev_sel_.data() + t * K, size_t(K)) : std::span<const int32_t>();
    std::vector<int32_t> guess;
    if (n == 1) {  // decode: guessed before the router runs (at the previous layer, when it was a decode step)
      guess = next_guess_layer_ == il ? next_guess_ : predictor_.predict(il, prev);
    }
    ops::moe_route(logits_.data() + t * X, X, K, c_.moe_norm_weights, sel_.data() + t * K, wts_.data() + t * K);
    predictor_.observe(il, prev, std::span<const int32_t>(sel_.data() + t * K, size_t(K)), n == 1 ? &guess : nullptr);
  }
  prev_sel_.assign(sel_.begin(), sel_.begin() + n * K);
  prev_il_ = il;
  prev_n_ = n;
  // The next MoE layer run: decode guesses its experts now, from this token's choice, so a streaming
  // backend loads them on spare bandwidth while this layer (and the next attention) computes. A batch
  // names nothing ahead: its router names exactly the experts its tokens use.
  const int64_t next_il = (il + 1) % c_.n_layer;
  next_guess_layer_ = -1;
  std::vector<int32_t> next;
  if (n == 1) {
    next_guess_ = predictor_.predict(next_il, next_il == il + 1 ? std::span<const int32_t>(sel_.data(), size_t(K))
                                                                : std::span<const int32_t>());
    next_guess_layer_ = next_il;
    next = next_guess_;
  }
  std::sort(next.begin(), next.end());  // the order experts run in
  stats_.layer_tokens += uint64_t(n);
  stats_.expert_rows += uint64_t(n * K);
  // The (token, slot) pairs grouped by expert, tokens ascending within each expert.
  for (int64_t i = 0; i < n * K; ++i) ++start_[size_t(sel_[size_t(i)]) + 1];
  for (int64_t e = 0; e < X; ++e) start_[size_t(e + 1)] += start_[size_t(e)];
  std::vector<int32_t> fill(start_.begin(), start_.end() - 1);
  for (int64_t i = 0; i < n * K; ++i) {
    const int32_t e = sel_[size_t(i)];
    rows_[size_t(fill[size_t(e)])] = int32_t(i / K);
    slots_[size_t(fill[size_t(e)]++)] = int32_t(i % K);
  }

  std::vector<int32_t> used;  // this layer's experts, in the order they run
  for (int64_t e = 0; e < X; ++e) {
    if (start_[size_t(e + 1)] > start_[size_t(e)]) used.push_back(int32_t(e));
  }
  backend_.expect_experts(il, used, false);
  backend_.expect_experts(next_il, next, true);

  for (int64_t e = 0; e < X; ++e) {
    const int32_t r0 = start_[size_t(e)], m = start_[size_t(e + 1)] - r0;
    if (m == 0) continue;
    ++stats_.expert_runs;
    stats_.expert_bytes += l.exp_gate[size_t(e)].w->n_bytes + l.exp_up[size_t(e)].w->n_bytes +
                           l.exp_down[size_t(e)].w->n_bytes;
    for (int32_t r = 0; r < m; ++r) {
      std::memcpy(xg_.data() + r * E, h + int64_t(rows_[size_t(r0 + r)]) * E, size_t(E) * sizeof(float));
    }
    const Linear* gu[] = {&l.exp_gate[size_t(e)], &l.exp_up[size_t(e)]};
    float* ys[] = {gate_.data(), up_.data()};
    backend_.matmul_group(gu, xg_.data(), m, ys);
    // The activation and down: a quantizing backend fuses the SwiGLU into quantizing down's input.
    backend_.matmul_glu(l.exp_down[size_t(e)], ops::Glu::kSwiglu, gate_.data(), up_.data(), m, act_.data(),
                        yg_.data());
    for (int32_t r = 0; r < m; ++r) {
      const int64_t t = rows_[size_t(r0 + r)];
      const float w = wts_[size_t(t * K + slots_[size_t(r0 + r)])];
      float* o = out_.data() + t * E;
      const float* y = yg_.data() + int64_t(r) * E;
      for (int64_t i = 0; i < E; ++i) o[i] += w * y[i];
    }
  }

  if (l.sh_gate.w != nullptr) {  // qwen2moe: + sigmoid(h·g) ⊙ the shared expert
    stats_.expert_bytes += l.sh_gate.w->n_bytes + l.sh_up.w->n_bytes + l.sh_down.w->n_bytes;
    ops::matmul(pool_, h, n, E, l.sh_router, quant::Type::F32, 1, sh_logit_.data());
    const Linear* gu[] = {&l.sh_gate, &l.sh_up};
    float* ys[] = {gate_.data(), up_.data()};
    backend_.matmul_group(gu, h, n, ys);
    backend_.matmul_glu(l.sh_down, ops::Glu::kSwiglu, gate_.data(), up_.data(), n, act_.data(), yg_.data());
    for (int64_t t = 0; t < n; ++t) {
      const float s = 1.0f / (1.0f + std::exp(-sh_logit_[size_t(t)]));
      float* o = out_.data() + t * E;
      const float* y = yg_.data() + t * E;
      for (int64_t i = 0; i < E; ++i) o[i] += s * y[i];
    }
  }
  return out_.data();
}

}  // namespace ork::model
