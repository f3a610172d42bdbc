#include "gen_model/gen_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "core/error.h"
#include "core/quote.h"
#include "gen_model/vocab.h"
#include "gguf/writer.h"

namespace ork::gen {

namespace {

// Largest model the generator builds in memory (elements over all tensors).
constexpr uint64_t kMaxElements = uint64_t(1) << 30;

// splitmix64: a small, well-mixed deterministic generator.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float uniform() { return float(int64_t(next() >> 40) - (int64_t(1) << 23)) * (1.0f / float(1 << 23)); }

 private:
  uint64_t state_;
};

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= uint8_t(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

bool is_matrix(const TensorSpec& t) { return t.dims.size() >= 2; }  // 2-D, or 3-D experts

enum class Kind { Embedding, Output, Matmul, Norm, Bias };

Kind kind_of(const TensorSpec& t) {
  if (t.name == "token_embd.weight") return Kind::Embedding;
  if (t.name == "output.weight") return Kind::Output;
  if (is_matrix(t)) return Kind::Matmul;
  if (t.name.size() > 5 && t.name.compare(t.name.size() - 5, 5, ".bias") == 0) return Kind::Bias;
  return Kind::Norm;
}

// The shared direction of skewed routing: n_embd elements of mean square 1.
std::vector<float> routing_direction(const ModelSpec& spec) {
  Rng rng(spec.seed * 0x9e3779b97f4a7c15ull ^ fnv1a("routing direction"));
  std::vector<float> d(size_t(spec.n_embd));
  for (float& x : d) x = std::sqrt(3.0f) * rng.uniform();
  return d;
}

// Skewed routing (ModelSpec::routing_skew): token_embd rows += std_dev · d, so the normalized FFN
// input h carries about d / sqrt(2) and h·d ≈ n_embd / sqrt(2); router row e (expert of rank r in
// this layer's permutation) += s · 2^(−r) · sqrt(2) / n_embd · d, i.e. its logit rises by ≈ s · 2^(−r).
void add_routing_skew(const ModelSpec& spec, const TensorSpec& t, float std_dev, std::vector<float>& v) {
  const bool embd = t.name == "token_embd.weight";
  const bool router = t.name.size() > 20 && t.name.compare(t.name.size() - 20, 20, ".ffn_gate_inp.weight") == 0;
  if (!embd && !router) return;
  const std::vector<float> d = routing_direction(spec);
  const size_t E = d.size(), rows = v.size() / E;
  if (embd) {
    for (size_t r = 0; r < rows; ++r)
      for (size_t i = 0; i < E; ++i) v[r * E + i] += std_dev * d[i];
    return;
  }
  // This layer's ranks: a Fisher-Yates permutation from the seed and the tensor name.
  std::vector<int> rank(rows);
  for (size_t e = 0; e < rows; ++e) rank[e] = int(e);
  Rng rng(spec.seed * 0x2545f4914f6cdd1dull ^ fnv1a(t.name));
  for (size_t e = rows; e > 1; --e) std::swap(rank[e - 1], rank[size_t(rng.next() % e)]);
  for (size_t e = 0; e < rows; ++e) {
    const float a = spec.routing_skew * std::exp2(-float(rank[e])) * std::sqrt(2.0f) / float(E);
    for (size_t i = 0; i < E; ++i) v[e * E + i] += a * d[i];
  }
}

// Values of one tensor: depend on the seed and the name only (rope_freqs.weight: on the spec's
// rope parameters).
std::vector<float> values(const ModelSpec& spec, const TensorSpec& t) {
  uint64_t n = 1;
  for (uint64_t d : t.dims) n *= d;
  std::vector<float> v(n);
  Rng rng(spec.seed * 0x9e3779b97f4a7c15ull ^ fnv1a(t.name));
  if (t.name == "rope_factors_long.weight") {
    for (float& x : v) x = std::exp2(2.0f + 2.0f * rng.uniform());  // [1, 16)
    return v;
  }
  if (t.name == "rope_factors_short.weight") {
    for (float& x : v) x = std::exp2(0.5f + 0.5f * rng.uniform());  // [1, 2)
    return v;
  }
  if (t.name == "rope_freqs.weight") {
    if (spec.rope_freqs == "llama3") {
      return llama3_rope_factors(head_dim_of(spec), spec.rope_freq_base, spec.llama3_factor,
                                 spec.llama3_low_freq_factor, spec.llama3_high_freq_factor,
                                 spec.llama3_original_ctx);
    }
    for (float& x : v) x = std::exp2(3.0f * rng.uniform());  // "random": log-uniform in [1/8, 8)
    return v;
  }
  const float sqrt3 = std::sqrt(3.0f);  // uniform on [-a, a] has std a / sqrt(3)
  const float inv_sqrt_embd = 1.0f / std::sqrt(float(spec.n_embd));
  float std_dev = 0.0f;
  switch (kind_of(t)) {
    case Kind::Embedding:
      std_dev = spec.weight_std > 0 ? spec.weight_std : (spec.tied_output ? 2.0f * inv_sqrt_embd : 1.0f);
      break;
    case Kind::Output: std_dev = spec.weight_std > 0 ? spec.weight_std : 2.0f * inv_sqrt_embd; break;
    case Kind::Matmul:
      std_dev = spec.weight_std > 0 ? spec.weight_std : 1.0f / std::sqrt(float(t.dims[0]));
      break;
    case Kind::Bias:
      for (float& x : v) x = 0.05f * sqrt3 * rng.uniform();
      return v;
    case Kind::Norm:
      if (t.name.find("ffn_gate_inp_shexp") != std::string::npos) {  // a dot product's weights
        for (float& x : v) x = inv_sqrt_embd * sqrt3 * rng.uniform();
        return v;
      }
      for (float& x : v) x = 1.0f + 0.1f * rng.uniform();
      return v;
  }
  for (float& x : v) x = std_dev * sqrt3 * rng.uniform();
  if (spec.routing_skew > 0) add_routing_skew(spec, t, std_dev, v);
  if (spec.layer_scale != 1.0f && (t.name.find(".attn_output.") != std::string::npos ||
                                   t.name.find(".ffn_down.") != std::string::npos)) {
    const int layer = std::atoi(t.name.c_str() + 4);  // "blk.<i>."
    if (layer >= spec.scale_layers_from)
      for (float& x : v) x *= spec.layer_scale;
  }
  if (spec.noise_std > 0) {
    Rng noise((spec.noise_seed + 0x632be59bd9b4e019ull) * 0x9e3779b97f4a7c15ull ^ fnv1a(t.name));
    const float a = spec.noise_std * std_dev * sqrt3;
    for (float& x : v) x += a * noise.uniform();
  }
  return v;
}

std::string default_pre(const ModelSpec& spec) {
  if (!spec.pre.empty()) return spec.pre;
  if (spec.tokenizer == "llama") return "default";
  return spec.arch.starts_with("qwen") ? "qwen2" : "llama-bpe";
}

// What a 2-D weight's row length is called, for messages.
std::string_view row_field(const std::string& name) {
  if (name.find("attn_output") != std::string::npos) return "n_head * head_dim";
  if (name.find("ffn_down_exps") != std::string::npos) return "n_ff_exp";
  if (name.find("ffn_down_shexp") != std::string::npos) return "n_ff_shexp";
  if (name.find("ffn_down") != std::string::npos) return "n_ff";
  return "n_embd";
}

// The expert fields: counts in range, only on the archs that have experts.
void validate_moe(const ModelSpec& spec) {
  const bool moe_arch = spec.arch == "qwen2moe" || spec.arch == "qwen3moe";
  if (moe_arch && spec.n_expert <= 0) fail("gen_model: ", spec.arch, " needs n_expert > 0");
  if (spec.n_expert < 0 || spec.n_expert > 1024) {
    fail("gen_model: n_expert ", spec.n_expert, " is out of range [0, 1024]");
  }
  if (spec.n_expert > 0 && !moe_arch && spec.arch != "llama") {
    fail("gen_model: experts are for llama, qwen2moe and qwen3moe, not ", spec.arch);
  }
  if (spec.n_expert > 0 && (spec.n_expert_used < 1 || spec.n_expert_used > spec.n_expert)) {
    fail("gen_model: n_expert_used ", spec.n_expert_used, " is out of range [1, n_expert = ", spec.n_expert, "]");
  }
  if (spec.n_expert > 0 && n_ff_exp_of(spec) < 1) {
    fail("gen_model: the experts have no rows (n_ff / n_expert_used is 0; set n_ff_exp)");
  }
  if (spec.n_ff_exp < 0 || spec.n_ff_shexp < 0 || !(spec.routing_skew >= 0) || !std::isfinite(spec.routing_skew)) {
    fail("gen_model: n_ff_exp, n_ff_shexp and routing_skew must be finite and not negative");
  }
  if (spec.routing_skew > 0 && spec.n_expert == 0) fail("gen_model: routing_skew needs experts");
  if (spec.arch == "qwen2moe" && spec.head_dim != 0 && spec.head_dim * spec.n_head != spec.n_embd) {
    fail("gen_model: qwen2moe needs head_dim * n_head == n_embd (llama.cpp's attn_output is n_embd × n_embd)");
  }
  if (spec.arch == "qwen2moe" && spec.tied_output) {
    fail("gen_model: qwen2moe must be untied (llama.cpp requires its output.weight)");
  }
}

}  // namespace

std::vector<std::string_view> preset_names() {
  return {"default",  "tiny-llama",  "tiny-qwen2",  "tiny-qwen3", "tiny-spm",
          "tiny-q4k", "tiny-gemma2", "tiny-gemma3", "tiny-phi3", "tiny-mixtral", "tiny-qwen2moe",
          "tiny-qwen3moe"};
}

ModelSpec preset(std::string_view name) {
  ModelSpec s;
  if (name == "default") {
    s.n_vocab = 1024;
    s.n_embd = 128;
    s.n_layer = 4;
    s.n_head = 4;
    s.n_head_kv = 2;
    s.n_ff = 512;
    s.n_ctx = 512;
    s.weight_type = quant::Type::Q8_0;
    s.rope_freq_base = 500000.0f;
  } else if (name == "tiny-llama") {
    // The ModelSpec defaults: a llama-3-style model with a byte-level BPE vocabulary.
  } else if (name == "tiny-qwen2") {
    s.arch = "qwen2";
    s.rope_freq_base = 1000000.0f;
    s.rms_eps = 1e-6f;
    s.tied_output = true;
  } else if (name == "tiny-qwen3") {
    s.arch = "qwen3";
    s.head_dim = 32;  // != n_embd / n_head, as in the real qwen3 models
    s.rope_freq_base = 1000000.0f;
    s.rms_eps = 1e-6f;
    s.tied_output = true;
  } else if (name == "tiny-spm") {
    s.tokenizer = "llama";
  } else if (name == "tiny-gemma2") {
    // Gemma 2's shape in small: head_dim ≠ n_embd/n_head, alternating sliding-window layers.
    s.arch = "gemma2";
    s.n_layer = 3;
    s.head_dim = 32;
    s.rms_eps = 1e-6f;
    s.tied_output = true;
    s.sliding_window = 8;
    s.attn_softcap = 50.0f;
    s.final_softcap = 30.0f;
  } else if (name == "tiny-gemma3") {
    // Gemma 3: q/k norms, global layers at base 1e6 every 3rd layer, sliding ones at 10000.
    s.arch = "gemma3";
    s.n_layer = 3;
    s.head_dim = 32;
    s.rms_eps = 1e-6f;
    s.tied_output = true;
    s.rope_freq_base = 1000000.0f;
    s.rope_freq_base_swa = 10000.0f;
    s.sliding_window = 8;
    s.swa_pattern = 3;
  } else if (name == "tiny-phi3") {
    // Phi-3.5-mini's shape in small: fused QKV and gate/up, LongRoPE factors.
    s.arch = "phi3";
    s.n_head_kv = 4;
    s.n_layer = 3;
    s.longrope = "random";
    s.longrope_orig_ctx = 64;
  } else if (name == "tiny-mixtral" || name == "tiny-qwen2moe" || name == "tiny-qwen3moe") {
    s.arch = name == "tiny-mixtral" ? "llama" : name == "tiny-qwen2moe" ? "qwen2moe" : "qwen3moe";
    s.n_expert = 8;
    s.n_expert_used = 2;
    if (s.arch != "llama") {
      s.n_ff_exp = 64;
      s.rope_freq_base = 1000000.0f;
      s.rms_eps = 1e-6f;
    }
    if (s.arch == "qwen2moe") s.n_ff_shexp = 128;
    if (s.arch == "qwen3moe") s.head_dim = 32;
  } else if (name == "tiny-q4k") {
    s.n_embd = 256;
    s.n_ff = 512;
    s.weight_type = quant::Type::Q4_K;
  } else {
    std::string names;
    for (std::string_view n : preset_names()) names += (names.empty() ? "" : ", ") + std::string(n);
    fail("gen_model: unknown preset ", quote(name), " (known: ", names, ")");
  }
  return s;
}

std::vector<float> llama3_rope_factors(int head_dim, float freq_base, float factor, float low_freq_factor,
                                       float high_freq_factor, int original_ctx) {
  if (head_dim <= 0 || head_dim % 2 != 0) {
    fail("gen_model: llama3 rope factors need a positive even head_dim (got ", head_dim, ")");
  }
  if (!(freq_base > 0) || !(factor > 0) || !(low_freq_factor > 0) ||
      !(high_freq_factor > low_freq_factor) || original_ctx <= 0 || !std::isfinite(freq_base) ||
      !std::isfinite(factor) || !std::isfinite(high_freq_factor)) {
    fail("gen_model: llama3 rope scaling needs freq_base, factor, low_freq_factor > 0, high_freq_factor > "
         "low_freq_factor and original_ctx > 0 (got ", freq_base, ", ", factor, ", ", low_freq_factor, ", ",
         high_freq_factor, ", ", original_ctx, ")");
  }
  const double pi = 3.14159265358979323846;
  const double ctx = double(original_ctx), lo = double(low_freq_factor), hi = double(high_freq_factor);
  const double low_freq_wavelen = ctx / lo, high_freq_wavelen = ctx / hi;
  std::vector<float> out(size_t(head_dim / 2));
  for (int i = 0; i < head_dim / 2; ++i) {
    const double freq = std::pow(double(freq_base), -2.0 * double(i) / double(head_dim));
    const double wavelen = 2.0 * pi / freq;
    double f = 1.0;
    if (wavelen > low_freq_wavelen) {
      f = double(factor);
    } else if (wavelen >= high_freq_wavelen) {
      const double smooth = (ctx / wavelen - lo) / (hi - lo);
      f = 1.0 / ((1.0 - smooth) / double(factor) + smooth);
    }
    out[size_t(i)] = float(f);
  }
  return out;
}

int n_rot_of(const ModelSpec& spec) { return spec.n_rot != 0 ? spec.n_rot : head_dim_of(spec); }

int n_ff_exp_of(const ModelSpec& spec) {
  if (spec.n_expert <= 0) return 0;
  if (spec.arch == "llama") return spec.n_ff;
  return spec.n_ff_exp > 0 ? spec.n_ff_exp : (spec.n_expert_used > 0 ? spec.n_ff / spec.n_expert_used : 0);
}

int n_ff_shexp_of(const ModelSpec& spec) {
  if (spec.arch != "qwen2moe") return 0;
  return spec.n_ff_shexp > 0 ? spec.n_ff_shexp : spec.n_ff;
}

int head_dim_of(const ModelSpec& spec) {
  return spec.head_dim != 0 ? spec.head_dim : (spec.n_head > 0 ? spec.n_embd / spec.n_head : 0);
}

std::vector<TensorSpec> tensor_specs(const ModelSpec& spec) {
  const uint64_t embd = uint64_t(spec.n_embd), vocab = uint64_t(spec.n_vocab), ff = uint64_t(spec.n_ff);
  const uint64_t hd = uint64_t(head_dim_of(spec));
  const uint64_t q_dim = uint64_t(spec.n_head) * hd, kv_dim = uint64_t(spec.n_head_kv) * hd;
  const quant::Type wt = spec.weight_type, f32 = quant::Type::F32;
  const uint64_t half_rot = uint64_t(n_rot_of(spec) / 2);
  const bool gemma = spec.arch == "gemma2" || spec.arch == "gemma3", phi3 = spec.arch == "phi3";
  std::vector<TensorSpec> out;
  if (!spec.rope_freqs.empty()) out.push_back({"rope_freqs.weight", {half_rot}, f32});
  if (!spec.longrope.empty()) {
    out.push_back({"rope_factors_long.weight", {half_rot}, f32});
    out.push_back({"rope_factors_short.weight", {half_rot}, f32});
  }
  out.push_back({"token_embd.weight", {embd, vocab}, wt});
  for (int i = 0; i < spec.n_layer; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    out.push_back({b + "attn_norm.weight", {embd}, f32});
    if (phi3 && spec.fused_qkv) {
      out.push_back({b + "attn_qkv.weight", {embd, q_dim + 2 * kv_dim}, wt});
    } else {
      out.push_back({b + "attn_q.weight", {embd, q_dim}, wt});
      out.push_back({b + "attn_k.weight", {embd, kv_dim}, wt});
      out.push_back({b + "attn_v.weight", {embd, kv_dim}, wt});
    }
    if (spec.arch == "qwen2" || spec.arch == "qwen2moe") {
      out.push_back({b + "attn_q.bias", {q_dim}, f32});
      out.push_back({b + "attn_k.bias", {kv_dim}, f32});
      out.push_back({b + "attn_v.bias", {kv_dim}, f32});
    }
    if (spec.arch == "qwen3" || spec.arch == "qwen3moe" || spec.arch == "gemma3") {
      out.push_back({b + "attn_q_norm.weight", {hd}, f32});
      out.push_back({b + "attn_k_norm.weight", {hd}, f32});
    }
    out.push_back({b + "attn_output.weight", {q_dim, embd}, wt});
    if (gemma) out.push_back({b + "post_attention_norm.weight", {embd}, f32});
    out.push_back({b + "ffn_norm.weight", {embd}, f32});
    if (spec.n_expert > 0) {
      const uint64_t fe = uint64_t(n_ff_exp_of(spec)), ne = uint64_t(spec.n_expert);
      out.push_back({b + "ffn_gate_inp.weight", {embd, ne}, f32});
      out.push_back({b + "ffn_gate_exps.weight", {embd, fe, ne}, wt});
      out.push_back({b + "ffn_up_exps.weight", {embd, fe, ne}, wt});
      out.push_back({b + "ffn_down_exps.weight", {fe, embd, ne}, wt});
      if (spec.arch == "qwen2moe") {
        const uint64_t sh = uint64_t(n_ff_shexp_of(spec));
        out.push_back({b + "ffn_gate_inp_shexp.weight", {embd}, f32});
        out.push_back({b + "ffn_gate_shexp.weight", {embd, sh}, wt});
        out.push_back({b + "ffn_up_shexp.weight", {embd, sh}, wt});
        out.push_back({b + "ffn_down_shexp.weight", {sh, embd}, wt});
      }
    } else if (phi3) {
      out.push_back({b + "ffn_up.weight", {embd, 2 * ff}, wt});
    } else {
      out.push_back({b + "ffn_gate.weight", {embd, ff}, wt});
      out.push_back({b + "ffn_up.weight", {embd, ff}, wt});
    }
    if (spec.n_expert == 0) out.push_back({b + "ffn_down.weight", {ff, embd}, wt});
    if (gemma) out.push_back({b + "post_ffw_norm.weight", {embd}, f32});
  }
  out.push_back({"output_norm.weight", {embd}, f32});
  if (!spec.tied_output) out.push_back({"output.weight", {embd, vocab}, wt});
  return out;
}

void validate(const ModelSpec& spec) {
  const std::string_view archs[] = {"llama", "qwen2", "qwen3", "gemma2", "gemma3", "phi3", "qwen2moe", "qwen3moe"};
  if (std::find(std::begin(archs), std::end(archs), spec.arch) == std::end(archs)) {
    fail("gen_model: unknown arch ", quote(spec.arch),
         " (llama, qwen2, qwen3, gemma2, gemma3, phi3, qwen2moe, qwen3moe)");
  }
  validate_moe(spec);
  if (spec.arch == "gemma2" && !spec.tied_output) {
    fail("gen_model: gemma2 must be tied (llama.cpp projects gemma2's logits through token_embd)");
  }
  if (spec.arch == "phi3" && spec.head_dim != 0 && spec.head_dim * spec.n_head != spec.n_embd) {
    fail("gen_model: phi3 needs head_dim * n_head == n_embd (llama.cpp's phi3 q projection is n_embd wide)");
  }
  if (!spec.longrope.empty() && (spec.longrope != "random" || spec.arch != "phi3")) {
    fail("gen_model: longrope ", quote(spec.longrope), " is only \"random\", on phi3");
  }
  if (spec.yarn_factor != 0 && (!(spec.yarn_factor >= 1) || !std::isfinite(spec.yarn_factor) ||
                                 spec.yarn_orig_ctx < 1 || spec.rope_scale_linear != 1.0f || !spec.longrope.empty())) {
    fail("gen_model: yarn needs yarn_factor >= 1, yarn_orig_ctx >= 1 and no linear or LongRoPE scaling besides");
  }
  if (!spec.longrope.empty() && (spec.longrope_orig_ctx < 2 || spec.longrope_orig_ctx > spec.n_ctx)) {
    fail("gen_model: longrope_orig_ctx ", spec.longrope_orig_ctx, " must be in [2, n_ctx = ", spec.n_ctx, "]");
  }
  if (spec.sliding_window < 0 || spec.swa_pattern < 0 || !(spec.rope_freq_base_swa >= 0) ||
      !(spec.attn_softcap >= 0) || !(spec.final_softcap >= 0) || spec.n_rot < 0) {
    fail("gen_model: sliding_window, swa_pattern, rope_freq_base_swa, softcaps and n_rot must not be negative");
  }
  if (spec.tokenizer != "gpt2" && spec.tokenizer != "llama") {
    fail("gen_model: unknown tokenizer ", quote(spec.tokenizer), " (gpt2, llama)");
  }
  const std::pair<const char*, int> counts[] = {
      {"n_vocab", spec.n_vocab}, {"n_embd", spec.n_embd}, {"n_layer", spec.n_layer},
      {"n_head", spec.n_head},   {"n_head_kv", spec.n_head_kv}, {"n_ff", spec.n_ff},
      {"n_ctx", spec.n_ctx}};
  for (const auto& [field, v] : counts) {
    if (v <= 0) fail("gen_model: ", field, " must be positive (got ", v, ")");
  }
  if (spec.head_dim < 0) fail("gen_model: head_dim must not be negative (got ", spec.head_dim, ")");
  if (spec.n_head % spec.n_head_kv != 0) {
    fail("gen_model: n_head ", spec.n_head, " is not a multiple of n_head_kv ", spec.n_head_kv);
  }
  if (spec.head_dim == 0 && spec.n_embd % spec.n_head != 0) {
    fail("gen_model: n_embd ", spec.n_embd, " is not a multiple of n_head ", spec.n_head);
  }
  const int hd = head_dim_of(spec);
  if (hd % 2 != 0) fail("gen_model: head_dim ", hd, " must be even (RoPE rotates pairs)");
  if (n_rot_of(spec) % 2 != 0 || n_rot_of(spec) > hd) {
    fail("gen_model: n_rot ", n_rot_of(spec), " must be even and at most head_dim ", hd);
  }
  const int min_vocab = spec.tokenizer == "gpt2" ? kMinVocabGpt2 : kMinVocabLlama;
  if (spec.n_vocab < min_vocab) {
    fail("gen_model: n_vocab ", spec.n_vocab, " is below the ", spec.tokenizer, " tokenizer's minimum ",
         min_vocab);
  }
  if (!(spec.rms_eps > 0) || !(spec.rope_freq_base > 0) || !(spec.rope_scale_linear > 0)) {
    fail("gen_model: rms_eps, rope_freq_base and rope_scale_linear must be positive");
  }
  if (!spec.rope_freqs.empty() && spec.rope_freqs != "llama3" && spec.rope_freqs != "random") {
    fail("gen_model: unknown rope_freqs ", quote(spec.rope_freqs), " (llama3, random, or empty for none)");
  }
  if (spec.rope_freqs == "llama3") {  // throws naming the parameters when they are not usable
    (void)llama3_rope_factors(hd, spec.rope_freq_base, spec.llama3_factor, spec.llama3_low_freq_factor,
                              spec.llama3_high_freq_factor, spec.llama3_original_ctx);
  }
  if (!std::isfinite(spec.layer_scale) || spec.scale_layers_from < 0) {
    fail("gen_model: layer_scale must be finite and scale_layers_from >= 0 (got ", spec.layer_scale, ", ",
         spec.scale_layers_from, ")");
  }
  if (!(spec.noise_std >= 0) || !std::isfinite(spec.noise_std)) {
    fail("gen_model: noise_std must be finite and not negative (got ", spec.noise_std, ")");
  }
  if (!(spec.weight_std >= 0) || !std::isfinite(spec.weight_std)) {
    fail("gen_model: weight_std must be finite and not negative (got ", spec.weight_std, ")");
  }
  if (!quant::is_supported(uint32_t(spec.weight_type))) {
    fail("gen_model: weight type ", quant::type_name(uint32_t(spec.weight_type)), " is not supported");
  }
  const quant::TypeTraits& tr = quant::traits(spec.weight_type);
  uint64_t total = 0;
  for (const TensorSpec& t : tensor_specs(spec)) {
    uint64_t n = 1;
    for (uint64_t d : t.dims) n *= d;  // dims < 2^18 · 2^16 · 2^10 (validated): no overflow
    total += n;
    if (total > kMaxElements) fail("gen_model: the model exceeds ", kMaxElements, " elements");
    if (t.type == spec.weight_type && t.dims[0] % uint64_t(tr.block_size) != 0) {
      fail("gen_model: weight type ", tr.name, " needs row lengths that are multiples of ",
           tr.block_size, "; ", t.name, " has rows of ", t.dims[0], " (", row_field(t.name), ")");
    }
  }
}

void write_model(const ModelSpec& spec, const std::string& path) {
  validate(spec);
  const Vocab vocab = make_vocab(spec.tokenizer, spec.n_vocab);
  const std::string& a = spec.arch;
  const int hd = head_dim_of(spec);

  gguf::Writer w;
  w.add_string("general.architecture", a);
  // llama.cpp sets Phi-3 token attributes when general.name contains "phi3" and then needs "</s>",
  // "<unk>", "<s>" and "<|endoftext|>" in the vocabulary, which the generated ones do not all have.
  w.add_string("general.name", a == "phi3" ? std::string("ork generated tiny model") : "ork generated " + a);
  w.add_uint32("general.alignment", 32);
  w.add_uint32(a + ".vocab_size", uint32_t(spec.n_vocab));
  w.add_uint32(a + ".context_length", uint32_t(spec.n_ctx));
  w.add_uint32(a + ".embedding_length", uint32_t(spec.n_embd));
  w.add_uint32(a + ".block_count", uint32_t(spec.n_layer));
  w.add_uint32(a + ".feed_forward_length", uint32_t(spec.n_ff));
  w.add_uint32(a + ".attention.head_count", uint32_t(spec.n_head));
  w.add_uint32(a + ".attention.head_count_kv", uint32_t(spec.n_head_kv));
  w.add_float32(a + ".attention.layer_norm_rms_epsilon", spec.rms_eps);
  if (hd != spec.n_embd / spec.n_head || spec.n_embd % spec.n_head != 0) {
    w.add_uint32(a + ".attention.key_length", uint32_t(hd));
    w.add_uint32(a + ".attention.value_length", uint32_t(hd));
  }
  w.add_uint32(a + ".rope.dimension_count", uint32_t(n_rot_of(spec)));
  if (spec.sliding_window > 0) w.add_uint32(a + ".attention.sliding_window", uint32_t(spec.sliding_window));
  if (spec.swa_pattern > 0) w.add_uint32(a + ".attention.sliding_window_pattern", uint32_t(spec.swa_pattern));
  if (spec.rope_freq_base_swa > 0) w.add_float32(a + ".rope.freq_base_swa", spec.rope_freq_base_swa);
  if (spec.n_expert > 0) {
    w.add_uint32(a + ".expert_count", uint32_t(spec.n_expert));
    w.add_uint32(a + ".expert_used_count", uint32_t(spec.n_expert_used));
    if (a != "llama" && spec.n_ff_exp > 0) w.add_uint32(a + ".expert_feed_forward_length", uint32_t(spec.n_ff_exp));
    if (a == "qwen2moe" && spec.n_ff_shexp > 0) {
      w.add_uint32(a + ".expert_shared_feed_forward_length", uint32_t(spec.n_ff_shexp));
    }
  }
  if (spec.attn_softcap > 0) w.add_float32(a + ".attn_logit_softcapping", spec.attn_softcap);
  if (spec.final_softcap > 0) w.add_float32(a + ".final_logit_softcapping", spec.final_softcap);
  if (!spec.longrope.empty()) {
    const double orig = spec.longrope_orig_ctx, scale = double(spec.n_ctx) / orig;
    w.add_uint32(a + ".rope.scaling.original_context_length", uint32_t(spec.longrope_orig_ctx));
    w.add_float32(a + ".rope.scaling.attn_factor",
                  float(scale > 1.0 ? std::sqrt(1.0 + std::log(scale) / std::log(orig)) : 1.0));
  }
  w.add_float32(a + ".rope.freq_base", spec.rope_freq_base);
  if (spec.yarn_factor > 0) {
    w.add_string(a + ".rope.scaling.type", "yarn");
    w.add_float32(a + ".rope.scaling.factor", spec.yarn_factor);
    w.add_uint32(a + ".rope.scaling.original_context_length", uint32_t(spec.yarn_orig_ctx));
  } else if (spec.rope_scale_linear != 1.0f) {
    w.add_string(a + ".rope.scaling.type", "linear");
    w.add_float32(a + ".rope.scaling.factor", spec.rope_scale_linear);
  }
  w.add_string("tokenizer.ggml.model", vocab.model);
  w.add_string("tokenizer.ggml.pre", default_pre(spec));
  w.add_string_array("tokenizer.ggml.tokens", vocab.tokens);
  w.add_int32_array("tokenizer.ggml.token_type", vocab.types);
  if (!vocab.scores.empty()) w.add_float32_array("tokenizer.ggml.scores", vocab.scores);
  if (!vocab.merges.empty()) w.add_string_array("tokenizer.ggml.merges", vocab.merges);
  w.add_uint32("tokenizer.ggml.bos_token_id", uint32_t(vocab.bos));
  w.add_uint32("tokenizer.ggml.eos_token_id", uint32_t(vocab.eos));
  if (vocab.unk >= 0) w.add_uint32("tokenizer.ggml.unknown_token_id", uint32_t(vocab.unk));
  w.add_bool("tokenizer.ggml.add_bos_token", true);
  w.add_bool("tokenizer.ggml.add_eos_token", false);

  for (const TensorSpec& t : tensor_specs(spec)) {
    const std::vector<float> v = values(spec, t);
    if (t.type == quant::Type::F32) {
      w.add_tensor(t.name, t.type, t.dims, v.data(), v.size() * sizeof(float));
      continue;
    }
    const quant::TypeTraits& tr = quant::traits(t.type);
    const uint64_t rows = v.size() / t.dims[0];
    std::vector<uint8_t> q(size_t(rows) * size_t(quant::row_bytes(t.type, int64_t(t.dims[0]))));
    tr.quantize(v.data(), q.data(), int64_t(v.size()));
    w.add_tensor(t.name, t.type, t.dims, q.data(), q.size());
  }
  w.write(path);
}

}  // namespace ork::gen
