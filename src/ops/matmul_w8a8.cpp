#include "ops/matmul_w8a8.h"

#include <vector>

#include "core/error.h"
#include "ops/gemm_i8.h"
#include "quant/requant.h"

namespace ork::ops {

void matmul_w8a8(ThreadPool& pool, const float* x, int64_t m, int64_t k, const int8_t* wq,
                 const float* w_scales, int64_t n, float* y) {
  ORK_CHECK(m >= 0 && k >= 0 && n >= 0, "ops::matmul_w8a8: negative shape M=", m, " K=", k, " N=", n);
  ORK_CHECK(k <= kGemmI8MaxK, "ops::matmul_w8a8: K=", k, " exceeds ", kGemmI8MaxK);
  if (m == 0 || n == 0) return;
  thread_local std::vector<int8_t> xq;
  thread_local std::vector<float> sa;
  xq.resize(size_t(m * k));
  sa.resize(size_t(m));
  quant::quantize_rows_i8(x, m, k, xq.data(), sa.data());
  matmul_w8a8_quantized(pool, xq.data(), sa.data(), m, k, wq, w_scales, n, y);
}

void matmul_w8a8_quantized(ThreadPool& pool, const int8_t* xq, const float* sa, int64_t m, int64_t k,
                           const int8_t* wq, const float* w_scales, int64_t n, float* y) {
  ORK_CHECK(m >= 0 && k >= 0 && n >= 0, "ops::matmul_w8a8: negative shape M=", m, " K=", k, " N=", n);
  ORK_CHECK(k <= kGemmI8MaxK, "ops::matmul_w8a8: K=", k, " exceeds ", kGemmI8MaxK);
  if (m == 0 || n == 0) return;
  thread_local std::vector<int32_t> c;
  c.resize(size_t(m * n));
  gemm_i8(&pool, xq, wq, m, n, k, c.data());
  quant::dequantize_i32(c.data(), m, n, sa, w_scales, y);
}

}  // namespace ork::ops
