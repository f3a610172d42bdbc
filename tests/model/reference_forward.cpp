#include "reference_forward.h"

#include "reference_kv_rounding.h"
#include "reference_moe.h"

#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>

#include "gguf/file.h"
#include "quant/types.h"

namespace ork::testing {
namespace {

using Vec = std::vector<double>;

// A tensor as doubles, rows of dims[0].
struct Tensor {
  std::vector<uint64_t> dims;
  Vec data;
  const double* row(uint64_t r) const { return data.data() + r * dims[0]; }
};

Tensor load(const gguf::File& f, const std::string& name) {
  const gguf::TensorInfo& t = f.tensor(name);
  Tensor out;
  out.dims = t.dims;
  std::vector<float> tmp(t.n_elements);
  quant::traits(t.type).decode(t.data, tmp.data(), int64_t(t.n_elements));
  out.data.assign(tmp.begin(), tmp.end());
  return out;
}

Vec rmsnorm(const Vec& x, const double* w, double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  const double inv = 1.0 / std::sqrt(ss / double(x.size()) + eps);
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * w[i];
  return y;
}

// y = W x (+ b), W with rows of x.size().
Vec matvec(const Tensor& w, const Vec& x, const Tensor* b) {
  const uint64_t n = w.dims[1];
  Vec y(n);
  for (uint64_t r = 0; r < n; ++r) {
    const double* row = w.row(r);
    double s = 0;
    for (size_t k = 0; k < x.size(); ++k) s += row[k] * x[k];
    y[r] = s + (b ? b->data[r] : 0.0);
  }
  return y;
}

// YaRN (Peng et al. 2023, as ggml's rope_yarn): pair i's angle blends the interpolated angle
// (scale·θ) and the extrapolated one (θ) with weight ramp_i = 1 − clamp((i − lo)/(hi − lo), 0, 1),
// lo/hi the pairs whose wavelength makes beta_fast / beta_slow turns over n_ctx_orig; cos/sin are
// multiplied by 1 + 0.1·ln(1/scale).
struct Yarn {
  bool on = false;
  double lo = 0, hi = 0;
};

Yarn yarn_dims(int64_t n_rot, int64_t n_ctx_orig, double base) {
  const double pi = 3.14159265358979323846;
  auto corr = [&](double turns) { return double(n_rot) * std::log(double(n_ctx_orig) / (turns * 2 * pi)) / (2 * std::log(base)); };
  Yarn y;
  y.on = true;
  y.lo = std::max(0.0, std::floor(corr(32.0)));
  y.hi = std::min(double(n_rot - 1), std::ceil(corr(1.0)));
  return y;
}

// ff: per-pair frequency factors dividing pair i's angle (rope_freqs.weight, phi3's LongRoPE
// factors); null = none. m: cos and sin are multiplied by it (rope.scaling.attn_factor).
void rope(double* head, int64_t n_rot, int64_t pos, double base, double scale, bool neox,
          const double* ff, double m, const Yarn& yarn = {}) {
  if (yarn.on) m *= 1.0 + 0.1 * std::log(1.0 / scale);
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    const double extrap = double(pos) * std::pow(base, -2.0 * double(i) / double(n_rot)) / (ff ? ff[i] : 1.0);
    double theta = scale * extrap;
    if (yarn.on) {
      const double mix = 1.0 - std::min(1.0, std::max(0.0, (double(i) - yarn.lo) / std::max(0.001, yarn.hi - yarn.lo)));
      theta = theta * (1.0 - mix) + extrap * mix;
    }
    const double c = m * std::cos(theta), s = m * std::sin(theta);
    const int64_t a = neox ? i : 2 * i;
    const int64_t b = neox ? i + n_rot / 2 : 2 * i + 1;
    const double x0 = head[a], x1 = head[b];
    head[a] = x0 * c - x1 * s;
    head[b] = x0 * s + x1 * c;
  }
}

// Rows [r0, r0 + n) of a 2-D tensor.
Tensor rows(const Tensor& t, uint64_t r0, uint64_t n) {
  Tensor out;
  out.dims = {t.dims[0], n};
  out.data.assign(t.row(r0), t.row(r0) + n * t.dims[0]);
  return out;
}

double gelu_tanh(double x) {
  const double pi = 3.14159265358979323846;
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (x + 0.044715 * x * x * x)));
}

}  // namespace

