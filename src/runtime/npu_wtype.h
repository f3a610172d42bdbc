// `--npu-wtype i8|i4|i4a4|auto`: the device form of a model's linear weights on the NPU (or simulator).
//   i8    int8 per output row (weights/packed.h), the default;
//   i4    int4 with a scale per row (K chunks of 480), W4A8 by splitting each int8 activation row
//         into two int4 rows on the device (weights/packed_int4.h, runtime/npu_matmul.h): half the
//         device bytes;
//   i4a4  the same int4 weights with the activations rotated and quantized to int4 per row (W4A4:
//         one int4 row per token, half the A bytes and int4 MACs of i4; less accurate, docs/quant.md);
//   auto  i4 when most of the model's linear weight elements come from a 4- or 5-bit GGUF type
//         (Q4_0, Q4_1, Q4_K, Q5_0, Q5_1, Q5_K, IQ4_NL, IQ4_XS), i8 otherwise.
// Pure functions, thread-safe.
#pragma once

#include <string>

#include "model/weights.h"
#include "npu/layout.h"

namespace ork::runtime {

enum class NpuWtype { kI8, kI4, kI4A4, kAuto };

// "i8" | "i4" | "i4a4" | "auto"; ork::Error naming the text otherwise.
NpuWtype parse_npu_wtype(const std::string& text);
const char* npu_wtype_name(NpuWtype t);

// Whether GGUF type `t` stores 4 or 5 bits per weight (the list above).
bool is_4_or_5_bit(quant::Type t);

// kI8 or kI4 for `weights` (auto decided by element counts of the linear weights; i4a4 is kI4).
npu::Dtype resolve_npu_wtype(NpuWtype t, const model::Weights& weights);

// Whether the device's activations are int4 (W4A4: i4a4 only).
inline bool int4_activations(NpuWtype t) { return t == NpuWtype::kI4A4; }

}  // namespace ork::runtime
