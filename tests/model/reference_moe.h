// The float64 reference of a mixture-of-experts FFN (qwen2moe, qwen3moe, Mixtral-style llama), for
// reference_forward.cpp: written from llama.cpp's build_moe_ffn (src/llama-graph.cpp) and qwen2moe's
// shared expert, sharing no code with the engine (its own top-k, softmax and weight rules):
//   p = softmax(h·Routerᵀ) over every expert; the k largest (equal p: the lower index first);
//   w = p of those, / Σ w (clamped at 6.103515625e-5) unless the arch is qwen2moe;
//   y = Σ_j w_j · Down_j(silu(Gate_j h) ⊙ Up_j h)  [+ sigmoid(h·g_sh) · Down_sh(silu(Gate_sh h) ⊙ Up_sh h)]
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/file.h"

namespace ork::testing {

class ReferenceMoe {
 public:
  // Layer `layer`'s expert tensors of f, decoded to double. arch: general.architecture.
  ReferenceMoe(const gguf::File& f, const std::string& arch, int64_t layer);
  // The FFN branch for the normalized input h [n_embd].
  std::vector<double> apply(const std::vector<double>& h) const;
  // The experts apply() picked for h, by descending probability.
  std::vector<int64_t> route(const std::vector<double>& h, std::vector<double>* weights = nullptr) const;

 private:
  int64_t n_embd_ = 0, n_expert_ = 0, n_used_ = 0, n_ff_ = 0, n_sh_ = 0;
  bool norm_ = false;
  std::vector<double> router_, gate_, up_, down_;  // router [X][E]; gate/up [X][F][E]; down [X][E][F]
  std::vector<double> sh_inp_, sh_gate_, sh_up_, sh_down_;
};

}  // namespace ork::testing