std::vector<std::vector<double>> reference_logits(const std::string& path,
                                                  const std::vector<int32_t>& tokens, int64_t n_ctx,
                                                  const std::string& kv_type) {
  const gguf::File f = gguf::File::open(path);
  const std::string arch(f.get_string("general.architecture"));
  const std::string p = arch + ".";
  const bool gemma2 = arch == "gemma2", gemma3 = arch == "gemma3", gemma = gemma2 || gemma3;
  const bool phi3 = arch == "phi3";
  const int64_t n_embd = int64_t(f.get_uint(p + "embedding_length"));
  const int64_t n_layer = int64_t(f.get_uint(p + "block_count"));
  const int64_t n_head = int64_t(f.get_uint(p + "attention.head_count"));
  const int64_t n_head_kv = int64_t(f.get_uint_or(p + "attention.head_count_kv", uint64_t(n_head)));
  const int64_t head_dim =
      int64_t(f.get_uint_or(p + "attention.key_length", uint64_t(n_embd / n_head)));
  const int64_t n_rot = int64_t(f.get_uint_or(p + "rope.dimension_count", uint64_t(head_dim)));
  const double eps = f.get_float(p + "attention.layer_norm_rms_epsilon");
  const double base = f.get_float_or(p + "rope.freq_base", 10000.0);
  // The type defaults to linear, the factor to 1 (llama.cpp); none never scales.
  const std::string scaling(f.get_string_or(p + "rope.scaling.type", "linear"));
  double scale = 1.0;
  if (scaling != "none" && f.find(p + "rope.scaling.factor")) scale = 1.0 / f.get_float(p + "rope.scaling.factor");
  const int64_t n_ctx_orig = int64_t(f.get_uint_or(p + "rope.scaling.original_context_length",
                                                   f.get_uint(p + "context_length")));
  const double mscale = f.get_float_or(p + "rope.scaling.attn_factor", 1.0);
  const bool neox = arch != "llama";
  // One tensor of factors for every layer, named without a layer number.
  std::string ff_name = "rope_freqs.weight";
  if (phi3 && f.find_tensor("rope_factors_long.weight")) {
    const int64_t orig = int64_t(f.get_uint_or(p + "rope.scaling.original_context_length",
                                               f.get_uint(p + "context_length")));
    const int64_t ctx = n_ctx > 0 ? n_ctx : int64_t(tokens.size());
    ff_name = ctx > orig ? "rope_factors_long.weight" : "rope_factors_short.weight";
  }
  Tensor rope_freqs;
  if (f.find_tensor(ff_name)) {
    rope_freqs = load(f, ff_name);
    if (rope_freqs.dims != std::vector<uint64_t>{uint64_t(n_rot / 2)}) {
      throw std::runtime_error("reference: " + ff_name + " is not [n_rot/2]");
    }
  }
  const double* ff = rope_freqs.data.empty() ? nullptr : rope_freqs.data.data();
  const bool bias = arch == "qwen2" || arch == "qwen2moe";
  const bool qk_norm = arch == "qwen3" || arch == "qwen3moe" || gemma3;
  const bool moe = f.get_uint_or(p + "expert_count", 0) > 0;  // reference_moe.h

  // Gemma: sliding-window layers (il % period < period − 1) see the last n_swa keys and rotate with
  // base freq_base_swa (gemma2: default the global base; gemma3: 10000) at scale 1 (gemma3) or the
  // global scale (gemma2). Query scale 1/sqrt(head_dim), except the 27B models (by layer count).
  int64_t n_swa = 0, period = 0;
  double base_swa = base, scale_swa = scale;
  double attn_softcap = 0, final_softcap = 0;
  double q_scale = 1.0 / std::sqrt(double(head_dim));
  if (gemma) {
    n_swa = int64_t(f.get_uint_or(p + "attention.sliding_window", gemma2 ? 4096 : 0));
    period = int64_t(f.get_uint_or(p + "attention.sliding_window_pattern", gemma2 ? 2 : 6));
    base_swa = f.get_float_or(p + "rope.freq_base_swa", gemma2 ? base : 10000.0);
    scale_swa = gemma2 ? scale : 1.0;
    attn_softcap = gemma2 ? f.get_float_or(p + "attn_logit_softcapping", 50.0) : 0.0;
    final_softcap = f.get_float_or(p + "final_logit_softcapping", gemma2 ? 30.0 : 0.0);
    if ((gemma2 && n_layer == 46) || (gemma3 && n_layer == 62)) {
      q_scale = 1.0 / std::sqrt(double(n_embd / n_head));
    }
  }
  auto is_swa = [&](int64_t l) { return n_swa > 0 && (period == 0 || l % period < period - 1); };

  const Tensor embd = load(f, "token_embd.weight");
  const Tensor out_norm = load(f, "output_norm.weight");
  const Tensor out_w = f.find_tensor("output.weight") && !gemma2 ? load(f, "output.weight") : embd;
  const int64_t n_vocab = int64_t(embd.dims[1]);
  const int64_t T = int64_t(tokens.size());
  const int64_t q_dim = n_head * head_dim, kv_dim = n_head_kv * head_dim;

  // Residual stream per position.
  std::vector<Vec> x(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) {
    x[size_t(t)] = Vec(embd.row(uint64_t(tokens[size_t(t)])), embd.row(uint64_t(tokens[size_t(t)])) + n_embd);
    if (gemma) {
      for (double& e : x[size_t(t)]) e *= std::sqrt(double(n_embd));
    }
  }

  auto norm_add = [&](Vec& acc, const Vec& branch, const Tensor* post) {
    const Vec b = post ? rmsnorm(branch, post->data.data(), eps) : branch;
    for (size_t i = 0; i < acc.size(); ++i) acc[i] += b[i];
  };

  for (int64_t l = 0; l < n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    std::map<std::string, Tensor> w;
    for (const char* n : {"attn_norm.weight", "attn_output.weight", "ffn_norm.weight"}) w[n] = load(f, b + n);
    if (!moe) w["ffn_down.weight"] = load(f, b + "ffn_down.weight");
    if (f.find_tensor(b + "attn_qkv.weight")) {
      const Tensor qkv = load(f, b + "attn_qkv.weight");
      w["attn_q.weight"] = rows(qkv, 0, uint64_t(q_dim));
      w["attn_k.weight"] = rows(qkv, uint64_t(q_dim), uint64_t(kv_dim));
      w["attn_v.weight"] = rows(qkv, uint64_t(q_dim + kv_dim), uint64_t(kv_dim));
    } else {
      for (const char* n : {"attn_q.weight", "attn_k.weight", "attn_v.weight"}) w[n] = load(f, b + n);
    }
    if (moe) {
      // reference_moe.h
    } else if (phi3) {  // ffn_up: the gate's rows, then the up projection's
      const Tensor up = load(f, b + "ffn_up.weight");
      const uint64_t n_ff = up.dims[1] / 2;
      w["ffn_gate.weight"] = rows(up, 0, n_ff);
      w["ffn_up.weight"] = rows(up, n_ff, n_ff);
    } else {
      for (const char* n : {"ffn_gate.weight", "ffn_up.weight"}) w[n] = load(f, b + n);
    }
    if (bias) {
      for (const char* n : {"attn_q.bias", "attn_k.bias", "attn_v.bias"}) w[n] = load(f, b + n);
    }
    if (qk_norm) {
      for (const char* n : {"attn_q_norm.weight", "attn_k_norm.weight"}) w[n] = load(f, b + n);
    }
    if (gemma) {
      for (const char* n : {"post_attention_norm.weight", "post_ffw_norm.weight"}) w[n] = load(f, b + n);
    }
    const std::unique_ptr<ReferenceMoe> experts = moe ? std::make_unique<ReferenceMoe>(f, arch, l) : nullptr;
    const bool swa = is_swa(l);
    const double lbase = swa ? base_swa : base, lscale = swa ? scale_swa : scale;
    const Yarn yarn = scaling == "yarn" ? yarn_dims(n_rot, n_ctx_orig, lbase) : Yarn{};
    std::vector<Vec> q(static_cast<size_t>(T)), k(static_cast<size_t>(T)), v(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) {
      const Vec h = rmsnorm(x[size_t(t)], w["attn_norm.weight"].data.data(), eps);
      q[size_t(t)] = matvec(w["attn_q.weight"], h, bias ? &w["attn_q.bias"] : nullptr);
      k[size_t(t)] = matvec(w["attn_k.weight"], h, bias ? &w["attn_k.bias"] : nullptr);
      v[size_t(t)] = matvec(w["attn_v.weight"], h, bias ? &w["attn_v.bias"] : nullptr);
      for (int64_t hd = 0; hd < n_head; ++hd) {
        double* qh = q[size_t(t)].data() + hd * head_dim;
        if (qk_norm) {
          const Vec n = rmsnorm(Vec(qh, qh + head_dim), w["attn_q_norm.weight"].data.data(), eps);
          std::copy(n.begin(), n.end(), qh);
        }
        rope(qh, n_rot, t, lbase, lscale, neox, ff, mscale, yarn);
      }
      for (int64_t hd = 0; hd < n_head_kv; ++hd) {
        double* kh = k[size_t(t)].data() + hd * head_dim;
        if (qk_norm) {
          const Vec n = rmsnorm(Vec(kh, kh + head_dim), w["attn_k_norm.weight"].data.data(), eps);
          std::copy(n.begin(), n.end(), kh);
        }
        rope(kh, n_rot, t, lbase, lscale, neox, ff, mscale, yarn);
      }
      round_kv_row(kv_type, k[size_t(t)].data(), kv_dim);
      round_kv_row(kv_type, v[size_t(t)].data(), kv_dim);
    }
    for (int64_t t = 0; t < T; ++t) {
      Vec attn(size_t(n_head * head_dim), 0.0);
      const int64_t first = swa ? std::max<int64_t>(0, t - n_swa + 1) : 0;
      for (int64_t hd = 0; hd < n_head; ++hd) {
        const int64_t g = hd / (n_head / n_head_kv);
        const double* qh = q[size_t(t)].data() + hd * head_dim;
        Vec score(size_t(t + 1), -INFINITY);
        double mx = -INFINITY;
        for (int64_t s = first; s <= t; ++s) {
          const double* kh = k[size_t(s)].data() + g * head_dim;
          double d = 0;
          for (int64_t i = 0; i < head_dim; ++i) d += qh[i] * kh[i];
          d *= q_scale;
          if (attn_softcap > 0) d = attn_softcap * std::tanh(d / attn_softcap);
          score[size_t(s)] = d;
          mx = std::max(mx, d);
        }
        double sum = 0;
        for (int64_t s = first; s <= t; ++s) sum += (score[size_t(s)] = std::exp(score[size_t(s)] - mx));
        for (int64_t s = first; s <= t; ++s) {
          const double* vh = v[size_t(s)].data() + g * head_dim;
          for (int64_t i = 0; i < head_dim; ++i) {
            attn[size_t(hd * head_dim + i)] += score[size_t(s)] / sum * vh[i];
          }
        }
      }
      norm_add(x[size_t(t)], matvec(w["attn_output.weight"], attn, nullptr),
               gemma ? &w["post_attention_norm.weight"] : nullptr);
      const Vec h = rmsnorm(x[size_t(t)], w["ffn_norm.weight"].data.data(), eps);
      if (experts) {
        norm_add(x[size_t(t)], experts->apply(h), nullptr);
        continue;
      }
      const Vec g = matvec(w["ffn_gate.weight"], h, nullptr);
      const Vec u = matvec(w["ffn_up.weight"], h, nullptr);
      Vec a(g.size());
      for (size_t i = 0; i < g.size(); ++i) a[i] = (gemma ? gelu_tanh(g[i]) : g[i] / (1.0 + std::exp(-g[i]))) * u[i];
      norm_add(x[size_t(t)], matvec(w["ffn_down.weight"], a, nullptr),
               gemma ? &w["post_ffw_norm.weight"] : nullptr);
    }
  }
  std::vector<Vec> logits(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) {
    logits[size_t(t)] = matvec(out_w, rmsnorm(x[size_t(t)], out_norm.data.data(), eps), nullptr);
    if (final_softcap > 0) {
      for (double& z : logits[size_t(t)]) z = final_softcap * std::tanh(z / final_softcap);
    }
    if (int64_t(logits[size_t(t)].size()) != n_vocab) throw std::runtime_error("bad vocab");
  }
  return logits;
}

}  // namespace ork::testing
