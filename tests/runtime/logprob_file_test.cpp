// runtime::LogProbWriter/Reader: llama.cpp's "_logits_" encoding by value, the file layout byte for
// byte, a round trip, and every way a file can be bad (one error naming the file and field).
#include "runtime/logprob_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/temp_dir.h"

namespace ork::runtime {
namespace {

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<char>& b) {
  std::ofstream(path, std::ios::binary).write(b.data(), std::streamsize(b.size()));
}

// llama.cpp's log_softmax(n_vocab, logits, log_prob, tok) worked by hand for {2, 0, -20}: the
// minimum is clamped to max - 16 = -14, scale = 16/65535, entries (l - min)/scale rounded, the one
// below the clamp 0.
TEST(LogProbFile, EncodesAsLlamaCppDoes) {
  const float logits[3] = {2.0f, 0.0f, -20.0f};
  std::vector<uint16_t> row(size_t(logprob_row_elems(3)));
  ASSERT_EQ(row.size(), 8u);  // 2*((3+1)/2) + 4: one pad entry
  encode_log_probs(logits, 3, row.data());
  const double lse = std::log(1.0 + std::exp(-2.0) + std::exp(-22.0));
  EXPECT_FLOAT_EQ(row_scale(row.data()), 16.0f / 65535.0f);
  EXPECT_NEAR(row_min_log_prob(row.data()), -14.0 - 2.0 - lse, 1e-5);
  EXPECT_EQ(row[4], 65535);
  EXPECT_EQ(row[5], 57343);  // round(14 / (16/65535)) = round(57343.125)
  EXPECT_EQ(row[6], 0);
  EXPECT_EQ(row[7], 0);      // pad
  EXPECT_NEAR(decoded_log_prob(row.data(), 0), -lse, 2e-5);
  EXPECT_NEAR(decoded_log_prob(row.data(), 1), -2.0 - lse, 2e-4);
}

TEST(LogProbFile, EqualLogitsHaveScaleZeroAndUniformProbabilities) {
  const float logits[4] = {1.5f, 1.5f, 1.5f, 1.5f};
  std::vector<uint16_t> row(size_t(logprob_row_elems(4)));
  encode_log_probs(logits, 4, row.data());
  EXPECT_EQ(row_scale(row.data()), 0.0f);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(decoded_log_prob(row.data(), i), -std::log(4.0), 1e-6);
}

TEST(LogProbFile, DecodedLogProbsAreWithinHalfAStepOfTheExactOnes) {
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 3.0f);
  const int64_t n = 301;
  std::vector<float> logits(n);
  for (float& v : logits) v = nd(rng);
  std::vector<uint16_t> row(size_t(logprob_row_elems(n)));
  encode_log_probs(logits.data(), n, row.data());
  double mx = logits[0];
  for (float v : logits) mx = std::max(mx, double(v));
  double s = 0;
  for (float v : logits) s += std::exp(double(v) - mx);
  const double lse = mx + std::log(s);
  const double step = row_scale(row.data());
  for (int64_t i = 0; i < n; ++i) {
    const double exact = double(logits[i]) - lse;
    if (double(logits[i]) <= mx - 16) continue;
    EXPECT_NEAR(decoded_log_prob(row.data(), i), exact, step / 2 + 1e-5) << i;
  }
}

class LogProbFiles : public ::testing::Test {
 protected:
  // n_ctx 8 (rows 4..6: 3 per window), n_vocab 5 (row of 10 uint16), 2 windows.
  static constexpr int64_t kCtx = 8, kVocab = 5, kChunk = 2;
  void SetUp() override {
    path_ = dir_.file("base.kld");
    for (int64_t i = 0; i < kCtx * kChunk; ++i) tokens_.push_back(int32_t(i % kVocab));
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-4.0f, 4.0f);
    logits_.resize(size_t(kChunk * kCtx * kVocab));
    for (float& v : logits_) v = u(rng);
  }
  void write_good() {
    LogProbWriter w(path_, kCtx, kVocab, kChunk, tokens_);
    for (int64_t c = 0; c < kChunk; ++c) w.write_window(logits_.data() + c * kCtx * kVocab);
    w.commit();
  }
  // The message of the error reading `bytes` as a file.
  std::string read_error(const std::vector<char>& bytes) {
    const std::string p = dir_.file("bad.kld");
    write_bytes(p, bytes);
    try {
      LogProbReader r(p);
      std::vector<uint16_t> rows;
      for (int64_t c = 0; c < r.n_chunk(); ++c) r.read_window(c, rows);
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(p), std::string::npos) << m;
      return m;
    }
    return "no error";
  }
  testing::TempDir dir_;
  std::string path_;
  std::vector<int32_t> tokens_;
  std::vector<float> logits_;
};

