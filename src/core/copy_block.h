// copy_block — writes a dense (rows × cols) block of floats into a row-major matrix whose rows are
// `ld` floats apart, e.g. the columns [n0, n0 + cols) of an (m × n) output: dst = y + n0, ld = n.
// src and dst must not overlap. Pure; thread-safe on disjoint destinations.
#pragma once

#include <cstdint>
#include <cstring>

namespace ork {

inline void copy_block(const float* src, int64_t rows, int64_t cols, float* dst, int64_t ld) {
  for (int64_t r = 0; r < rows; ++r) std::memcpy(dst + r * ld, src + r * cols, size_t(cols) * sizeof(float));
}

}  // namespace ork
