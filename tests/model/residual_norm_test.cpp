// model::ResidualNorm: a pending residual add and the next input's RMSNorm give, row by row or
// materialized, the bits of the add and ops::rmsnorm done one after the other; computing them twice
// gives the same rows; inconsistent descriptions are refused.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "model/residual_norm.h"
#include "ops/norm.h"
#include "quant/requant.h"

namespace ork::model {
namespace {

std::vector<float> random_floats(int64_t n, uint32_t seed, float sd = 1.f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, sd);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

constexpr int64_t kRows = 5, kWidth = 72;
constexpr float kEps = 1e-5f;

// The arithmetic the pending add stands for, step by step as the forward pass did it before.
void reference(const std::vector<float>& base, const std::vector<float>& branch, const float* post_norm,
               const float* norm, std::vector<float>& stream, std::vector<float>& rows) {
  stream.assign(size_t(kRows * kWidth), 0.f);
  rows.assign(size_t(kRows * kWidth), 0.f);
  std::vector<float> b(static_cast<size_t>(kWidth));
  for (int64_t i = 0; i < kRows; ++i) {
    const float* br = branch.data() + i * kWidth;
    if (post_norm != nullptr) {
      ops::rmsnorm(br, post_norm, kWidth, kEps, b.data());
      br = b.data();
    }
    for (int64_t j = 0; j < kWidth; ++j) stream[size_t(i * kWidth + j)] = base[size_t(i * kWidth + j)] + br[j];
    ops::rmsnorm(stream.data() + i * kWidth, norm, kWidth, kEps, rows.data() + i * kWidth);
  }
}

TEST(ResidualNorm, RowsAreTheAddThenTheNormBitForBit) {
  const std::vector<float> base = random_floats(kRows * kWidth, 1), branch = random_floats(kRows * kWidth, 2);
  const std::vector<float> norm = random_floats(kWidth, 3), post = random_floats(kWidth, 4);
  ThreadPool pool(2);
  for (const float* post_norm : {static_cast<const float*>(nullptr), post.data()}) {
    std::vector<float> want_stream, want_rows;
    reference(base, branch, post_norm, norm.data(), want_stream, want_rows);
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::vector<float> stream(size_t(kRows * kWidth), -1.f), h(size_t(kRows * kWidth), -1.f);
      ResidualNorm r = ResidualNorm::normed(base.data(), norm.data(), kEps, kWidth, h.data(), p);
      r.branch = UnscaledRows::f32(branch.data(), kWidth);
      r.post_norm = post_norm;
      r.stream_out = stream.data();
      EXPECT_EQ(r.materialize(kRows), h.data());
      EXPECT_EQ(std::memcmp(h.data(), want_rows.data(), h.size() * sizeof(float)), 0);
      EXPECT_EQ(std::memcmp(stream.data(), want_stream.data(), h.size() * sizeof(float)), 0);
      EXPECT_EQ(r.stream(), stream.data());
      // Again: the same rows (the stream is never its own base).
      r.materialize(kRows);
      EXPECT_EQ(std::memcmp(h.data(), want_rows.data(), h.size() * sizeof(float)), 0);
      EXPECT_EQ(std::memcmp(stream.data(), want_stream.data(), h.size() * sizeof(float)), 0);
    }
  }
}

// A branch left as int32 sums (UnscaledRows) is scaled as it is read: the bits of dequantize_i32's
// rows; and the rows may be written over the branch itself (the forward pass's h_).
TEST(ResidualNorm, AnUnscaledBranchAndRowsWrittenOverItGiveTheSameBits) {
  std::mt19937 rng(9);
  std::uniform_int_distribution<int32_t> sum(-300000, 300000);
  std::vector<int32_t> sums(size_t(kRows * kWidth));
  for (int32_t& v : sums) v = sum(rng);
  const std::vector<float> sa = random_floats(kRows, 5, 0.01f), sb = random_floats(kWidth, 6, 0.01f);
  std::vector<float> scaled(size_t(kRows * kWidth));
  quant::dequantize_i32(sums.data(), kRows, kWidth, sa.data(), sb.data(), scaled.data());
  const std::vector<float> base = random_floats(kRows * kWidth, 7), norm = random_floats(kWidth, 8);
  std::vector<float> want_stream, want_rows;
  reference(base, scaled, nullptr, norm.data(), want_stream, want_rows);

  std::vector<float> buf(size_t(kRows * kWidth)), stream(size_t(kRows * kWidth));
  std::memcpy(buf.data(), sums.data(), buf.size() * sizeof(float));  // bit patterns, as a backend leaves them
  ResidualNorm r = ResidualNorm::normed(base.data(), norm.data(), kEps, kWidth, buf.data(), nullptr);
  r.branch = {buf.data(), kWidth, kWidth, sa.data(), sb.data()};
  r.stream_out = stream.data();
  r.materialize(kRows);  // over the branch, row by row
  EXPECT_EQ(std::memcmp(buf.data(), want_rows.data(), buf.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(stream.data(), want_stream.data(), buf.size() * sizeof(float)), 0);
}

TEST(ResidualNorm, WithoutABranchOrANormTheRowsAreTheStreamNormedOrItself) {
  const std::vector<float> base = random_floats(kRows * kWidth, 11), norm = random_floats(kWidth, 12);
  std::vector<float> h(size_t(kRows * kWidth)), want(size_t(kRows * kWidth));
  for (int64_t i = 0; i < kRows; ++i) ops::rmsnorm(base.data() + i * kWidth, norm.data(), kWidth, kEps, want.data() + i * kWidth);
  const ResidualNorm normed = ResidualNorm::normed(base.data(), norm.data(), kEps, kWidth, h.data(), nullptr);
  EXPECT_EQ(normed.stream(), base.data());
  normed.materialize(kRows);
  EXPECT_EQ(std::memcmp(h.data(), want.data(), h.size() * sizeof(float)), 0);

  const std::vector<float> branch = random_floats(kRows * kWidth, 13);
  std::vector<float> stream(size_t(kRows * kWidth));
  ResidualNorm plain = ResidualNorm::normed(base.data(), nullptr, kEps, kWidth, h.data(), nullptr);
  plain.branch = UnscaledRows::f32(branch.data(), kWidth);
  plain.stream_out = stream.data();
  plain.materialize(kRows);
  for (size_t i = 0; i < h.size(); ++i) ASSERT_EQ(h[i], base[i] + branch[i]) << i;
  EXPECT_EQ(h, stream);
}

TEST(ResidualNorm, InconsistentDescriptionsAreRefused) {
  std::vector<float> base(size_t(kRows * kWidth), 1.f), branch(size_t(kRows * kWidth), 1.f),
      h(size_t(kRows * kWidth));
  ResidualNorm r = ResidualNorm::normed(base.data(), nullptr, kEps, kWidth, h.data(), nullptr);
  r.branch = UnscaledRows::f32(branch.data(), kWidth);
  r.stream_out = base.data();  // in place: a second read would add the branch twice
  EXPECT_THROW(r.check(), Error);
  r.stream_out = nullptr;
  EXPECT_THROW(r.check(), Error);
  std::vector<float> stream(size_t(kRows * kWidth));
  r.stream_out = stream.data();
  r.branch.n = kWidth - 8;
  try {
    r.materialize(kRows);
    FAIL() << "a branch of the wrong width was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("branch of 64 values per row, 72 wanted"), std::string::npos) << e.what();
  }
  r.branch.n = kWidth;
  r.h = stream.data();  // the rows over the stream they are computed from
  EXPECT_THROW(r.materialize(kRows), Error);
}

}  // namespace
}  // namespace ork::model
