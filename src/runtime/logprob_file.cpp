#include "runtime/logprob_file.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/checked.h"
#include "core/error.h"

namespace ork::runtime {
namespace {

constexpr char kMagic[8] = {'_', 'l', 'o', 'g', 'i', 't', 's', '_'};
constexpr uint64_t kHeaderBytes = 8 + 4 + 4 + 4;
constexpr int64_t kMaxCtx = int64_t(1) << 20;
constexpr int64_t kMaxVocab = int64_t(1) << 24;
constexpr int64_t kMaxChunk = int64_t(1) << 30;
// The largest scale an encoder can write: a logit range of 16 over 65535 steps (float rounding aside).
constexpr float kMaxScale = 16.0f / 65535.0f * (1.0f + 1e-5f);

}  // namespace

int64_t logprob_row_elems(int64_t n_vocab) { return 2 * ((n_vocab + 1) / 2) + 4; }
int64_t logprob_rows_per_window(int64_t n_ctx) { return n_ctx - 1 - n_ctx / 2; }

float row_scale(const uint16_t* row) {
  float v;
  std::memcpy(&v, row, sizeof v);
  return v;
}

float row_min_log_prob(const uint16_t* row) {
  float v;
  std::memcpy(&v, row + 2, sizeof v);
  return v;
}

double decoded_log_prob(const uint16_t* row, int64_t i) {
  return double(row_scale(row)) * double(row[4 + i]) + double(row_min_log_prob(row));
}

void encode_log_probs(const float* logits, int64_t n_vocab, uint16_t* row) {
  float max_logit = logits[0], min_logit = logits[0];
  for (int64_t i = 1; i < n_vocab; ++i) {
    max_logit = std::max(max_logit, logits[i]);
    min_logit = std::min(min_logit, logits[i]);
  }
  min_logit = std::max(min_logit, max_logit - 16.0f);
  double sum = 0;
  for (int64_t i = 0; i < n_vocab; ++i) sum += std::exp(double(logits[i]) - double(max_logit));
  const double log_sum_exp = std::log(sum);
  const float min_log_prob = float(double(min_logit) - double(max_logit) - log_sum_exp);
  const float scale = (max_logit - min_logit) / 65535.0f;
  std::memcpy(row, &scale, sizeof scale);
  std::memcpy(row + 2, &min_log_prob, sizeof min_log_prob);
  uint16_t* q = row + 4;
  std::fill(q, row + logprob_row_elems(n_vocab), uint16_t(0));
  if (scale > 0) {
    const double inv = 1.0 / double(scale);
    for (int64_t i = 0; i < n_vocab; ++i) {
      if (logits[i] <= min_logit) continue;
      const double v = std::nearbyint(inv * (double(logits[i]) - double(min_logit)));
      q[i] = uint16_t(std::clamp(v, 0.0, 65535.0));
    }
  }
}

LogProbWriter::LogProbWriter(std::string path, int64_t n_ctx, int64_t n_vocab, int64_t n_chunk,
                             const std::vector<int32_t>& tokens)
    : path_(std::move(path)), tmp_(path_ + ".tmp"), n_ctx_(n_ctx), n_vocab_(n_vocab), n_chunk_(n_chunk) {
  ORK_CHECK(n_ctx >= 3 && n_ctx <= kMaxCtx && n_vocab >= 1 && n_vocab <= kMaxVocab && n_chunk >= 1 &&
                n_chunk <= kMaxChunk,
            path_, ": cannot save log-probabilities of n_ctx ", n_ctx, ", n_vocab ", n_vocab, ", ",
            n_chunk, " windows");
  ORK_CHECK(int64_t(tokens.size()) >= n_ctx * n_chunk, path_, ": ", tokens.size(),
            " tokens for ", n_chunk, " windows of ", n_ctx);
  out_.open(tmp_, std::ios::binary | std::ios::trunc);
  ORK_CHECK(out_.good(), tmp_, ": cannot create");
  const uint32_t ctx32 = uint32_t(n_ctx);
  const int32_t vocab32 = int32_t(n_vocab), chunk32 = int32_t(n_chunk);
  out_.write(kMagic, sizeof kMagic);
  out_.write(reinterpret_cast<const char*>(&ctx32), 4);
  out_.write(reinterpret_cast<const char*>(&vocab32), 4);
  out_.write(reinterpret_cast<const char*>(&chunk32), 4);
  out_.write(reinterpret_cast<const char*>(tokens.data()), std::streamsize(n_ctx * n_chunk * 4));
  ORK_CHECK(out_.good(), tmp_, ": write error");
  rows_.resize(size_t(logprob_rows_per_window(n_ctx) * logprob_row_elems(n_vocab)));
}

LogProbWriter::~LogProbWriter() {
  if (committed_) return;
  out_.close();
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);
}

void LogProbWriter::write_window(const float* window_logits) {
  ORK_CHECK(written_ < n_chunk_, path_, ": more than the ", n_chunk_, " windows announced");
  const int64_t first = n_ctx_ / 2, elems = logprob_row_elems(n_vocab_);
  for (int64_t r = 0; r < logprob_rows_per_window(n_ctx_); ++r)
    encode_log_probs(window_logits + (first + r) * n_vocab_, n_vocab_, rows_.data() + r * elems);
  out_.write(reinterpret_cast<const char*>(rows_.data()), std::streamsize(rows_.size() * 2));
  ORK_CHECK(out_.good(), tmp_, ": write error");
  ++written_;
}

