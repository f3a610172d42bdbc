// runtime::LogProbWriter / LogProbReader — the reference log-probabilities of one perplexity run, in
// llama.cpp's `--kl-divergence-base` file format, so a base saved by either program can be read by
// the other (same tokenizer, same n_vocab). Source: llama.cpp tools/perplexity/perplexity.cpp,
// perplexity() (writer) and kl_divergence() (reader), ggml-org/llama.cpp, read 2026-12.
//
// Layout (host byte order; every host ork and llama.cpp run on is little-endian):
//   char[8]  "_logits_"
//   uint32   n_ctx                       window size in tokens (>= 3)
//   int32    n_vocab
//   int32    n_chunk                     windows
//   int32    tokens[n_chunk * n_ctx]     the text's tokens as tokenized (BOS not substituted)
//   then for each window, for each scored position j = n_ctx/2 .. n_ctx-2 (n_ctx - 1 - n_ctx/2 rows),
//   one row of row_elems(n_vocab) = 2*((n_vocab+1)/2) + 4 uint16:
//     float scale, float min_log_prob   (the first 4 uint16)
//     uint16 q[n_vocab] (+1 pad when n_vocab is odd): log p_i = scale * q[i] + min_log_prob, where
//     min_log_prob is the log-probability of max(min logit, max logit - 16); entries below it hold 0.
// The row at position j is the distribution predicting token j+1 of its window.
//
// Files are untrusted: the reader checks the magic, every count, the exact file size, every token
// (0 <= t < n_vocab) and every row's scale and minimum, and names the file and field at fault.
// Thread-safety: one thread at a time per object.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace ork::runtime {

// uint16 per row for a vocabulary of n_vocab.
int64_t logprob_row_elems(int64_t n_vocab);
// Scored rows per window of n_ctx tokens: n_ctx - 1 - n_ctx/2.
int64_t logprob_rows_per_window(int64_t n_ctx);

// Encodes the log-softmax of logits[n_vocab] (finite) into row[logprob_row_elems(n_vocab)], as
// llama.cpp does (log-sum-exp here in double). The quantization step is scale <= 16/65535, so each
// stored log p (above the -16 cut) is within scale/2 (+ float rounding) of the exact one.
void encode_log_probs(const float* logits, int64_t n_vocab, uint16_t* row);
// log p_i of an encoded row.
double decoded_log_prob(const uint16_t* row, int64_t i);
float row_scale(const uint16_t* row);
float row_min_log_prob(const uint16_t* row);

class LogProbWriter {
 public:
  // Creates `path`.tmp and writes the header and tokens[n_chunk * n_ctx]; commit() renames it onto
  // `path`, so a run that fails leaves no partial base behind. ork::Error naming the path on I/O
  // failure.
  LogProbWriter(std::string path, int64_t n_ctx, int64_t n_vocab, int64_t n_chunk,
                const std::vector<int32_t>& tokens);
  ~LogProbWriter();
  LogProbWriter(const LogProbWriter&) = delete;
  LogProbWriter& operator=(const LogProbWriter&) = delete;

  // Appends the next window's rows from its logits [n_ctx][n_vocab] (rows n_ctx/2 .. n_ctx-2 used).
  void write_window(const float* window_logits);
  // After n_chunk windows: flushes, closes and renames. ork::Error when windows are missing.
  void commit();

 private:
  std::string path_, tmp_;
  int64_t n_ctx_, n_vocab_, n_chunk_, written_ = 0;
  std::ofstream out_;
  std::vector<uint16_t> rows_;
  bool committed_ = false;
};

class LogProbReader {
 public:
  // Opens and validates `path` (header, size, tokens). ork::Error naming the path and field.
  explicit LogProbReader(const std::string& path);

  const std::string& path() const { return path_; }
  int64_t n_ctx() const { return n_ctx_; }
  int64_t n_vocab() const { return n_vocab_; }
  int64_t n_chunk() const { return n_chunk_; }
  // [n_chunk * n_ctx]
  const std::vector<int32_t>& tokens() const { return tokens_; }

  // Reads window c's rows into `rows` ([logprob_rows_per_window(n_ctx)][logprob_row_elems(n_vocab)])
  // and validates each row's scale and minimum. ork::Error naming the window and row.
  void read_window(int64_t c, std::vector<uint16_t>& rows);

 private:
  std::string path_;
  std::ifstream in_;
  int64_t n_ctx_ = 0, n_vocab_ = 0, n_chunk_ = 0;
  uint64_t rows_offset_ = 0;
  std::vector<int32_t> tokens_;
};

}  // namespace ork::runtime
