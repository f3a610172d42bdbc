// Test inputs and the scalar references for int4 matmuls: C (m × n) = A (m × k) · Bᵀ, B stored
// n × k, codes in [−8, 7] held as int8_t. Plain loops, no layouts: W4A4 summed exactly in int32;
// W4A8 as int8 activations times int4 weights, summed exactly in int32 (what the split must
// reproduce bit for bit); and the largest |sum| of any K chunk, for overflow checks.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <vector>

namespace ork::npu::testing {

// `count` pseudo-random codes in [lo, hi] from `seed`.
inline std::vector<int8_t> fill_codes(int64_t count, uint32_t seed, int lo, int hi) {
  std::vector<int8_t> v(static_cast<size_t>(count));
  for (auto& e : v) {
    seed = seed * 1664525u + 1013904223u;
    e = int8_t(lo + int((seed >> 8) % uint32_t(hi - lo + 1)));
  }
  return v;
}
inline std::vector<int8_t> fill4(int64_t count, uint32_t seed) { return fill_codes(count, seed, -8, 7); }

// Σ_k a[i][k]·b[j][k] in int32 for any int8-held codes (int4 × int4, or int8 × int4).
inline std::vector<int32_t> ref_dot(const std::vector<int8_t>& a, const std::vector<int8_t>& b, int64_t m,
                                    int64_t k, int64_t n) {
  std::vector<int32_t> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int32_t s = 0;
      for (int64_t t = 0; t < k; ++t) s += int32_t(a[size_t(i * k + t)]) * b[size_t(j * k + t)];
      c[size_t(i * n + j)] = s;
    }
  return c;
}

// The largest |Σ| over K chunks [c·chunk, (c+1)·chunk) of any (row, kernel).
inline int32_t max_chunk_sum(const std::vector<int8_t>& a, const std::vector<int8_t>& b, int64_t m, int64_t k,
                             int64_t n, int64_t chunk) {
  int32_t worst = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t k0 = 0; k0 < k; k0 += chunk) {
        int32_t s = 0;
        for (int64_t t = k0; t < k && t < k0 + chunk; ++t) s += int32_t(a[size_t(i * k + t)]) * b[size_t(j * k + t)];
        if (std::abs(s) > worst) worst = std::abs(s);
      }
  return worst;
}

}  // namespace ork::npu::testing
