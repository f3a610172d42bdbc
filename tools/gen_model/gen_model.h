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
  // "llama" | "qwen2" (q/k/v biases) | "qwen3" (q/k norms) | "gemma2" | "gemma3" | "phi3" |
  // "qwen2moe" (q/k/v biases, experts and a shared expert) | "qwen3moe" (q/k norms, experts);
  // llama with n_expert > 0 is Mixtral-style
  // (gemma: post-attention/post-FFN norms, GeGLU; gemma3 also q/k norms; gemma2 is always tied;
  // phi3: fused attn_qkv.weight when fused_qkv, ffn_up.weight of 2·n_ff rows, no ffn_gate)
  std::string arch = "llama";
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
  // > 0 → rope.scaling.type = "yarn", rope.scaling.factor = yarn_factor and
  // rope.scaling.original_context_length = yarn_orig_ctx (as convert_hf_to_gguf.py writes YaRN).
  float yarn_factor = 0.0f;
  int yarn_orig_ctx = 0;
  // RoPE frequency factors, written as the tensor rope_freqs.weight (f32, {head_dim/2}; pair i's angle
  // is divided by factor i, in every layer): "" → none; "llama3" → Llama 3.1's factors from the
  // llama3_* fields and rope_freq_base (llama3_rope_factors); "random" → log-uniform in [1/8, 8]
  // from the seed. No metadata key goes with them (Llama 3.1 GGUFs declare no rope.scaling.type).
  std::string rope_freqs = "";
  float llama3_factor = 8.0f;            // rope_scaling.factor (low-frequency pairs are slowed by it)
  float llama3_low_freq_factor = 1.0f;   // rope_scaling.low_freq_factor
  float llama3_high_freq_factor = 4.0f;  // rope_scaling.high_freq_factor (> low_freq_factor)
  int llama3_original_ctx = 8192;        // rope_scaling.original_max_position_embeddings
  float rms_eps = 1e-5f;
  int n_rot = 0;                // 0 → head_dim; else rope.dimension_count (partial rotary)
  // gemma: <arch>.attention.sliding_window (0 → not written; gemma2 then means llama.cpp's 4096),
  // .attention.sliding_window_pattern (0 → not written: 2 for gemma2, 6 for gemma3) and
  // .rope.freq_base_swa (0 → not written).
  int sliding_window = 0;
  int swa_pattern = 0;
  float rope_freq_base_swa = 0.0f;
  float attn_softcap = 0.0f;    // gemma2: attn_logit_softcapping (0 → not written: 50)
  float final_softcap = 0.0f;   // gemma2/3: final_logit_softcapping (0 → not written: 30 / none)
  bool fused_qkv = true;        // phi3: attn_qkv.weight (false: attn_q/k/v.weight)
  // phi3 LongRoPE: "" → none; "random" → rope_factors_long.weight / rope_factors_short.weight
  // (f32, {n_rot/2}; long log-uniform in [1, 16), short in [1, 2)), with
  // rope.scaling.original_context_length = longrope_orig_ctx and rope.scaling.attn_factor =
  // sqrt(1 + ln(n_ctx/orig)/ln(orig)) as convert_hf_to_gguf.py writes it.
  std::string longrope = "";
  int longrope_orig_ctx = 64;
  bool tied_output = false;        // true → no output.weight (the head reuses token_embd)
  quant::Type weight_type = quant::Type::F32;  // every 2-D weight; norms and biases stay F32
  std::string tokenizer = "gpt2";  // "gpt2" (byte-level BPE) | "llama" (SentencePiece style)
  std::string pre = "";            // tokenizer.ggml.pre; "" → "llama-bpe" / "qwen2" / "default"
  uint64_t seed = 1;
  // 0 → defaults: matmul weights 1/sqrt(fan_in); token_embd 1 (2/sqrt(n_embd) when tied);
  // output.weight 2/sqrt(n_embd) (logits of std ≈ 2 after the final RMSNorm, not flat).
  // > 0 → this standard deviation for every 2-D weight.
  float weight_std = 0.0f;
  // Perturbation, for draft models of speculative decoding: > 0 → every 2-D weight (embedding,
  // matmuls, output) gets independent uniform noise of noise_std × its own standard deviation, drawn
  // from noise_seed (and the tensor's name). The same seed and noise_std = 0 give the same model.
  float noise_std = 0.0f;
  uint64_t noise_seed = 1;
  // Layers >= scale_layers_from have their attn_output and ffn_down weights multiplied by
  // layer_scale (1: unchanged): what those layers add to the residual stream shrinks, so the model
  // stays close to its first scale_layers_from layers — which, with the same seed, are exactly the
  // model of that many layers (values depend on the seed and the tensor name only): a cheaper draft
  // whose acceptance the scale tunes.
  int scale_layers_from = 0;
  float layer_scale = 1.0f;
  // Mixture of experts (llama, qwen2moe, qwen3moe; the MoE archs need n_expert > 0): every layer's
  // FFN is n_expert experts in 3-D tensors ffn_{gate,up,down}_exps, a router ffn_gate_inp (always
  // f32, as llama.cpp's quantizer leaves it), top-n_expert_used routing.
  int n_expert = 0;
  int n_expert_used = 0;
  int n_ff_exp = 0;    // qwen*moe: expert_feed_forward_length when > 0 (else llama.cpp's default
                       // n_ff / n_expert_used); llama's experts are always n_ff wide
  int n_ff_shexp = 0;  // qwen2moe: expert_shared_feed_forward_length when > 0 (else n_ff)
  // > 0: skewed routing. Every token embedding gets a shared direction d (from the seed), and each
  // layer's router adds s · 2^(−rank) · d to its experts' rows, ranks a per-layer permutation: the
  // router logits of the expert of rank r rise by about s · 2^(−r), so a few experts per layer take
  // most tokens (for the prefetch predictor's tests). 0: the router is random like any matmul.
  float routing_skew = 0.0f;
};

