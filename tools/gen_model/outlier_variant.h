// ork::gen::write_outlier_variant — a copy of a llama-family GGUF model whose float function is
// unchanged but whose normalized activations have outlier channels (issue 17): for each RMSNorm that
// feeds linears (blk.N.attn_norm → attn_q/k/v, blk.N.ffn_norm → ffn_gate/ffn_up, output_norm →
// output when the output is untied), the norm weight of each chosen channel c is multiplied by s and
// column c of each linear it feeds is divided by s. Those tensors are written as F32 (decoded from
// their type, then scaled), every other tensor and all metadata byte for byte.
// Folding the norm weights into the matrices undoes this construction (real models also have
// residual-stream outliers that it does not model); it tests per-token activation quantization.
// Throws ork::Error naming the file, tensor or argument at fault. Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ork::gen {

// The default outlier channels for a model of n_embd: 4 distinct channels (c_i = (37 i + 5) mod n_embd).
std::vector<int64_t> default_outlier_channels(int64_t n_embd);

// Reads `in`, writes the variant to `out` (atomically). s > 0 and finite; channels in [0, n_embd).
void write_outlier_variant(const std::string& in, const std::string& out, float s,
                           const std::vector<int64_t>& channels);

}  // namespace ork::gen
