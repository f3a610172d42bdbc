#include "quant/requant.h"

#include <cmath>

#include "core/error.h"
#include "core/fp16.h"

namespace ork::quant {
namespace {

void check_shape(int64_t rows, int64_t cols, const char* what) {
  if (rows < 0 || cols < 0) fail(what, ": negative shape ", rows, " x ", cols);
}

// One row of k values → int8 codes and the row's scale (the rule in requant.h).
void quantize_row_i8(const float* x, int64_t k, int8_t* q, float* scale, const char* what,
                     int64_t row) {
  float amax = 0.0f;
  for (int64_t i = 0; i < k; ++i) {
    if (!std::isfinite(x[i])) fail(what, ": row ", row, " column ", i, " is not finite (", x[i], ")");
    const float a = std::fabs(x[i]);
    if (a > amax) amax = a;
  }
  const float s = amax / float(kI8Max);
  *scale = s;
  if (s == 0.0f) {
    for (int64_t i = 0; i < k; ++i) q[i] = 0;
    return;
  }
  for (int64_t i = 0; i < k; ++i) {
    float v = std::round(x[i] / s);
    if (v > float(kI8Max)) v = float(kI8Max);
    if (v < -float(kI8Max)) v = -float(kI8Max);
    q[i] = int8_t(v);
  }
}

void quantize_matrix_i8(const float* x, int64_t rows, int64_t cols, int8_t* q, float* scales,
                        const char* what) {
  check_shape(rows, cols, what);
  for (int64_t r = 0; r < rows; ++r) {
    quantize_row_i8(x + r * cols, cols, q + r * cols, scales + r, what, r);
  }
}

}  // namespace

void quantize_weights_i8(const float* w, int64_t n, int64_t k, int8_t* q, float* scales) {
  quantize_matrix_i8(w, n, k, q, scales, "quantize_weights_i8");
}

void quantize_rows_i8(const float* x, int64_t m, int64_t k, int8_t* q, float* scales) {
  quantize_matrix_i8(x, m, k, q, scales, "quantize_rows_i8");
}

void to_f16(const float* x, int64_t n, uint16_t* out) {
  check_shape(1, n, "to_f16");
  for (int64_t i = 0; i < n; ++i) out[i] = f32_to_f16(x[i]);
}

void dequantize_i32(const int32_t* c, int64_t m, int64_t n, const float* sa, const float* sb,
                    float* y) {
  check_shape(m, n, "dequantize_i32");
  for (int64_t r = 0; r < m; ++r) {
    const float a = sa[r];
    for (int64_t j = 0; j < n; ++j) y[r * n + j] = dequantize_i32_one(c[r * n + j], a, sb[j]);
  }
}

}  // namespace ork::quant
