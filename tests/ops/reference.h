// Naive scalar references (double accumulation) and test-data helpers for the ops tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "quant/types.h"

namespace ork::ops::testing {

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// Quantizes random rows (N rows of K) to `type`; returns the bytes and the decoded f32 rows.
inline void make_weight(quant::Type type, int64_t n, int64_t k, uint32_t seed, std::vector<uint8_t>& bytes,
                 std::vector<float>& decoded) {
  const quant::TypeTraits& tt = quant::traits(type);
  const int64_t rb = quant::row_bytes(type, k);
  const std::vector<float> src = random_floats(size_t(n * k), seed);
  bytes.assign(size_t(n * rb), 0);
  decoded.assign(size_t(n * k), 0.0f);
  for (int64_t r = 0; r < n; ++r) {
    tt.quantize(src.data() + r * k, bytes.data() + r * rb, k);
    tt.decode(bytes.data() + r * rb, decoded.data() + r * k, k);
  }
}

inline bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// y[i][j] = Σ_k x[i][k]·w[j][k] in double; also Σ |x||w| per output (for error bounds).
inline void ref_matmul(const float* x, int64_t m, int64_t k, const float* w, int64_t n,
                       std::vector<double>& y, std::vector<double>& abs_sum) {
  y.assign(size_t(m * n), 0.0);
  abs_sum.assign(size_t(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0.0, a = 0.0;
      for (int64_t t = 0; t < k; ++t) {
        const double p = double(x[i * k + t]) * double(w[j * k + t]);
        s += p;
        a += std::fabs(p);
      }
      y[size_t(i * n + j)] = s;
      abs_sum[size_t(i * n + j)] = a;
    }
}

// Bound on the f32 error of an 8-lane dot product of length k against Σ|x||w|.
inline double dot_tolerance(int64_t k, double abs_sum) {
  return double(k / 8 + 8) * 1.2e-7 * abs_sum + 1e-30;
}

}  // namespace ork::ops::testing
