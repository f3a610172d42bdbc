// A float64 reference forward pass of llama, qwen2, qwen3, gemma2, gemma3, phi3 and the MoE archs (qwen2moe,
// qwen3moe, Mixtral-style llama: reference_moe.h), written from the
// equations (and llama.cpp's src/models/<arch>.cpp for what each architecture does) for the tests. It
// shares no code with the engine's forward pass: it reads the raw metadata keys and tensors itself
// and does every step in double precision. RoPE angles are pos·scale·base^(−2i/n_rot), divided by
// rope_freqs.weight[i] (or phi3's rope_factors_long/short) when the file has that tensor, cos/sin
// multiplied by rope.scaling.attn_factor.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace ork::testing {

// Logits [tokens.size()][n_vocab] of every position of `tokens`, evaluated from position 0.
// n_ctx: the context the engine runs with (phi3 takes rope_factors_long when it exceeds
// rope.scaling.original_context_length, else the short ones); 0 → tokens.size().
// kv_type: "f32" (K and V exact), or "f16" / "q8_0": each position's K (after RoPE) and V rounded
// as that KV cache stores them (reference_kv_rounding.h) before attention reads them.
std::vector<std::vector<double>> reference_logits(const std::string& gguf_path,
                                                  const std::vector<int32_t>& tokens, int64_t n_ctx = 0,
                                                  const std::string& kv_type = "f32");

// max |a - b| over max |b|: the error of the logits a (b.size() of them) relative to b's scale.
inline double normalized_error(const float* a, const std::vector<double>& b) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    err = std::max(err, std::fabs(double(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return err / std::max(scale, 1e-30);
}

}  // namespace ork::testing
