#include "ops/matmul_w8a8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "ops/matmul.h"
#include "ops/reference.h"
#include "quant/requant.h"

namespace ork::ops {
namespace {

TEST(MatmulW8A8, EqualsTheSpecifiedPipeline) {
  ThreadPool one(1), three(3);
  const int64_t shapes[][3] = {{1, 1, 1}, {1, 17, 5}, {3, 64, 33}, {40, 100, 7}, {2, 257, 70}};
  for (const auto& s : shapes) {
    const int64_t m = s[0], k = s[1], n = s[2];
    SCOPED_TRACE(::testing::Message() << "M=" << m << " K=" << k << " N=" << n);
    const std::vector<float> x = testing::random_floats(size_t(m * k), uint32_t(k), -3.0f, 3.0f);
    const std::vector<float> w = testing::random_floats(size_t(n * k), uint32_t(n + 1));
    std::vector<int8_t> wq(size_t(n * k));
    std::vector<float> sb(static_cast<size_t>(n));
    quant::quantize_weights_i8(w.data(), n, k, wq.data(), sb.data());

    std::vector<float> y1(size_t(m * n)), y3(size_t(m * n));
    matmul_w8a8(one, x.data(), m, k, wq.data(), sb.data(), n, y1.data());
    matmul_w8a8(three, x.data(), m, k, wq.data(), sb.data(), n, y3.data());
    EXPECT_TRUE(testing::bit_equal(y1, y3));

    // The pipeline written out: per-row int8 X, exact integer products, (float(C)·sa)·sb.
    std::vector<int8_t> xq(size_t(m * k));
    std::vector<float> sa(static_cast<size_t>(m));
    quant::quantize_rows_i8(x.data(), m, k, xq.data(), sa.data());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t acc = 0;
        for (int64_t t = 0; t < k; ++t) acc += int64_t(xq[size_t(i * k + t)]) * wq[size_t(j * k + t)];
        const float ref = (float(acc) * sa[size_t(i)]) * sb[size_t(j)];
        ASSERT_EQ(y1[size_t(i * n + j)], ref) << "output " << i << "," << j;
      }

    // And it approximates the f32 product within int8 rounding (half a step per factor).
    std::vector<double> ref, abs_sum;
    testing::ref_matmul(x.data(), m, k, w.data(), n, ref, abs_sum);
    for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(y1[i], ref[i], 0.01 * abs_sum[i] + 1e-6);
  }
}

TEST(MatmulW8A8, RejectsNonFiniteActivations) {
  ThreadPool pool(1);
  std::vector<float> x = {1.0f, std::numeric_limits<float>::quiet_NaN()}, sb = {1.0f}, y(1);
  std::vector<int8_t> wq = {1, 1};
  EXPECT_THROW(matmul_w8a8(pool, x.data(), 1, 2, wq.data(), sb.data(), 1, y.data()), Error);
}

}  // namespace
}  // namespace ork::ops
