// model::Config — the hyper-parameters of a Llama-family model, read from GGUF metadata.
#pragma once

#include <cstdint>
#include <string>

#include "gguf/file.h"
#include "ops/rope.h"

namespace ork::model {

enum class Arch { kLlama, kQwen2, kQwen3 };

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
  float rope_freq_scale = 1.0f;  // 1 / linear scaling factor
  ops::RopeMode rope_mode = ops::RopeMode::kNormal;  // llama: normal; qwen2/qwen3: NeoX
  bool qkv_bias = false;      // qwen2
  bool qk_norm = false;       // qwen3
  bool tied_output = false;   // output projection shares token_embd.weight

  int64_t q_dim() const { return n_head * head_dim; }
  int64_t kv_dim() const { return n_head_kv * head_dim; }

  // Reads and validates the metadata of `file`. Throws ork::Error naming the path and key at fault
  // (missing key, unsupported architecture, inconsistent head counts, ...). `tied_output` is set from
  // the tensor list (no output.weight).
  static Config from_gguf(const gguf::File& file);
};

const char* arch_name(Arch a);

}  // namespace ork::model
