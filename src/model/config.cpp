#include "model/config.h"

#include <cmath>

#include "core/error.h"
#include "core/quote.h"
#include "model/moe_config.h"

namespace ork::model {

const char* arch_name(Arch a) {
  switch (a) {
    case Arch::kLlama: return "llama";
    case Arch::kQwen2: return "qwen2";
    case Arch::kQwen3: return "qwen3";
    case Arch::kGemma2: return "gemma2";
    case Arch::kGemma3: return "gemma3";
    case Arch::kPhi3: return "phi3";
    case Arch::kQwen2Moe: return "qwen2moe";
    case Arch::kQwen3Moe: return "qwen3moe";
  }
  return "?";
}

namespace {

int64_t positive(const gguf::File& f, const std::string& key, uint64_t v, uint64_t max) {
  ORK_CHECK(v >= 1 && v <= max, f.path(), ": ", key, " = ", v, " is out of range [1, ", max, "]");
  return int64_t(v);
}

float positive_float(const gguf::File& f, const std::string& key, double def) {
  const double v = f.get_float_or(key, def);
  ORK_CHECK(std::isfinite(v) && v > 0, f.path(), ": ", key, " = ", v, " must be finite and > 0");
  return float(v);
}

// The Gemma 2/3 hyper-parameters, with llama.cpp's defaults (src/models/gemma2.cpp, gemma3.cpp;
// llama-hparams.h): layer il is a sliding-window layer when il % pattern < pattern - 1.
void read_gemma(const gguf::File& f, Config& c) {
  const std::string p = c.arch_name + ".";
  const bool g2 = c.arch == Arch::kGemma2;
  c.embd_scale = std::sqrt(float(c.n_embd));
  c.embd_scale_inputs = g2;
  c.post_norms = true;
  c.geglu = true;
  // gemma2 always projects through token_embd (llama.cpp binds no output.weight for it).
  if (g2) c.tied_output = true;
  // Gemma 2 27B and Gemma 3 27B scale queries by n_embd / n_head (query_pre_attn_scalar); llama.cpp
  // tells them by their layer counts.
  if ((g2 && c.n_layer == 46) || (!g2 && c.n_layer == 62)) {
    c.attn_scale = 1.0f / std::sqrt(float(c.n_embd / c.n_head));
  }
  if (g2) {
    c.attn_softcap = positive_float(f, p + "attn_logit_softcapping", 50.0);
    c.final_softcap = positive_float(f, p + "final_logit_softcapping", 30.0);
  } else if (f.find(p + "final_logit_softcapping") != nullptr) {
    const double v = f.get_float(p + "final_logit_softcapping");
    ORK_CHECK(std::isfinite(v) && v >= 0, f.path(), ": ", p, "final_logit_softcapping = ", v,
              " must be finite and >= 0");
    c.final_softcap = float(v);
  }
  const uint64_t swa = f.get_uint_or(p + "attention.sliding_window", g2 ? 4096 : 0);
  if (swa == 0) return;  // gemma3 without a window: every layer global, one RoPE base
  c.n_swa = positive(f, p + "attention.sliding_window", swa, 1u << 24);
  const std::string pattern_key = p + "attention.sliding_window_pattern";
  const gguf::Value* pv = f.find(pattern_key);
  ORK_CHECK(pv == nullptr || pv->type != gguf::ValueType::ARRAY, f.path(), ": ", pattern_key,
            " as a per-layer array is not supported; a period (uint) is");
  const int64_t period = int64_t(f.get_uint_or(pattern_key, g2 ? 2 : 6));
  ORK_CHECK(period <= 4096, f.path(), ": ", pattern_key, " = ", period, " is out of range [0, 4096]");
  c.layer_swa.resize(size_t(c.n_layer));
  for (int64_t il = 0; il < c.n_layer; ++il) {
    c.layer_swa[size_t(il)] = period == 0 || il % period < period - 1;
  }
  // gemma2: the window layers rotate like the others unless rope.freq_base_swa says otherwise;
  // gemma3: base 10000 and scale 1 (llama-hparams.h) unless the key is set.
  c.rope_freq_base_swa = positive_float(f, p + "rope.freq_base_swa", g2 ? c.rope_freq_base : 10000.0);
  c.rope_freq_scale_swa = g2 ? c.rope_freq_scale : 1.0f;
}

}  // namespace

Config Config::from_gguf(const gguf::File& f) {
  Config c;
  const std::string arch(f.get_string("general.architecture"));
  c.arch_name = arch;
  if (arch == "llama") {
    c.arch = Arch::kLlama;
  } else if (arch == "qwen2") {
    c.arch = Arch::kQwen2;
    c.qkv_bias = true;
  } else if (arch == "qwen3") {
    c.arch = Arch::kQwen3;
    c.qk_norm = true;
  } else if (arch == "gemma2") {
    c.arch = Arch::kGemma2;
  } else if (arch == "gemma3") {
    c.arch = Arch::kGemma3;
    c.qk_norm = true;
  } else if (arch == "phi3") {
    c.arch = Arch::kPhi3;
  } else if (arch == "qwen2moe") {
    c.arch = Arch::kQwen2Moe;
    c.qkv_bias = true;
  } else if (arch == "qwen3moe") {
    c.arch = Arch::kQwen3Moe;
    c.qk_norm = true;
  } else {
    fail(f.path(), ": unsupported architecture ", quote(arch),
         " (supported: llama, qwen2, qwen3, gemma2, gemma3, phi3, qwen2moe, qwen3moe)");
  }
  c.rope_mode = c.arch == Arch::kLlama ? ops::RopeMode::kNormal : ops::RopeMode::kNeox;
  c.name = std::string(f.get_string_or("general.name", ""));

  const std::string p = arch + ".";
  constexpr uint64_t kMaxDim = 1u << 20;
  c.n_embd = positive(f, p + "embedding_length", f.get_uint(p + "embedding_length"), kMaxDim);
  c.n_layer = positive(f, p + "block_count", f.get_uint(p + "block_count"), 4096);
  c.n_ff = positive(f, p + "feed_forward_length", f.get_uint(p + "feed_forward_length"), kMaxDim);
  c.n_head = positive(f, p + "attention.head_count", f.get_uint(p + "attention.head_count"), 4096);
  c.n_head_kv = positive(f, p + "attention.head_count_kv",
                         f.get_uint_or(p + "attention.head_count_kv", uint64_t(c.n_head)), 4096);
  c.n_ctx_train = positive(f, p + "context_length", f.get_uint(p + "context_length"), 1u << 24);
  ORK_CHECK(c.n_head % c.n_head_kv == 0, f.path(), ": ", p, "attention.head_count (", c.n_head,
            ") is not a multiple of head_count_kv (", c.n_head_kv, ")");
  const uint64_t default_head = c.n_embd % c.n_head == 0 ? uint64_t(c.n_embd / c.n_head) : 0;
  c.head_dim = positive(f, p + "attention.key_length",
                        f.get_uint_or(p + "attention.key_length", default_head), 65536);
  const uint64_t v_len = f.get_uint_or(p + "attention.value_length", uint64_t(c.head_dim));
  ORK_CHECK(v_len == uint64_t(c.head_dim), f.path(), ": ", p, "attention.value_length (", v_len,
            ") differs from key_length (", c.head_dim, "); not supported");
  ORK_CHECK(c.head_dim % 2 == 0, f.path(), ": head dimension ", c.head_dim, " is odd");
  c.n_rot = positive(f, p + "rope.dimension_count",
                     f.get_uint_or(p + "rope.dimension_count", uint64_t(c.head_dim)),
                     uint64_t(c.head_dim));
  ORK_CHECK(c.n_rot % 2 == 0, f.path(), ": ", p, "rope.dimension_count ", c.n_rot, " is odd");

  c.rms_eps = float(f.get_float_or(p + "attention.layer_norm_rms_epsilon", 1e-5));
  ORK_CHECK(c.rms_eps > 0 && c.rms_eps < 1, f.path(), ": ", p,
            "attention.layer_norm_rms_epsilon = ", c.rms_eps, " is not in (0, 1)");
  c.rope_freq_base = float(f.get_float_or(p + "rope.freq_base", 10000.0));
  ORK_CHECK(std::isfinite(c.rope_freq_base) && c.rope_freq_base > 1, f.path(), ": ", p,
            "rope.freq_base = ", c.rope_freq_base, " must be > 1");
  // llama.cpp: the type defaults to linear; the factor (rope.scaling.factor, or the older
  // rope.scale_linear) to 1; "none" never scales; "yarn" also mixes in extrapolated angles
  // (ext_factor 1); "longrope" scales by the factor tensors only (phi3).
  double scale = 1.0;
  const std::string scaling(f.get_string_or(p + "rope.scaling.type", "linear"));
  if (scaling == "linear" || scaling == "yarn" || scaling == "longrope") {
    scale = f.find(p + "rope.scaling.factor") != nullptr ? f.get_float(p + "rope.scaling.factor")
                                                         : f.get_float_or(p + "rope.scale_linear", 1.0);
    if (scale == 0.0) scale = 1.0;  // llama.cpp reads 0 as "not set"
    c.rope_scaling = scaling == "yarn" ? RopeScaling::kYarn
                                       : scaling == "longrope" ? RopeScaling::kLongrope : RopeScaling::kLinear;
  } else if (scaling == "none") {
    c.rope_scaling = RopeScaling::kNone;
  } else {
    fail(f.path(), ": ", p, "rope.scaling.type ", quote(scaling),
         " is not supported (none, linear, yarn, longrope)");
  }
  c.rope_freq_scale = c.rope_scaling == RopeScaling::kNone ? 1.0f : float(1.0 / scale);
  c.rope_ext_factor = c.rope_scaling == RopeScaling::kYarn ? 1.0f : 0.0f;
  // Llama 3.1-style per-pair frequency factors come from the tensor rope_freqs.weight (bound by
  // Weights), not from a scaling type: a Llama 3.1 GGUF declares no rope.scaling.type.

  // The vocabulary size: token_embd.weight's row count is the truth; vocab_size must agree if set.
  const gguf::TensorInfo& embd = f.tensor("token_embd.weight");
  ORK_CHECK(embd.dims.size() == 2, f.path(), ": token_embd.weight must be 2-D");
  c.n_vocab = positive(f, "token_embd.weight rows", embd.dims[1], 1u << 24);
  const uint64_t vocab_size = f.get_uint_or(p + "vocab_size", uint64_t(c.n_vocab));
  ORK_CHECK(vocab_size == uint64_t(c.n_vocab), f.path(), ": ", p, "vocab_size (", vocab_size,
            ") differs from token_embd.weight rows (", c.n_vocab, ")");
  c.tied_output = f.find_tensor("output.weight") == nullptr;

  c.n_ctx_orig = positive(f, p + "rope.scaling.original_context_length",
                          f.get_uint_or(p + "rope.scaling.original_context_length", uint64_t(c.n_ctx_train)),
                          1u << 24);
  c.rope_attn_factor = float(f.get_float_or(p + "rope.scaling.attn_factor", 1.0));
  ORK_CHECK(std::isfinite(c.rope_attn_factor) && c.rope_attn_factor > 0, f.path(), ": ", p,
            "rope.scaling.attn_factor = ", c.rope_attn_factor, " must be finite and > 0");
  c.attn_scale = 1.0f / std::sqrt(float(c.head_dim));
  if (c.arch == Arch::kGemma2 || c.arch == Arch::kGemma3) read_gemma(f, c);
  read_moe(f, c);
  return c;
}

}  // namespace ork::model
