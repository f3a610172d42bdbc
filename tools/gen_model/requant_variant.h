// ork::gen::write_requant_variant — a copy of a GGUF model with every 2-D tensor (the linears and the
// token embedding) requantized to `type` by ork's reference quantizer (quant/quantize.h), as
// llama-quantize does for a pure Q4_0 / Q8_0 model (ggml's error-minimising search is not used);
// 1-D tensors (norms, biases) and all metadata are copied byte for byte. Used to measure the CPU's
// Q4_0 / Q8_0 of the outlier variants beside the NPU int4 schemes (issue 17).
// Throws ork::Error naming the file or tensor at fault (a row length that is not a whole number of
// the type's blocks). Thread-safe (no shared state).
#pragma once

#include <string>

#include "quant/types.h"

namespace ork::gen {

void write_requant_variant(const std::string& in, const std::string& out, quant::Type type);

}  // namespace ork::gen
