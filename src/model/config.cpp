#include "model/config.h"

#include <cmath>

#include "core/error.h"
#include "core/quote.h"

namespace ork::model {

const char* arch_name(Arch a) {
  switch (a) {
    case Arch::kLlama: return "llama";
    case Arch::kQwen2: return "qwen2";
    case Arch::kQwen3: return "qwen3";
  }
  return "?";
}

namespace {

int64_t positive(const gguf::File& f, const std::string& key, uint64_t v, uint64_t max) {
  ORK_CHECK(v >= 1 && v <= max, f.path(), ": ", key, " = ", v, " is out of range [1, ", max, "]");
  return int64_t(v);
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
  } else {
    fail(f.path(), ": unsupported architecture ", quote(arch), " (supported: llama, qwen2, qwen3)");
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
  double scale = 1.0;
  const std::string scaling(f.get_string_or(p + "rope.scaling.type", "none"));
  if (scaling == "linear") {
    scale = f.get_float(p + "rope.scaling.factor");
  } else if (scaling == "none" || scaling.empty()) {
    scale = f.get_float_or(p + "rope.scale_linear", 1.0);
  } else {
    fail(f.path(), ": ", p, "rope.scaling.type ", quote(scaling), " is not supported (none, linear)");
  }
  ORK_CHECK(std::isfinite(scale) && scale > 0, f.path(), ": rope scaling factor ", scale,
            " must be > 0");
  c.rope_freq_scale = float(1.0 / scale);
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
  return c;
}

}  // namespace ork::model
