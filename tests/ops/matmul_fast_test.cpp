// ops::matmul in MatmulMode::kFast on every ISA: against the double product of the real inputs with
// the error bound of the activation format, and independent of threads, tiling and M.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "ops/matmul.h"
#include "ops/reference.h"

namespace ork::ops {
namespace {

using testing::bit_equal;
using testing::make_weight;
using testing::random_floats;

const quant::Type kFastTypes[] = {quant::Type::Q8_0, quant::Type::Q4_0, quant::Type::Q4_K,
                                  quant::Type::Q6_K, quant::Type::F16};

TEST(MatmulFast, HasFastPath) {
  for (quant::Type t : kFastTypes) EXPECT_TRUE(has_fast_path(t)) << quant::type_name(uint32_t(t));
  EXPECT_FALSE(has_fast_path(quant::Type::F32));
  EXPECT_FALSE(has_fast_path(quant::Type::Q5_K));
}

// |y − x·w| <= Σ_i |w_i|·|x_i − x̂_i| (x̂: the quantized activations, |x − x̂| <= d_block/2)
// + the f32 accumulation bound of the kernels.
TEST(MatmulFast, WithinActivationRoundingBoundOnEveryIsa) {
  ThreadPool pool(3);
  for (Isa isa : supported_isas()) {
    for (quant::Type type : kFastTypes) {
      const bool k_format = type == quant::Type::Q4_K || type == quant::Type::Q6_K;
      const int64_t bs = type == quant::Type::F16 ? 32 : k_format ? 256 : 32;  // activation block
      for (auto [m, kb, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {1, 3, 67}, {3, 2, 5},
                              {17, 1, 13}, {40, 2, 9}, {9, 4, 70}}) {
        const int64_t k = kb * bs;
        SCOPED_TRACE(::testing::Message() << isa_name(isa) << " " << quant::type_name(uint32_t(type))
                                          << " M=" << m << " K=" << k << " N=" << n);
        std::vector<uint8_t> w;
        std::vector<float> wf;
        make_weight(type, n, k, uint32_t(k + n), w, wf);
        const std::vector<float> x = random_floats(size_t(m * k), uint32_t(m + 5), -2.0f, 2.0f);
        std::vector<float> y(size_t(m * n), NAN);
        matmul(pool, x.data(), m, k, w.data(), type, n, y.data(), MatmulMode::kFast, isa);
        std::vector<double> ref, abs_sum;
        testing::ref_matmul(x.data(), m, k, wf.data(), n, ref, abs_sum);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double rounding = 0;  // Σ_blocks (d_block / 2) · Σ|w| over the block
            if (type != quant::Type::F16) {
              for (int64_t b = 0; b < k / bs; ++b) {
                double amax = 0, wabs = 0;
                for (int64_t e = b * bs; e < (b + 1) * bs; ++e) {
                  amax = std::max(amax, double(std::fabs(x[size_t(i * k + e)])));
                  wabs += std::fabs(wf[size_t(j * k + e)]);
                }
                rounding += amax / 127.0 / 2.0 * 1.0001 * wabs;
              }
            }
            // f32 part: as the kernel test, with 3·Σ|w||x| covering the formats' min terms.
            const double tol = rounding + double(k / 8 + k / 32 + 16) * 1.2e-7 * 3 * abs_sum[size_t(i * n + j)] + 1e-30;
            ASSERT_NEAR(y[size_t(i * n + j)], ref[size_t(i * n + j)], tol) << "output " << i << "," << j;
          }
      }
    }
  }
}

TEST(MatmulFast, ThreadCountAndBatchIndependent) {
  ThreadPool one(1), three(3);
  for (quant::Type type : kFastTypes) {
    for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{5, 256, 77}, {40, 512, 77}, {33, 2048, 200}}) {
      std::vector<uint8_t> w;
      std::vector<float> wf;
      make_weight(type, n, k, 9, w, wf);
      const std::vector<float> x = random_floats(size_t(m * k), 10);
      std::vector<float> a(size_t(m * n)), b(size_t(m * n)), rows(size_t(m * n));
      matmul(one, x.data(), m, k, w.data(), type, n, a.data(), MatmulMode::kFast);
      matmul(three, x.data(), m, k, w.data(), type, n, b.data(), MatmulMode::kFast);
      for (int64_t i = 0; i < m; ++i)
        matmul(three, x.data() + i * k, 1, k, w.data(), type, n, rows.data() + i * n, MatmulMode::kFast);
      EXPECT_TRUE(bit_equal(a, b)) << quant::type_name(uint32_t(type)) << " M=" << m;
      EXPECT_TRUE(bit_equal(a, rows)) << quant::type_name(uint32_t(type)) << " M=" << m;
    }
  }
}

// f16 keeps f32 activations and vec::dot's order: the fast path equals the exact one on x86-64 (the
// exact path is compiled without FMA there; on aarch64 GCC contracts it, so only near-equality).
TEST(MatmulFast, F16EqualsExactPath) {
  ThreadPool pool(2);
  const int64_t m = 3, k = 203, n = 19;
  std::vector<uint8_t> w;
  std::vector<float> wf;
  make_weight(quant::Type::F16, n, k, 21, w, wf);
  const std::vector<float> x = random_floats(size_t(m * k), 22);
  std::vector<float> exact(size_t(m * n)), fast(size_t(m * n));
  matmul(pool, x.data(), m, k, w.data(), quant::Type::F16, n, exact.data());
  for (Isa isa : supported_isas()) {
    matmul(pool, x.data(), m, k, w.data(), quant::Type::F16, n, fast.data(), MatmulMode::kFast, isa);
#if defined(__x86_64__)
    EXPECT_TRUE(bit_equal(exact, fast)) << isa_name(isa);
#else
    for (size_t i = 0; i < exact.size(); ++i) EXPECT_NEAR(exact[i], fast[i], 1e-5) << isa_name(isa);
#endif
  }
}

TEST(MatmulFast, OtherTypesRunTheExactPath) {
  ThreadPool pool(2);
  const int64_t m = 2, k = 256, n = 9;
  for (quant::Type type : {quant::Type::F32, quant::Type::Q5_K, quant::Type::Q4_1}) {
    std::vector<uint8_t> w;
    std::vector<float> wf;
    make_weight(type, n, k, 5, w, wf);
    const std::vector<float> x = random_floats(size_t(m * k), 6);
    std::vector<float> exact(size_t(m * n)), fast(size_t(m * n));
    matmul(pool, x.data(), m, k, w.data(), type, n, exact.data());
    matmul(pool, x.data(), m, k, w.data(), type, n, fast.data(), MatmulMode::kFast);
    EXPECT_TRUE(bit_equal(exact, fast)) << quant::type_name(uint32_t(type));
  }
}

TEST(MatmulFast, BadShapesThrow) {
  ThreadPool pool(1);
  std::vector<uint8_t> w(64);
  std::vector<float> x(64), y(4);
  EXPECT_THROW(matmul(pool, x.data(), 1, 33, w.data(), quant::Type::Q8_0, 1, y.data(), MatmulMode::kFast),
               Error);
  EXPECT_THROW(matmul(pool, x.data(), -1, 32, w.data(), quant::Type::Q8_0, 1, y.data(), MatmulMode::kFast),
               Error);
}

}  // namespace
}  // namespace ork::ops
