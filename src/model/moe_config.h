// The mixture-of-experts hyper-parameters of Config, with llama.cpp's keys and per-architecture
// rules (src/models/qwen2moe.cpp, qwen3moe.cpp, llama.cpp; build_moe_ffn in src/llama-graph.cpp):
//   qwen3moe  expert_count, expert_used_count, expert_feed_forward_length (default
//             feed_forward_length / expert_used_count); top-k weights normalized to sum 1.
//   qwen2moe  the same keys, plus expert_shared_feed_forward_length (default feed_forward_length)
//             for the shared expert; top-k weights NOT normalized.
//   llama     Mixtral-style when expert_count > 0: every expert feed_forward_length wide (llama.cpp
//             reads no expert_feed_forward_length for llama); top-k weights normalized (= a softmax
//             over the selected experts' logits).
// Gating is a softmax over every expert for all three (llama.cpp hard-codes it there, and ignores
// expert_weights_norm, expert_weights_scale and expert_gating_func for these architectures; so
// does ork). docs/architectures.md has the details.
#pragma once

#include "gguf/file.h"
#include "model/config.h"

namespace ork::model {

// Most experts per layer (llama.cpp's LLAMA_MAX_EXPERTS).
constexpr int64_t kMaxExperts = 1024;

// Sets c.n_expert, n_expert_used, n_ff_exp, n_ff_shexp and moe_norm_weights from f's metadata
// (c.arch, arch_name and n_ff already read). Throws ork::Error naming the key when a MoE
// architecture lacks expert_count/expert_used_count, a count is out of range, a key is a per-layer
// array (not supported), or a dense architecture declares experts.
void read_moe(const gguf::File& f, Config& c);

}  // namespace ork::model
