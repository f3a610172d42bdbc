// Test helpers for the matmul-level accuracy tests (outlier_w8a8_test, outlier_w4a8_test): the
// reference product in double, the exact integer product of quantized codes, and the relative error.
// x: m × k, w: n × k (row-major); results m × n.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace ork::quant::testing {

// y = x wᵀ in double.
inline std::vector<double> f64_matmul(const std::vector<float>& x, const std::vector<float>& w, int64_t m,
                                      int64_t n, int64_t k) {
  std::vector<double> y(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t t = 0; t < k; ++t) s += double(x[size_t(i * k + t)]) * w[size_t(j * k + t)];
      y[size_t(i * n + j)] = s;
    }
  return y;
}

// c = qx qwᵀ in int32, exactly (int8 or int4 codes).
inline std::vector<int32_t> int32_sums(const std::vector<int8_t>& qx, const std::vector<int8_t>& qw, int64_t m,
                                       int64_t n, int64_t k) {
  std::vector<int32_t> c(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int32_t s = 0;
      for (int64_t t = 0; t < k; ++t) s += int32_t(qx[size_t(i * k + t)]) * qw[size_t(j * k + t)];
      c[size_t(i * n + j)] = s;
    }
  return c;
}

// ||y - ref|| / ||ref|| (Frobenius).
inline double rel_error(const std::vector<float>& y, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    num += (double(y[i]) - ref[i]) * (double(y[i]) - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / den);
}

}  // namespace ork::quant::testing