TEST_F(LogProbFiles, LayoutIsLlamaCppsByteForByte) {
  write_good();
  const std::vector<char> b = file_bytes(path_);
  const int64_t rows = kChunk * (kCtx - 1 - kCtx / 2), elems = 2 * ((kVocab + 1) / 2) + 4;
  ASSERT_EQ(int64_t(b.size()), 20 + kCtx * kChunk * 4 + rows * elems * 2);
  EXPECT_EQ(std::string(b.data(), 8), "_logits_");
  uint32_t ctx;
  int32_t vocab, chunk, tok5;
  std::memcpy(&ctx, b.data() + 8, 4);
  std::memcpy(&vocab, b.data() + 12, 4);
  std::memcpy(&chunk, b.data() + 16, 4);
  std::memcpy(&tok5, b.data() + 20 + 5 * 4, 4);
  EXPECT_EQ(ctx, uint32_t(kCtx));
  EXPECT_EQ(vocab, kVocab);
  EXPECT_EQ(chunk, kChunk);
  EXPECT_EQ(tok5, tokens_[5]);
  // Window 1's second row is the encoding of position n_ctx/2 + 1 of window 1.
  std::vector<uint16_t> want(static_cast<size_t>(elems));
  encode_log_probs(logits_.data() + (kCtx + kCtx / 2 + 1) * kVocab, kVocab, want.data());
  const size_t at = size_t(20 + kCtx * kChunk * 4 + (3 + 1) * elems * 2);
  EXPECT_EQ(std::memcmp(b.data() + at, want.data(), size_t(elems * 2)), 0);
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
}

TEST_F(LogProbFiles, RoundTrips) {
  write_good();
  LogProbReader r(path_);
  EXPECT_EQ(r.n_ctx(), kCtx);
  EXPECT_EQ(r.n_vocab(), kVocab);
  EXPECT_EQ(r.n_chunk(), kChunk);
  EXPECT_EQ(r.tokens(), tokens_);
  const int64_t elems = logprob_row_elems(kVocab);
  std::vector<uint16_t> rows, want(static_cast<size_t>(elems));
  for (int64_t c = kChunk - 1; c >= 0; --c) {  // any order
    r.read_window(c, rows);
    ASSERT_EQ(int64_t(rows.size()), logprob_rows_per_window(kCtx) * elems);
    for (int64_t j = 0; j < logprob_rows_per_window(kCtx); ++j) {
      encode_log_probs(logits_.data() + (c * kCtx + kCtx / 2 + j) * kVocab, kVocab, want.data());
      EXPECT_EQ(std::memcmp(rows.data() + j * elems, want.data(), size_t(elems * 2)), 0) << c << " " << j;
    }
  }
}

TEST_F(LogProbFiles, AnUncommittedWriterLeavesNoFile) {
  {
    LogProbWriter w(path_, kCtx, kVocab, kChunk, tokens_);
    w.write_window(logits_.data());
    try {
      w.commit();
      ADD_FAILURE() << "commit with a window missing";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("1 of 2 windows"), std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(std::filesystem::exists(path_));
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
  EXPECT_THROW(LogProbWriter(dir_.file("no/such/dir/x.kld"), kCtx, kVocab, kChunk, tokens_), Error);
  EXPECT_THROW(LogProbWriter(path_, kCtx, kVocab, kChunk + 1, tokens_), Error);  // too few tokens
}

TEST_F(LogProbFiles, BadFilesGiveOneErrorNamingTheField) {
  write_good();
  const std::vector<char> good = file_bytes(path_);
  auto with = [&](size_t at, const void* v, size_t n) {
    std::vector<char> b = good;
    std::memcpy(b.data() + at, v, n);
    return b;
  };
  const uint32_t two = 2;
  const int32_t zero = 0, minus1 = -1, big = kVocab;
  const float nan = std::nanf(""), pos = 0.5f, huge_scale = 1.0f;
  const size_t rows_at = size_t(20 + kCtx * kChunk * 4);
  struct Case {
    std::vector<char> bytes;
    const char* needle;
  };
  const Case cases[] = {
      {{}, "shorter than the 20-byte header"},
      {std::vector<char>(good.begin(), good.begin() + 12), "shorter than the 20-byte header"},
      {with(0, "_LOGITS_", 8), "no \"_logits_\" magic"},
      {with(8, &two, 4), "n_ctx 2"},
      {with(12, &zero, 4), "n_vocab 0"},
      {with(16, &zero, 4), "n_chunk 0"},
      {std::vector<char>(good.begin(), good.end() - 1), "truncated"},
      {[&] { std::vector<char> b = good; b.push_back(0); return b; }(), "trailing bytes"},
      {with(20 + 3 * 4, &minus1, 4), "token 3 is -1"},
      {with(20 + 9 * 4, &big, 4), "token 9 is 5"},
      {with(rows_at, &nan, 4), "window 0 row 0: scale"},
      {with(rows_at + 2 * 10 * 4, &huge_scale, 4), "window 1 row 1: scale"},
      {with(rows_at + 4, &pos, 4), "minimum log-probability"},
  };
  for (const Case& c : cases) EXPECT_NE(read_error(c.bytes).find(c.needle), std::string::npos) << c.needle;
  try {
    LogProbReader r(dir_.file("missing.kld"));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.kld: cannot open"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ork::runtime
