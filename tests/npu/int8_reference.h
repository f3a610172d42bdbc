// Test inputs and the scalar reference for int8 matmuls: C (m × n) = A (m × k) · Bᵀ, B stored n × k,
// int32 accumulation. Shared by the NPU layer's tests.
#pragma once

#include <cstdint>
#include <vector>

namespace ork::npu::testing {

// `count` pseudo-random int8 values from `seed` (a linear congruential generator's top byte).
inline std::vector<int8_t> fill8(int64_t count, uint32_t seed) {
  std::vector<int8_t> v(static_cast<size_t>(count));
  for (auto& e : v) {
    seed = seed * 1664525u + 1013904223u;
    e = int8_t(seed >> 24);
  }
  return v;
}

inline std::vector<int32_t> ref_i8(const std::vector<int8_t>& a, const std::vector<int8_t>& b, int64_t m,
                                   int64_t k, int64_t n) {
  std::vector<int32_t> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int32_t s = 0;
      for (int64_t kk = 0; kk < k; ++kk) s += int32_t(a[size_t(i * k + kk)]) * b[size_t(j * k + kk)];
      c[size_t(i * n + j)] = s;
    }
  return c;
}

}  // namespace ork::npu::testing
