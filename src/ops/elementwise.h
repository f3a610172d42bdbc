// Element-wise additions (residual connections and biases).
#pragma once

#include <cstdint>

namespace ork::ops {

// y[i] += x[i] for i < n (n >= 0). x must not partially overlap y. Thread-safety: pure.
void add(float* y, const float* x, int64_t n);

// y[r][j] += bias[j] for every row r < m of an m×n row-major matrix (row stride n).
void add_bias_rows(float* y, const float* bias, int64_t m, int64_t n);

}  // namespace ork::ops
