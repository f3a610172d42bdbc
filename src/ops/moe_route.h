// Mixture-of-experts routing of one token, as llama.cpp's build_moe_ffn computes it with softmax
// gating (src/llama-graph.cpp): probabilities p = softmax(router logits) over all n_expert experts
// (ops::softmax, ggml's numerics); the k experts of largest p (ggml_argsort_top_k: a descending
// argsort, first k); their weights p[e], and when `normalize`, each divided by their sum clamped
// below at 6.103515625e-5 (the smallest normal f16, as llama.cpp clamps it; with softmax gating the
// top-k sum is at least k / n_expert >= 1/1024, so the clamp never engages here).
// Ties: ggml's CPU argsort is std::sort (not stable), so llama.cpp leaves the order of equal
// probabilities unspecified; here an equal probability goes to the lower expert index first
// (deterministic on every backend). docs/architectures.md.
#pragma once

#include <cstdint>

namespace ork::ops {

// logits [n_expert] (not modified); experts [k] receive the chosen expert indices by descending
// probability, weights [k] their weights. 1 <= k <= n_expert (ork::Error otherwise). Thread-safety: pure.
void moe_route(const float* logits, int64_t n_expert, int64_t k, bool normalize, int32_t* experts,
               float* weights);

}  // namespace ork::ops
