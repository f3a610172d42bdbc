// Low-memory packing of a linear weight: rows are decoded, requantized and tiled in groups of one
// native N block (32 rows for i8, 16 for f16) and placed directly into the packed buffer, so packing
// needs the packed bytes plus a few rows of scratch per thread — no full N×K int8 intermediate.
//
// kI8 output is byte-identical to pack_linear() (same quantization, same layout; tested).
// kF16 output: W decoded to f32, rounded to fp16 (quant::to_f16, RNE) and tiled in the native fp16
// B layout; no scales. Thread-safety: pure; row groups run in parallel on `pool` when given.
#pragma once

#include "core/thread_pool.h"
#include "model/weights.h"
#include "npu/layout.h"
#include "weights/packed.h"

namespace ork::weights {

PackedHost pack_linear_grouped(const model::Linear& w, npu::Dtype dtype, ThreadPool* pool);

}  // namespace ork::weights
