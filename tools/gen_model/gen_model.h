// ork::gen — the deterministic tiny-model generator: random-weight GGUF models in llama.cpp's tensor
// naming and metadata conventions, for tests, benchmarks and the default model of `ork run`.
//
// The same ModelSpec (including seed) always gives a byte-identical file. Weights are pseudo-random
// (uniform, with the standard deviations described at ModelSpec::weight_std); each tensor's values
// depend only on the seed and the tensor's name. Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "quant/types.h"

namespace ork::gen {

struct ModelSpec {
  std::string arch = "llama";  // "llama" | "qwen2" (q/k/v biases) | "qwen3" (q/k norms)
  int n_vocab = 512;
  int n_embd = 64;
  int n_layer = 2;
  int n_head = 4;
  int n_head_kv = 2;
  int n_ff = 128;
  int n_ctx = 256;   // <arch>.context_length
  int head_dim = 0;  // 0 → n_embd / n_head; otherwise written as <arch>.attention.key_length/value_length
  float rope_freq_base = 10000.0f;
  float rope_scale_linear = 1.0f;  // != 1 → rope.scaling.type = "linear", rope.scaling.factor
  float rms_eps = 1e-5f;
  bool tied_output = false;        // true → no output.weight (the head reuses token_embd)
  quant::Type weight_type = quant::Type::F32;  // every 2-D weight; norms and biases stay F32
  std::string tokenizer = "gpt2";  // "gpt2" (byte-level BPE) | "llama" (SentencePiece style)
  std::string pre = "";            // tokenizer.ggml.pre; "" → "llama-bpe" / "qwen2" / "default"
  uint64_t seed = 1;
  // 0 → defaults: matmul weights 1/sqrt(fan_in); token_embd 1 (2/sqrt(n_embd) when tied);
  // output.weight 2/sqrt(n_embd) (logits of std ≈ 2 after the final RMSNorm, not flat).
  // > 0 → this standard deviation for every 2-D weight.
  float weight_std = 0.0f;
};

// The names preset() accepts.
std::vector<std::string_view> preset_names();

// A named spec: "default" (≈1.4 MB: n_vocab 1024, n_embd 128, 4 layers, gpt2 tokenizer, q8_0),
// "tiny-llama", "tiny-qwen2", "tiny-qwen3", "tiny-spm" (llama tokenizer), "tiny-q4k" (q4_K weights,
// n_embd 256). Throws ork::Error listing the names when `name` is unknown.
ModelSpec preset(std::string_view name);

// Effective head dimension of a spec (head_dim, or n_embd / n_head when 0).
int head_dim_of(const ModelSpec& spec);

// Throws ork::Error naming the field when the spec is inconsistent (unknown arch/tokenizer, counts
// not positive, n_head not a multiple of n_head_kv, rows not whole blocks of weight_type, ...).
void validate(const ModelSpec& spec);

// One tensor of the model as the generator lays it out (dims[0] innermost).
struct TensorSpec {
  std::string name;
  std::vector<uint64_t> dims;
  quant::Type type;
};
// The tensors write_model() writes, in file order.
std::vector<TensorSpec> tensor_specs(const ModelSpec& spec);

// Validates `spec`, generates the model and writes it atomically (gguf::Writer) to `path`.
void write_model(const ModelSpec& spec, const std::string& path);

}  // namespace ork::gen
