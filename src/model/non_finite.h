// The forward pass's error for a NaN or ±Inf in a linear layer's input or output: every path (the
// exact f32 path, the 8-bit CPU paths, the NPU) reports it alike, naming the tensor and where —
// the exact path would carry NaN on, the 8-bit paths would quantize it to a plausible number.
// Thread-safe.
#pragma once

#include <cstdint>

#include "model/weights.h"

namespace ork::model {

// Throws ork::Error naming `what` ("input of", "logits of"), w's name, the non-finite `value`, and
// where it is: flat index `at` of rows of `width`, i.e. batch row at / width, element at % width.
[[noreturn]] void fail_non_finite(float value, int64_t at, int64_t width, const char* what, const Linear& w);

// Throws as fail_non_finite when m[rows × width] holds a NaN or Inf.
void check_finite(const float* m, int64_t rows, int64_t width, const char* what, const Linear& w);

}  // namespace ork::model
