// `--npu-wtype i8|i4|auto`: the device form of a model's linear weights on the NPU (or simulator).
//   i8    int8 per output row (weights/packed.h), the default;
//   i4    int4 with a scale per row and group of 32 columns, W4A8 by splitting on the device
//         (weights/packed_int4.h, runtime/npu_matmul.h): half the device bytes;
//   auto  i4 when most of the model's linear weight elements come from a 4- or 5-bit GGUF type
//         (Q4_0, Q4_1, Q4_K, Q5_0, Q5_1, Q5_K, IQ4_NL, IQ4_XS), i8 otherwise.
// Pure functions, thread-safe.
#pragma once

#include <string>

#include "model/weights.h"
#include "npu/layout.h"

namespace ork::runtime {

enum class NpuWtype { kI8, kI4, kAuto };

// "i8" | "i4" | "auto"; ork::Error naming the text otherwise.
NpuWtype parse_npu_wtype(const std::string& text);
const char* npu_wtype_name(NpuWtype t);

// Whether GGUF type `t` stores 4 or 5 bits per weight (the list above).
bool is_4_or_5_bit(quant::Type t);

// kI8 or kI4 for `weights` (auto decided by element counts of the linear weights).
npu::Dtype resolve_npu_wtype(NpuWtype t, const model::Weights& weights);

}  // namespace ork::runtime
