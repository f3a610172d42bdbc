#include "ops/softmax.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/error.h"
#include "ops/reference.h"

namespace ork::ops {
namespace {

TEST(Softmax, MatchesReference) {
  for (int64_t n : {1, 2, 3, 8, 9, 100, 1023, 32000}) {
    for (float spread : {1.0f, 30.0f}) {
      std::vector<float> x = testing::random_floats(size_t(n), uint32_t(n), -spread, spread);
      const std::vector<float> in = x;
      softmax(x.data(), n);
      double mx = -INFINITY, sum = 0.0;
      for (float v : in) mx = std::max(mx, double(v));
      for (float v : in) sum += std::exp(double(v) - mx);
      double total = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        const double ref = std::exp(double(in[size_t(i)]) - mx) / sum;
        // expf's argument x − max is rounded to f32 first: relative error up to |x − max|·2⁻²⁴.
        const double tol = ref * (1e-6 + std::fabs(double(in[size_t(i)]) - mx) * 1.2e-7) + 1e-37;
        ASSERT_NEAR(x[size_t(i)], ref, tol) << "n=" << n << " i=" << i;
        total += x[size_t(i)];
      }
      EXPECT_NEAR(total, 1.0, 1e-5);
    }
  }
}

TEST(Softmax, LargeAndMaskedValues) {
  const float ninf = -std::numeric_limits<float>::infinity();
  std::vector<float> x = {1000.0f, 1000.0f, ninf, 999.0f};
  softmax(x.data(), 4);
  const double e = std::exp(-1.0);
  EXPECT_NEAR(x[0], 1.0 / (2.0 + e), 1e-6);
  EXPECT_NEAR(x[1], 1.0 / (2.0 + e), 1e-6);
  EXPECT_EQ(x[2], 0.0f);
  EXPECT_NEAR(x[3], e / (2.0 + e), 1e-6);
  std::vector<float> one = {-5.0f};
  softmax(one.data(), 1);
  EXPECT_EQ(one[0], 1.0f);
  EXPECT_THROW(softmax(one.data(), 0), Error);
}

// The same bits on every ISA (the SSE and AVX2 clones and AVX-512 builds of x86-64 gave these, and
// the aarch64 build under qemu must): 19 values, so the last group of eight is a padded one, with
// one −inf.
TEST(Softmax, GivesTheSameBitsOnEveryIsa) {
  std::vector<float> x(19);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(std::sin(double(i) * 1.7) * 9.0 - double(i) * 0.25);
  x[5] = -std::numeric_limits<float>::infinity();
  softmax(x.data(), int64_t(x.size()));
  const uint32_t want[19] = {0x391d9c87, 0x3f614801, 0x37195ea1, 0x3292bf54, 0x3b9ab065, 0x00000000, 0x33846834,
                             0x33d7307a, 0x3d3e12da, 0x3a139986, 0x31141a75, 0x3628af03, 0x3d77ea97, 0x3613202c,
                             0x3046762e, 0x38bbb14d, 0x3bf69f1a, 0x323d52d6, 0x31233e3b};
  for (size_t i = 0; i < x.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &x[i], sizeof bits);
    EXPECT_EQ(bits, want[i]) << "element " << i;
  }
}

}  // namespace
}  // namespace ork::ops
