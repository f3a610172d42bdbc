#include "ops/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "ops/reference.h"

namespace ork::ops {
namespace {

// Naive per-query causal attention in double.
std::vector<double> ref_attention(const std::vector<float>& q, int64_t n_q, int64_t pos0,
                                  int64_t n_head, int64_t n_head_kv, int64_t hd,
                                  const std::vector<float>& k, const std::vector<float>& v) {
  std::vector<double> out(size_t(n_q * n_head * hd), 0.0);
  const int64_t group = n_head / n_head_kv;
  for (int64_t t = 0; t < n_q; ++t)
    for (int64_t h = 0; h < n_head; ++h) {
      const int64_t g = h / group, p = pos0 + t;
      std::vector<double> s(size_t(p + 1));
      double mx = -INFINITY;
      for (int64_t j = 0; j <= p; ++j) {
        double d = 0.0;
        for (int64_t e = 0; e < hd; ++e)
          d += double(q[size_t((t * n_head + h) * hd + e)]) * k[size_t((j * n_head_kv + g) * hd + e)];
        s[size_t(j)] = d / std::sqrt(double(hd));
        mx = std::max(mx, s[size_t(j)]);
      }
      double sum = 0.0;
      for (double& x : s) sum += (x = std::exp(x - mx));
      for (int64_t j = 0; j <= p; ++j)
        for (int64_t e = 0; e < hd; ++e)
          out[size_t((t * n_head + h) * hd + e)] +=
              s[size_t(j)] / sum * v[size_t((j * n_head_kv + g) * hd + e)];
    }
  return out;
}

struct Case {
  int64_t n_q, pos0, n_head, n_head_kv, hd;
};

TEST(Attention, MatchesNaiveReferenceWithGqa) {
  const Case cases[] = {{1, 0, 1, 1, 1},  {1, 0, 4, 4, 8},   {1, 9, 4, 2, 8},    {3, 0, 8, 2, 5},
                        {5, 4, 8, 8, 16}, {1, 30, 8, 2, 64}, {7, 13, 16, 4, 33}, {2, 100, 4, 1, 64}};
  ThreadPool one(1), three(3);
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "n_q=" << c.n_q << " pos0=" << c.pos0 << " heads=" << c.n_head
                                      << "/" << c.n_head_kv << " hd=" << c.hd);
    const int64_t n_kv = c.pos0 + c.n_q;
    const std::vector<float> q = testing::random_floats(size_t(c.n_q * c.n_head * c.hd), 1, -2, 2);
    std::vector<float> k = testing::random_floats(size_t((n_kv + 3) * c.n_head_kv * c.hd), 2, -2, 2);
    std::vector<float> v = testing::random_floats(size_t((n_kv + 3) * c.n_head_kv * c.hd), 3);
    // Positions past the last query are never read: poison them.
    for (size_t i = size_t(n_kv * c.n_head_kv * c.hd); i < k.size(); ++i)
      k[i] = v[i] = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> out1(q.size()), out3(q.size());
    attention(one, q.data(), c.n_q, c.pos0, c.n_head, c.n_head_kv, c.hd, k.data(), v.data(),
              out1.data());
    attention(three, q.data(), c.n_q, c.pos0, c.n_head, c.n_head_kv, c.hd, k.data(), v.data(),
              out3.data());
    EXPECT_TRUE(testing::bit_equal(out1, out3));
    const std::vector<double> ref = ref_attention(q, c.n_q, c.pos0, c.n_head, c.n_head_kv, c.hd, k, v);
    for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(out1[i], ref[i], 2e-5) << "element " << i;
  }
}

TEST(Attention, PrefillEqualsTokenByTokenDecode) {
  ThreadPool pool(3);
  const int64_t n_q = 6, n_head = 4, n_head_kv = 2, hd = 16;
  const std::vector<float> q = testing::random_floats(size_t(n_q * n_head * hd), 4);
  const std::vector<float> k = testing::random_floats(size_t(n_q * n_head_kv * hd), 5);
  const std::vector<float> v = testing::random_floats(size_t(n_q * n_head_kv * hd), 6);
  std::vector<float> all(q.size()), steps(q.size());
  attention(pool, q.data(), n_q, 0, n_head, n_head_kv, hd, k.data(), v.data(), all.data());
  for (int64_t t = 0; t < n_q; ++t)
    attention(pool, q.data() + t * n_head * hd, 1, t, n_head, n_head_kv, hd, k.data(), v.data(),
              steps.data() + t * n_head * hd);
  EXPECT_TRUE(testing::bit_equal(all, steps));
}

TEST(Attention, RejectsBadShapes) {
  ThreadPool pool(1);
  std::vector<float> buf(64);
  EXPECT_THROW(attention(pool, buf.data(), 1, 0, 6, 4, 4, buf.data(), buf.data(), buf.data()), Error);
  EXPECT_THROW(attention(pool, buf.data(), 1, 0, 4, 0, 4, buf.data(), buf.data(), buf.data()), Error);
  EXPECT_THROW(attention(pool, buf.data(), 1, -1, 4, 4, 4, buf.data(), buf.data(), buf.data()), Error);
  EXPECT_THROW(attention(pool, buf.data(), 1, 0, 4, 4, 0, buf.data(), buf.data(), buf.data()), Error);
}

}  // namespace
}  // namespace ork::ops
