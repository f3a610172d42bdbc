// The int8 activations every w8a8 / w4a8 path feeds its integer matmul (the NPU path, the CPU int8
// and int4 paths), made in one pass per row: each row is checked finite, copied into a row buffer,
// rotated by the block-Hadamard transform of int8_rotation_block(k) (hadamard.h) and quantized per
// row by quantize_rows_i8's rule (requant.h).
//
// Bit-identical to quantize_rows_i8(rotate_for_int8(x, m, k, buf), m, k, q, scales) — that two-step
// form is the reference (tests/quant/quantize_activations_test.cpp) — without writing and re-reading
// a rotated m × k f32 copy: one read of x, one write of the codes.
// Thread-safe on distinct outputs and row buffers.
#pragma once

#include <cstdint>
#include <vector>

namespace ork::quant {

// x: m rows of k f32 (row stride k); q: m × k int8; scales: m floats; row: scratch, resized to k.
// Returns -1, or the flat index r·k + c of the first non-finite element of x (the outputs are then
// unspecified): the caller names the tensor in its error (model/non_finite.h).
int64_t quantize_activations_i8(const float* x, int64_t m, int64_t k, int8_t* q, float* scales,
                                std::vector<float>& row);

}  // namespace ork::quant