void LogProbWriter::commit() {
  ORK_CHECK(written_ == n_chunk_, path_, ": ", written_, " of ", n_chunk_, " windows written");
  out_.close();
  ORK_CHECK(!out_.fail(), tmp_, ": write error on close");
  ORK_CHECK(std::rename(tmp_.c_str(), path_.c_str()) == 0, path_, ": cannot rename ", tmp_, " onto it");
  committed_ = true;
}

LogProbReader::LogProbReader(const std::string& path) : path_(path) {
  in_.open(path, std::ios::binary);
  ORK_CHECK(in_.good(), path, ": cannot open the log-probability file");
  in_.seekg(0, std::ios::end);
  const uint64_t size = uint64_t(in_.tellg());
  in_.seekg(0);
  char magic[8];
  uint32_t ctx32 = 0;
  int32_t vocab32 = 0, chunk32 = 0;
  ORK_CHECK(size >= kHeaderBytes, path, ": not a log-probability file (", size,
            " bytes, shorter than the 20-byte header)");
  in_.read(magic, 8);
  ORK_CHECK(in_.good() && std::memcmp(magic, kMagic, 8) == 0, path,
            ": not a log-probability file (no \"_logits_\" magic; write one with --kl-divergence-base)");
  in_.read(reinterpret_cast<char*>(&ctx32), 4);
  in_.read(reinterpret_cast<char*>(&vocab32), 4);
  in_.read(reinterpret_cast<char*>(&chunk32), 4);
  ORK_CHECK(in_.good(), path, ": read error in the header");
  ORK_CHECK(ctx32 >= 3 && int64_t(ctx32) <= kMaxCtx, path, ": n_ctx ", ctx32, " is outside 3..", kMaxCtx);
  ORK_CHECK(vocab32 >= 1 && vocab32 <= kMaxVocab, path, ": n_vocab ", vocab32, " is outside 1..", kMaxVocab);
  ORK_CHECK(chunk32 >= 1, path, ": n_chunk ", chunk32, " (need at least one window)");
  n_ctx_ = ctx32;
  n_vocab_ = vocab32;
  n_chunk_ = chunk32;
  const uint64_t n_tokens = checked_mul(uint64_t(n_ctx_), uint64_t(n_chunk_), "log-probability tokens");
  const uint64_t row_bytes = uint64_t(logprob_row_elems(n_vocab_)) * 2;
  const uint64_t rows = checked_mul(uint64_t(logprob_rows_per_window(n_ctx_)), uint64_t(n_chunk_),
                                    "log-probability rows");
  rows_offset_ = checked_add(kHeaderBytes, checked_mul(n_tokens, 4, "log-probability tokens"),
                             "log-probability file");
  const uint64_t want = checked_add(rows_offset_, checked_mul(rows, row_bytes, "log-probability rows"),
                                    "log-probability file");
  ORK_CHECK(size == want, path, ": ", size, " bytes, but n_ctx ", n_ctx_, ", n_vocab ", n_vocab_, " and ",
            n_chunk_, " windows make ", want, " (", size < want ? "truncated" : "trailing bytes", ")");
  reserve_or_fail(tokens_, n_tokens, path + ": tokens");
  tokens_.resize(size_t(n_tokens));
  in_.read(reinterpret_cast<char*>(tokens_.data()), std::streamsize(n_tokens * 4));
  ORK_CHECK(in_.good(), path, ": read error in the tokens");
  for (uint64_t i = 0; i < n_tokens; ++i)
    ORK_CHECK(tokens_[i] >= 0 && tokens_[i] < vocab32, path, ": token ", i, " is ", tokens_[i],
              ", outside the vocabulary of ", n_vocab_);
}

void LogProbReader::read_window(int64_t c, std::vector<uint16_t>& rows) {
  ORK_CHECK(c >= 0 && c < n_chunk_, path_, ": window ", c, " of ", n_chunk_);
  const int64_t per = logprob_rows_per_window(n_ctx_), elems = logprob_row_elems(n_vocab_);
  rows.resize(size_t(per * elems));
  in_.seekg(std::streamoff(rows_offset_ + uint64_t(c) * uint64_t(per * elems) * 2));
  in_.read(reinterpret_cast<char*>(rows.data()), std::streamsize(rows.size() * 2));
  ORK_CHECK(in_.good(), path_, ": read error in window ", c);
  for (int64_t r = 0; r < per; ++r) {
    const uint16_t* row = rows.data() + r * elems;
    const float scale = row_scale(row), min_lp = row_min_log_prob(row);
    ORK_CHECK(std::isfinite(scale) && scale >= 0 && scale <= kMaxScale, path_, ": window ", c, " row ", r,
              ": scale ", scale, " is outside 0..16/65535");
    ORK_CHECK(std::isfinite(min_lp) && min_lp <= 0, path_, ": window ", c, " row ", r,
              ": minimum log-probability ", min_lp, " is not a finite value <= 0");
  }
}

}  // namespace ork::runtime
