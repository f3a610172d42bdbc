#include "model/forward.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/quote.h"
#include "model/non_finite.h"
#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/attention_blocked.h"
#include "ops/attention_f16.h"
#include "ops/norm.h"
#include "ops/rope.h"
#include "ops/rope_ext.h"
#include "quant/types.h"

namespace ork::model {

Forward::Forward(const Config& config, const Weights& weights, MatmulBackend& backend,
                 ThreadPool& pool)
    : c_(config), w_(weights), backend_(backend), pool_(pool) {
  if (config.is_moe()) moe_ = std::make_unique<MoeFfn>(config, backend, pool);
}

uint64_t Forward::scratch_bytes(int64_t n) const {
  // x_, x_alt_, h_, q_, attn_, k_, v_, gate_, up_, act_ (ensure_scratch)
  const int64_t per_token = 2 * c_.n_embd + std::max(c_.n_embd, c_.q_dim()) + 2 * c_.q_dim() + 2 * c_.kv_dim() +
                            3 * c_.n_ff;
  return uint64_t(n * per_token) * sizeof(float) + (moe_ ? moe_->scratch_bytes(n) : 0);
}

uint64_t Forward::kv_staging_bytes() const { return uint64_t(kv_k_.capacity() + kv_v_.capacity()) * sizeof(float); }

void Forward::ensure_scratch(int64_t n) {
  if (n <= capacity_) return;
  x_.resize(size_t(n * c_.n_embd));
  x_alt_.resize(size_t(n * c_.n_embd));
  h_.resize(size_t(n * std::max(c_.n_embd, c_.q_dim())));
  q_.resize(size_t(n * c_.q_dim()));
  k_.resize(size_t(n * c_.kv_dim()));
  v_.resize(size_t(n * c_.kv_dim()));
  attn_.resize(size_t(n * c_.q_dim()));
  gate_.resize(size_t(n * c_.n_ff));
  up_.resize(size_t(n * c_.n_ff));
  act_.resize(size_t(n * c_.n_ff));
  capacity_ = n;
}

void Forward::embed_tokens(const Config& config, const Weights& weights, const int32_t* tokens,
                           int64_t n, float* out) {
  ORK_CHECK(n >= 0 && (n == 0 || (tokens != nullptr && out != nullptr)), "embed: null tokens or output");
  const gguf::TensorInfo& t = *weights.token_embd;
  const auto& tr = quant::traits(t.type);
  const int64_t row = quant::row_bytes(t.type, config.n_embd);
  for (int64_t i = 0; i < n; ++i) {
    ORK_CHECK(tokens[i] >= 0 && tokens[i] < config.n_vocab, "token id ", tokens[i],
              " is outside the vocabulary [0, ", config.n_vocab, ")");
    tr.decode(t.data + tokens[i] * row, out + i * config.n_embd, config.n_embd);
  }
}

void Forward::linear(const Linear& w, const float* x, int64_t n, float* y) {
  // Every path reports non-finite activations alike: the exact path would carry NaN on, the 8-bit
  // paths would quantize it to a plausible number.
  check_input(w, x, n);
  backend_.matmul(w, x, n, y);
  add_bias_rows(w, n, y);
}

void Forward::check_input(const Linear& w, const float* x, int64_t n) {
  if (!backend_.checks_inputs_finite()) check_finite(x, n, w.k, "input of", w);
}

void Forward::add_bias_rows(const Linear& w, int64_t n, UnscaledRows& y) {
  if (w.bias == nullptr) return;
  y.scale_rows(n);
  add_bias_rows(w, n, y.y);
}

void Forward::add_bias_rows(const Linear& w, int64_t n, float* y) {
  if (w.bias == nullptr) return;
  for (int64_t i = 0; i < n; ++i) {
    float* row = y + i * w.n;
    for (int64_t j = 0; j < w.n; ++j) row[j] += w.bias[j];
  }
}

void Forward::linear_group(std::initializer_list<const Linear*> ws, const float* x, int64_t n,
                           std::initializer_list<float*> ys) {
  ORK_CHECK(ws.size() == ys.size() && ws.size() > 0, "linear_group: ", ws.size(), " weights, ", ys.size(), " outputs");
  check_input(**ws.begin(), x, n);
  backend_.matmul_group(std::span<const Linear* const>(ws.begin(), ws.size()), x, n,
                        std::span<float* const>(ys.begin(), ys.size()));
  auto y = ys.begin();
  for (const Linear* w : ws) add_bias_rows(*w, n, *y++);
}

ResidualNorm Forward::residual(const float* base, const UnscaledRows& branch, const float* post_norm,
                               const float* norm) {
  ResidualNorm r = ResidualNorm::normed(base, norm, c_.rms_eps, c_.n_embd, h_.data(), &pool_);
  r.branch = branch;
  r.post_norm = post_norm;
  r.stream_out = base == x_.data() ? x_alt_.data() : x_.data();
  r.check();
  return r;
}

void Forward::attend(const Sequence& seq, int64_t il, int64_t row0, const UnscaledRows (&qkv)[3]) {
  const LayerWeights& l = w_.layers[size_t(il)];
  const int64_t Q = c_.q_dim(), KV = c_.kv_dim(), D = c_.head_dim;
  KvCache& cache = *seq.cache;
  const int64_t n = seq.n, pos0 = seq.pos0;

  const float* factors = w_.rope_factors(c_, cache.n_ctx());
  const float base = c_.rope_base(il), scale = c_.rope_scale(il);
  const float mscale = c_.rope_attn_factor;
  ops::RopeExt ext;
  ext.ext_factor = c_.rope_ext_factor;
  ext.attn_factor = mscale;
  ext.n_ctx_orig = c_.n_ctx_orig;
  const auto add_bias = [](float* row, const float* bias, int64_t width) {
    if (bias != nullptr) {
      for (int64_t j = 0; j < width; ++j) row[j] += bias[j];
    }
  };
  // Per token (rows are independent, split over the pool): biases, the per-head norms, RoPE.
  pool_.parallel_for(n, 1, [&](int64_t i0, int64_t i1) {
    thread_local std::vector<float> head;  // one head: rmsnorm's input and output must not alias
    if (c_.qk_norm && head.size() < size_t(D)) head.resize(size_t(D));
    for (int64_t i = i0; i < i1; ++i) {
      float* q = q_.data() + (row0 + i) * Q;
      float* k = k_.data() + (row0 + i) * KV;
      float* v = v_.data() + (row0 + i) * KV;
      for (const UnscaledRows& r : qkv) r.scale_row(row0 + i);  // in place: the rows are rewritten below
      add_bias(q, l.wq.bias, Q);
      add_bias(k, l.wk.bias, KV);
      add_bias(v, l.wv.bias, KV);
      if (c_.qk_norm) {
        for (int64_t h = 0; h < c_.n_head; ++h) {
          std::copy(q + h * D, q + (h + 1) * D, head.begin());
          ops::rmsnorm(head.data(), l.q_norm, D, c_.rms_eps, q + h * D);
        }
        for (int64_t h = 0; h < c_.n_head_kv; ++h) {
          std::copy(k + h * D, k + (h + 1) * D, head.begin());
          ops::rmsnorm(head.data(), l.k_norm, D, c_.rms_eps, k + h * D);
        }
      }
      if (ext.ext_factor == 0.0f && mscale == 1.0f) {
        ops::rope(q, c_.n_head, D, c_.n_rot, pos0 + i, base, scale, c_.rope_mode, factors);
        ops::rope(k, c_.n_head_kv, D, c_.n_rot, pos0 + i, base, scale, c_.rope_mode, factors);
      } else {  // YaRN, or an attention factor on cos/sin (LongRoPE)
        ops::rope_ext(q, c_.n_head, D, c_.n_rot, pos0 + i, base, scale, c_.rope_mode, factors, ext);
        ops::rope_ext(k, c_.n_head_kv, D, c_.n_rot, pos0 + i, base, scale, c_.rope_mode, factors, ext);
      }
    }
  });
  cache.store(il, pos0, n, k_.data() + row0 * KV, v_.data() + row0 * KV);

  ops::AttentionOptions opt;
  opt.scale = c_.attn_scale;
  opt.softcap = c_.attn_softcap;
  opt.window = c_.window(il);
  const float* kc = nullptr;
  const float* vc = nullptr;
  if (cache.ring(il)) {  // a sliding-window ring: its rows from the first key on, unrolled
    ORK_CHECK(opt.window > 0 && n <= cache.rows(il) - opt.window + 1, "eval: ", n, " tokens at once exceed layer ",
              il, "'s ring of ", cache.rows(il), " rows for a window of ", opt.window);
    const int64_t first = std::max<int64_t>(0, pos0 - opt.window + 1);
    const size_t need = size_t((pos0 + n - first) * KV);
    if (kv_k_.size() < need) kv_k_.resize(need), kv_v_.resize(need);
    cache.load(il, first, pos0 + n - first, kv_k_.data(), kv_v_.data());
    kc = kv_k_.data();
    vc = kv_v_.data();
    opt.kv_pos0 = first;
  } else if (cache.type() == KvType::kF32) {
    kc = cache.k_f32(il);
    vc = cache.v_f32(il);
  } else if (cache.type() == KvType::kF16 && n == 1) {  // decode: the f16 rows read in place, no f32 copy
    ops::attention_f16(pool_, q_.data() + row0 * Q, n, pos0, c_.n_head, c_.n_head_kv, D,
                       reinterpret_cast<const uint16_t*>(cache.k_bytes(il)),
                       reinterpret_cast<const uint16_t*>(cache.v_bytes(il)), attn_.data() + row0 * Q, opt);
    return;
  } else {  // f32 rows of the positions this sequence attends to, rounded as the cache holds them
    const int64_t first = opt.window > 0 ? std::max<int64_t>(0, pos0 - opt.window + 1) : 0;
    const size_t need = size_t((pos0 + n) * KV);
    if (kv_k_.size() < need) kv_k_.resize(need), kv_v_.resize(need);
    cache.load(il, first, pos0 + n - first, kv_k_.data() + first * KV, kv_v_.data() + first * KV);
    kc = kv_k_.data();
    vc = kv_v_.data();
  }
  const float* q = q_.data() + row0 * Q;
  float* out = attn_.data() + row0 * Q;
  // Each K/V row loaded once per tile of query rows (results bit-identical to ops::attention).
  ops::attention_blocked(pool_, q, n, pos0, c_.n_head, c_.n_head_kv, D, kc, vc, out, opt);
}

ResidualNorm Forward::layer(std::span<const Sequence> seqs, int64_t il, const ResidualNorm& in, int64_t n) {
  const LayerWeights& l = w_.layers[size_t(il)];
  const float* next_norm = il + 1 < c_.n_layer ? w_.layers[size_t(il + 1)].attn_norm : w_.output_norm;

  // Q/K/V's input rows computed by the call (a quantizing backend: in its quantizing pass); their
  // results possibly unscaled: scaled row by row in attend(), with the biases.
  const Linear* qkv_w[] = {&l.wq, &l.wk, &l.wv};
  float* qkv_y[] = {q_.data(), k_.data(), v_.data()};
  UnscaledRows qkv[3];
  backend_.matmul_group_unscaled(qkv_w, in, n, qkv_y, qkv);
  const float* x = in.stream();  // written by the call
  int64_t row0 = 0;
  for (const Sequence& seq : seqs) {
    attend(seq, il, row0, qkv);
    row0 += seq.n;
  }
  check_input(l.wo, attn_.data(), n);
  UnscaledRows o = backend_.matmul_unscaled(l.wo, attn_.data(), n, h_.data());  // scaled as the residual add reads it
  add_bias_rows(l.wo, n, o);
  const ResidualNorm ffn_in = residual(x, o, l.post_attn_norm, l.ffn_norm);

  if (moe_) {
    const float* h = ffn_in.materialize(n);
    const UnscaledRows e = UnscaledRows::f32(moe_->run(il, l, h, n), c_.n_embd);
    return residual(ffn_in.stream_out, e, l.post_ffn_norm, next_norm);
  }
  const ops::Glu glu = c_.geglu ? ops::Glu::kGeglu : ops::Glu::kSwiglu;
  UnscaledRows d = UnscaledRows::f32(h_.data(), l.down.n);
  if (l.gate.bias == nullptr && l.up.bias == nullptr) {  // the backend may fuse gate/up's results into down's input
    d = backend_.ffn(l.gate, l.up, l.down, glu, ffn_in, n, gate_.data(), up_.data(), act_.data(), h_.data());
  } else {
    const float* h = ffn_in.materialize(n);
    linear_group({&l.gate, &l.up}, h, n, {gate_.data(), up_.data()});
    // The activation and ffn_down: a quantizing backend fuses the activation into quantizing down's input.
    backend_.matmul_glu(l.down, glu, gate_.data(), up_.data(), n, act_.data(), h_.data());
  }
  add_bias_rows(l.down, n, d);
  return residual(ffn_in.stream_out, d, l.post_ffn_norm, next_norm);
}

void Forward::check_positions(const KvCache& cache, int64_t n, int64_t pos0) const {
  ORK_CHECK(n >= 1, "eval: no tokens");
  ORK_CHECK(pos0 >= 0 && pos0 <= cache.n_ctx() && n <= cache.n_ctx() - pos0, "eval: positions ", pos0, "..",
            pos0 + n - 1, " exceed the context of ", cache.n_ctx(), " tokens");
}

void Forward::eval(KvCache& cache, const int32_t* tokens, int64_t n, int64_t pos0,
                   bool all_logits, float* logits) {
  check_positions(cache, n, pos0);
  ORK_CHECK(tokens != nullptr, "eval: null tokens");
  ensure_scratch(n);
  embed_tokens(c_, w_, tokens, n, x_.data());
  if (c_.embd_scale != 1.0f) {
    for (int64_t i = 0; i < n * c_.n_embd; ++i) x_[size_t(i)] *= c_.embd_scale;
  }
  set_out_rows(n, all_logits);
  const Sequence seq{&cache, pos0, n};
  run({&seq, 1}, x_.data(), n, logits);
}

void Forward::eval_embd(KvCache& cache, const float* embd, int64_t n, int64_t pos0, bool all_logits,
                        float* logits) {
  check_positions(cache, n, pos0);
  ORK_CHECK(embd != nullptr, "eval: null input embeddings");
  ensure_scratch(n);
  if (c_.embd_scale_inputs && c_.embd_scale != 1.0f) {
    for (int64_t i = 0; i < n * c_.n_embd; ++i) x_[size_t(i)] = embd[i] * c_.embd_scale;
    embd = x_.data();
  }
  set_out_rows(n, all_logits);
  const Sequence seq{&cache, pos0, n};
  run({&seq, 1}, embd, n, logits);
}

void Forward::set_out_rows(int64_t n, bool all_logits) {
  out_rows_.clear();
  for (int64_t i = all_logits ? 0 : n - 1; i < n; ++i) out_rows_.push_back(i);
}

void Forward::eval_batch(std::span<const Sequence> seqs, const int32_t* tokens, float* logits) {
  ORK_CHECK(!seqs.empty(), "eval_batch: no sequences");
  ORK_CHECK(tokens != nullptr && logits != nullptr, "eval_batch: null tokens or logits");
  out_rows_.clear();
  int64_t n = 0;
  for (size_t s = 0; s < seqs.size(); ++s) {
    ORK_CHECK(seqs[s].cache != nullptr, "eval_batch: sequence ", s, " has no cache");
    for (size_t t = 0; t < s; ++t) {
      ORK_CHECK(seqs[t].cache != seqs[s].cache, "eval_batch: sequences ", t, " and ", s, " share a cache");
    }
    check_positions(*seqs[s].cache, seqs[s].n, seqs[s].pos0);
    n += seqs[s].n;
    out_rows_.push_back(n - 1);
  }
  ensure_scratch(n);
  embed_tokens(c_, w_, tokens, n, x_.data());
  if (c_.embd_scale != 1.0f) {
    for (int64_t i = 0; i < n * c_.n_embd; ++i) x_[size_t(i)] *= c_.embd_scale;
  }
  run(seqs, x_.data(), n, logits);
}

void Forward::run(std::span<const Sequence> seqs, const float* x0, int64_t n, float* logits) {
  const int64_t E = c_.n_embd;
  const float* norm0 = c_.n_layer > 0 ? w_.layers[0].attn_norm : w_.output_norm;
  ResidualNorm in = ResidualNorm::normed(x0, norm0, c_.rms_eps, E, h_.data(), &pool_);
  for (int64_t il = 0; il < c_.n_layer; ++il) in = layer(seqs, il, in, n);

  // The last residual add and output_norm, for the rows that reach the output only. Row i of h_ is
  // written after branch row out_rows_[i] >= i was read, and rows below out_rows_[i] are not read
  // again (out_rows_ ascends), so a branch over h_ is safe.
  in.check();
  const int64_t n_out = int64_t(out_rows_.size());
  std::vector<float> scratch(static_cast<size_t>(E));
  for (int64_t i = 0; i < n_out; ++i) in.row(out_rows_[size_t(i)], h_.data() + i * E, scratch.data());
  linear(w_.output, h_.data(), n_out, logits);
  if (const float cap = c_.final_softcap; cap > 0.0f) {
    const int64_t count = n_out * w_.output.n;
    for (int64_t i = 0; i < count; ++i) logits[i] = cap * std::tanh(logits[i] / cap);
  }
  check_finite(logits, n_out, w_.output.n, "logits of", w_.output);
}

}  // namespace ork::model
