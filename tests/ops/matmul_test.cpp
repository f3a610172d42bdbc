#include "ops/matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "ops/reference.h"

namespace ork::ops {
namespace {

using testing::bit_equal;
using testing::make_weight;
using testing::random_floats;

struct Shape {
  int64_t m, k, n;
};

// Every type ork can decode.
std::vector<quant::Type> supported_types() {
  std::vector<quant::Type> out;
  for (uint32_t id = 0; id < 64; ++id)
    if (quant::is_supported(id)) out.push_back(quant::Type(id));
  return out;
}

// Shapes with K a multiple of `bs`: odd M and N, 1, tails of the 4-row kernel and the 8 lanes.
std::vector<Shape> shapes_for(int64_t bs) {
  if (bs == 1)
    return {{1, 1, 1}, {1, 3, 5}, {2, 7, 4}, {3, 8, 9}, {5, 9, 13}, {1, 33, 67}, {17, 100, 6},
            {40, 64, 67}, {1, 1000, 70}, {33, 17, 129}};
  return {{1, bs, 1}, {1, bs, 7}, {3, 2 * bs, 5}, {17, bs, 13}, {1, 3 * bs, 67}, {40, 2 * bs, 9},
          {2, 5 * bs, 70}};
}

TEST(Matmul, MatchesReferenceForEveryType) {
  ThreadPool pool(3);
  const std::vector<quant::Type> types = supported_types();
  ASSERT_FALSE(types.empty());
  for (quant::Type type : types) {
    const quant::TypeTraits& tt = quant::traits(type);
    for (const Shape& s : shapes_for(tt.block_size)) {
      SCOPED_TRACE(::testing::Message() << tt.name << " M=" << s.m << " K=" << s.k << " N=" << s.n);
      std::vector<uint8_t> w;
      std::vector<float> wf;
      make_weight(type, s.n, s.k, uint32_t(s.k * 31 + s.n), w, wf);
      const std::vector<float> x = random_floats(size_t(s.m * s.k), uint32_t(s.m + 7));
      std::vector<float> y(size_t(s.m * s.n), NAN);
      matmul(pool, x.data(), s.m, s.k, w.data(), type, s.n, y.data());
      std::vector<double> ref, abs_sum;
      testing::ref_matmul(x.data(), s.m, s.k, wf.data(), s.n, ref, abs_sum);
      for (size_t i = 0; i < y.size(); ++i)
        ASSERT_NEAR(y[i], ref[i], testing::dot_tolerance(s.k, abs_sum[i])) << "output " << i;
    }
  }
}

TEST(Matmul, ThreadCountAndBatchIndependent) {
  ThreadPool one(1), three(3);
  // (K=256, N=77): two tiles, so X rows are split across threads too; (2048, 200): 25 tiles.
  const Shape shapes[] = {{1, 256, 77}, {5, 256, 77}, {40, 256, 77}, {1, 2048, 200}, {40, 2048, 200}};
  for (quant::Type type : {quant::Type::F32, quant::Type::Q4_K, quant::Type::Q8_0}) {
    for (const Shape& s : shapes) {
      SCOPED_TRACE(::testing::Message() << quant::traits(type).name << " M=" << s.m << " K=" << s.k
                                        << " N=" << s.n);
      std::vector<uint8_t> w;
      std::vector<float> wf;
      make_weight(type, s.n, s.k, 3, w, wf);
      const std::vector<float> x = random_floats(size_t(s.m * s.k), 11);
      std::vector<float> y1(size_t(s.m * s.n)), y3(size_t(s.m * s.n)), rows(size_t(s.m * s.n));
      matmul(one, x.data(), s.m, s.k, w.data(), type, s.n, y1.data());
      matmul(three, x.data(), s.m, s.k, w.data(), type, s.n, y3.data());
      EXPECT_TRUE(bit_equal(y1, y3));
      for (int64_t i = 0; i < s.m; ++i)  // one row at a time, as decode does
        matmul(three, x.data() + i * s.k, 1, s.k, w.data(), type, s.n, rows.data() + i * s.n);
      EXPECT_TRUE(bit_equal(y1, rows));
    }
  }
}

TEST(Matmul, MisalignedF32WeightGivesSameResult) {
  ThreadPool pool(2);
  const int64_t m = 3, k = 19, n = 10;
  const std::vector<float> wf = random_floats(size_t(n * k), 5);
  const std::vector<float> x = random_floats(size_t(m * k), 6);
  std::vector<uint8_t> shifted(wf.size() * sizeof(float) + 1);
  std::memcpy(shifted.data() + 1, wf.data(), wf.size() * sizeof(float));
  std::vector<float> a(size_t(m * n)), b(size_t(m * n));
  matmul(pool, x.data(), m, k, wf.data(), quant::Type::F32, n, a.data());
  matmul(pool, x.data(), m, k, shifted.data() + 1, quant::Type::F32, n, b.data());
  EXPECT_TRUE(bit_equal(a, b));
}

TEST(Matmul, EdgeShapesAndErrors) {
  ThreadPool pool(2);
  std::vector<float> y(6, 1.0f);
  matmul(pool, nullptr, 2, 0, nullptr, quant::Type::Q4_0, 3, y.data());  // K = 0: zeros
  for (float v : y) EXPECT_EQ(v, 0.0f);
  matmul(pool, nullptr, 0, 32, nullptr, quant::Type::Q4_0, 3, nullptr);  // nothing to do
  std::vector<float> x(33), w(33 * 2);
  EXPECT_THROW(matmul(pool, x.data(), 1, 33, w.data(), quant::Type::Q4_0, 2, y.data()), Error);
  EXPECT_THROW(matmul(pool, x.data(), -1, 33, w.data(), quant::Type::F32, 2, y.data()), Error);
}

}  // namespace
}  // namespace ork::ops