// The names preset() accepts.
std::vector<std::string_view> preset_names();

// A named spec: "default" (≈1.4 MB: n_vocab 1024, n_embd 128, 4 layers, gpt2 tokenizer, q8_0),
// "tiny-llama", "tiny-qwen2", "tiny-qwen3", "tiny-spm" (llama tokenizer), "tiny-q4k" (q4_K weights,
// n_embd 256), "tiny-gemma2", "tiny-gemma3", "tiny-phi3" (3 layers, windows of 8 keys on gemma's
// sliding-window layers; phi3 with LongRoPE factors), "tiny-mixtral", "tiny-qwen2moe",
// "tiny-qwen3moe" (8 experts, 2 used; qwen2moe with a shared expert). Throws ork::Error listing the names when `name` is unknown.
ModelSpec preset(std::string_view name);

// Llama 3.1's ("llama3" rope scaling) frequency factors for the head_dim/2 rotated pairs, as
// llama.cpp's convert_hf_to_gguf.py computes rope_freqs.weight: with freq_i = base^(−2i/head_dim) and
// wavelength λ_i = 2π/freq_i, factor_i = 1 when λ_i < original_ctx/high_freq_factor, `factor` when
// λ_i > original_ctx/low_freq_factor, else 1/((1−s)/factor + s) with
// s = (original_ctx/λ_i − low_freq_factor)/(high_freq_factor − low_freq_factor). Computed in double.
// Throws ork::Error for a head_dim that is not positive and even, or parameters that are not
// positive (and high_freq_factor > low_freq_factor).
std::vector<float> llama3_rope_factors(int head_dim, float freq_base, float factor, float low_freq_factor,
                                       float high_freq_factor, int original_ctx);

// Rows of one expert's gate/up (0 when the spec has no experts), and of the shared expert's.
int n_ff_exp_of(const ModelSpec& spec);
int n_ff_shexp_of(const ModelSpec& spec);

// Effective head dimension of a spec (head_dim, or n_embd / n_head when 0).
int head_dim_of(const ModelSpec& spec);
// Rotated dimensions per head (n_rot, or head_dim when 0).
int n_rot_of(const ModelSpec& spec);

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
