// ops::attention with AttentionOptions (query scale, score soft-cap, sliding window) against a naive
// double-precision reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "ops/attention.h"
#include "ops/reference.h"

namespace ork::ops {
namespace {

// Keys j in [max(0, p − window + 1), p] (all j <= p for window 0); s = c·tanh(q·k·scale / c).
std::vector<double> ref_attention(const std::vector<float>& q, int64_t n_q, int64_t pos0, int64_t n_head,
                                  int64_t n_head_kv, int64_t hd, const std::vector<float>& k,
                                  const std::vector<float>& v, double scale, double cap, int64_t window) {
  std::vector<double> out(size_t(n_q * n_head * hd), 0.0);
  const int64_t group = n_head / n_head_kv;
  for (int64_t t = 0; t < n_q; ++t) {
    for (int64_t h = 0; h < n_head; ++h) {
      const int64_t g = h / group, p = pos0 + t;
      const int64_t first = window > 0 ? std::max<int64_t>(0, p - window + 1) : 0;
      std::vector<double> s(size_t(p + 1), 0.0);
      double mx = -INFINITY;
      for (int64_t j = first; j <= p; ++j) {
        double d = 0.0;
        for (int64_t e = 0; e < hd; ++e) {
          d += double(q[size_t((t * n_head + h) * hd + e)]) * k[size_t((j * n_head_kv + g) * hd + e)];
        }
        d *= scale;
        if (cap > 0) d = cap * std::tanh(d / cap);
        s[size_t(j)] = d;
        mx = std::max(mx, d);
      }
      double sum = 0.0;
      for (int64_t j = first; j <= p; ++j) sum += (s[size_t(j)] = std::exp(s[size_t(j)] - mx));
      for (int64_t j = first; j <= p; ++j) {
        for (int64_t e = 0; e < hd; ++e) {
          out[size_t((t * n_head + h) * hd + e)] += s[size_t(j)] / sum * v[size_t((j * n_head_kv + g) * hd + e)];
        }
      }
    }
  }
  return out;
}

TEST(AttentionOptions, ScaleSoftcapAndWindowMatchTheReference) {
  struct Case {
    int64_t n_q, pos0, n_head, n_head_kv, hd;
    float scale, cap;
    int64_t window;
  };
  const Case cases[] = {{1, 0, 2, 1, 8, 0.5f, 0.0f, 0},  {4, 0, 4, 2, 16, 0.0f, 1.5f, 0},
                        {6, 3, 4, 2, 16, 0.0f, 0.0f, 3},   {1, 20, 8, 2, 32, 0.1f, 2.0f, 5},
                        {9, 0, 4, 4, 8, 0.0f, 50.0f, 1},   {3, 7, 4, 1, 64, 0.125f, 3.0f, 100}};
  ThreadPool one(1), three(3);
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "n_q=" << c.n_q << " pos0=" << c.pos0 << " window=" << c.window
                                      << " cap=" << c.cap << " scale=" << c.scale);
    const int64_t n_kv = c.pos0 + c.n_q;
    const std::vector<float> q = testing::random_floats(size_t(c.n_q * c.n_head * c.hd), 4, -2, 2);
    std::vector<float> k = testing::random_floats(size_t(n_kv * c.n_head_kv * c.hd), 5, -2, 2);
    std::vector<float> v = testing::random_floats(size_t(n_kv * c.n_head_kv * c.hd), 6);
    // Keys older than every query's window are never read: poison them.
    const int64_t oldest = c.window > 0 ? std::max<int64_t>(0, c.pos0 - c.window + 1) : 0;
    for (size_t i = 0; i < size_t(oldest * c.n_head_kv * c.hd); ++i) k[i] = v[i] = std::nanf("");
    AttentionOptions o;
    o.scale = c.scale;
    o.softcap = c.cap;
    o.window = c.window;
    const double scale = c.scale > 0 ? c.scale : 1.0 / std::sqrt(double(c.hd));
    const auto ref = ref_attention(q, c.n_q, c.pos0, c.n_head, c.n_head_kv, c.hd, k, v, scale, c.cap, c.window);
    for (ThreadPool* pool : {&one, &three}) {
      std::vector<float> out(ref.size());
      attention(*pool, q.data(), c.n_q, c.pos0, c.n_head, c.n_head_kv, c.hd, k.data(), v.data(), out.data(), o);
      for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(out[i], ref[i], 1e-5) << i;
    }
  }
}

TEST(AttentionOptions, DefaultsAreBitIdenticalToPlainAttention) {
  ThreadPool pool(2);
  const std::vector<float> q = testing::random_floats(3 * 4 * 16, 7, -2, 2);
  const std::vector<float> k = testing::random_floats(8 * 2 * 16, 8, -2, 2);
  const std::vector<float> v = testing::random_floats(8 * 2 * 16, 9);
  std::vector<float> a(q.size()), b(q.size());
  attention(pool, q.data(), 3, 5, 4, 2, 16, k.data(), v.data(), a.data());
  attention(pool, q.data(), 3, 5, 4, 2, 16, k.data(), v.data(), b.data(), AttentionOptions{});
  EXPECT_TRUE(testing::bit_equal(a, b));
}

TEST(AttentionOptions, BadOptionsAreErrors) {
  ThreadPool pool(1);
  std::vector<float> q(16), k(16), v(16), out(16);
  for (const AttentionOptions& o : {AttentionOptions{-1.0f, 0.0f, 0}, AttentionOptions{0.0f, -2.0f, 0},
                                    AttentionOptions{0.0f, 0.0f, -1},
                                    AttentionOptions{std::numeric_limits<float>::infinity(), 0.0f, 0}}) {
    EXPECT_THROW(attention(pool, q.data(), 1, 0, 1, 1, 16, k.data(), v.data(), out.data(), o), Error);
  }
}

}  // namespace
}  // namespace ork::ops
