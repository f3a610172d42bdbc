// model::Config — the hyper-parameters of a decoder model (llama, qwen2, qwen3, gemma2, gemma3, phi3, and
// the mixture-of-experts qwen2moe, qwen3moe and Mixtral-style llama: model/moe_config.h),
// read from GGUF metadata with llama.cpp's keys and defaults (src/models/<arch>.cpp, llama-hparams.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/file.h"
#include "ops/rope.h"

namespace ork::model {

enum class Arch { kLlama, kQwen2, kQwen3, kGemma2, kGemma3, kPhi3, kQwen2Moe, kQwen3Moe };

// <arch>.rope.scaling.type (absent → linear, as llama.cpp reads it).
enum class RopeScaling { kNone, kLinear, kYarn, kLongrope };

struct Config {
  Arch arch = Arch::kLlama;
  std::string arch_name;      // general.architecture
  std::string name;           // general.name (may be empty)
  int64_t n_vocab = 0;
  int64_t n_embd = 0;         // model width
  int64_t n_layer = 0;
  int64_t n_head = 0;         // query heads
  int64_t n_head_kv = 0;      // key/value heads (GQA: n_head is a multiple of it)
  int64_t head_dim = 0;       // per head; n_head * head_dim need not equal n_embd (qwen3)
  int64_t n_ff = 0;           // feed-forward width
  int64_t n_ctx_train = 0;    // context length the model was trained with
  int64_t n_rot = 0;          // rotated dims per head (rope.dimension_count; default head_dim)
  float rms_eps = 1e-5f;
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f;  // 1 / rope.scaling.factor (1 for type none)
  RopeScaling rope_scaling = RopeScaling::kLinear;
  float rope_ext_factor = 0.0f;  // YaRN's extrapolation mix: 1 for yarn, else 0 (llama.cpp's default)
  ops::RopeMode rope_mode = ops::RopeMode::kNormal;  // llama: normal; qwen2/qwen3: NeoX
  bool qkv_bias = false;      // qwen2
  bool qk_norm = false;       // qwen3
  bool tied_output = false;   // output projection shares token_embd.weight

  // Gemma 2/3 and Phi-3 (the defaults leave llama/qwen unchanged). See docs/architectures.md.
  float embd_scale = 1.0f;        // token embeddings are multiplied by it (gemma: sqrtf(n_embd))
  bool embd_scale_inputs = false; // gemma2 scales caller-supplied embeddings too; gemma3 does not
  bool post_norms = false;        // gemma: RMSNorm ⊙ post_attention_norm / post_ffw_norm on each branch
  bool geglu = false;             // gemma: FFN GELU(tanh)(gate) ⊙ up instead of SiLU(gate) ⊙ up
  float attn_scale = 0.0f;        // query scale before q·k (1/sqrt(head_dim) unless the arch says otherwise)
  float attn_softcap = 0.0f;      // > 0: scores s → c·tanh(s/c) before the softmax (gemma2)
  float final_softcap = 0.0f;     // > 0: logits z → c·tanh(z/c) (gemma2; gemma3 when the key is set)
  int64_t n_swa = 0;              // sliding window (keys per query) of the layers marked in layer_swa
  std::vector<uint8_t> layer_swa; // [n_layer]: 1 = sliding-window layer (gemma), else global
  float rope_freq_base_swa = 10000.0f;  // RoPE base of sliding-window layers
  float rope_freq_scale_swa = 1.0f;     // RoPE scale of sliding-window layers
  int64_t n_ctx_orig = 0;         // rope.scaling.original_context_length (default n_ctx_train)
  float rope_attn_factor = 1.0f;  // rope.scaling.attn_factor: cos/sin are multiplied by it (LongRoPE);
                                  // YaRN multiplies them by 1 + 0.1·ln(factor) besides

  // Per layer: the RoPE base and scale, and the window (0 = every earlier key).
  bool is_swa(int64_t il) const { return !layer_swa.empty() && layer_swa[size_t(il)] != 0; }
  float rope_base(int64_t il) const { return is_swa(il) ? rope_freq_base_swa : rope_freq_base; }
  float rope_scale(int64_t il) const { return is_swa(il) ? rope_freq_scale_swa : rope_freq_scale; }
  int64_t window(int64_t il) const { return is_swa(il) ? n_swa : 0; }

  // Mixture of experts (model/moe_config.h; 0 experts: a dense FFN). Every layer of a MoE model is a
  // MoE layer (as in llama.cpp's qwen2moe, qwen3moe and llama with expert_count).
  int64_t n_expert = 0;        // <arch>.expert_count
  int64_t n_expert_used = 0;   // <arch>.expert_used_count: experts each token is routed to (top-k)
  int64_t n_ff_exp = 0;        // rows of one expert's gate/up (expert_feed_forward_length)
  int64_t n_ff_shexp = 0;      // rows of the shared expert's gate/up (qwen2moe), else 0
  bool moe_norm_weights = false;  // the top-k router weights are divided by their sum
  bool is_moe() const { return n_expert > 0; }

  int64_t q_dim() const { return n_head * head_dim; }
  int64_t kv_dim() const { return n_head_kv * head_dim; }

  // Reads and validates the metadata of `file`. Throws ork::Error naming the path and key at fault
  // (missing key, unsupported architecture, inconsistent head counts, ...). `tied_output` is set from
  // the tensor list (no output.weight).
  static Config from_gguf(const gguf::File& file);
};

const char* arch_name(Arch a);

}  // namespace ork::model
