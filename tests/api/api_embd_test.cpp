// The C API's zero-copy input: embeddings written by the caller into an imported memfd, evaluated in
// place by ork_eval_embd, against ork_eval on the tokens; and its bad input.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "ork/ork.h"

namespace {

constexpr int64_t kEmbd = 128, kVocab = 512;

class ApiEmbd : public ::testing::Test {
 protected:
  void SetUp() override {
    ork::gen::ModelSpec s;
    s.n_embd = kEmbd;
    s.n_ff = 256;
    s.n_layer = 2;
    s.n_vocab = kVocab;
    s.weight_type = ork::quant::Type::Q8_0;
    s.seed = 1;
    const std::string path = dir_.file("a.gguf");
    ork::gen::write_model(s, path);
    ork_model_options o;
    ork_model_options_init(&o);
    o.device = "sim";
    o.threads = 2;
    ASSERT_EQ(ork_model_load(path.c_str(), &o, &m_), ORK_OK) << ork_last_error();
    fd_ = memfd_create("ork-embd", 0);
    ASSERT_GE(fd_, 0);
    ASSERT_EQ(ftruncate(fd_, off_t(kBytes)), 0);
    void* p = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    ASSERT_NE(p, MAP_FAILED);
    mine_ = static_cast<uint8_t*>(p);
    ASSERT_EQ(ork_mem_import_fd(m_, fd_, kBytes, &mem_), ORK_OK) << ork_last_error();
  }
  void TearDown() override {
    if (mem_ != nullptr) {
      EXPECT_EQ(ork_mem_free(mem_), ORK_OK);
    }
    if (mine_ != nullptr) munmap(mine_, kBytes);
    if (fd_ >= 0) close(fd_);
    if (m_ != nullptr) ork_model_free(m_);
  }
  // Writes the embeddings of `tokens` at byte `offset` of the memfd, through the caller's mapping.
  void write_embd(const std::vector<int32_t>& tokens, uint64_t offset) {
    std::vector<float> e(tokens.size() * kEmbd);
    ASSERT_EQ(ork_embed_tokens(m_, tokens.data(), int64_t(tokens.size()), e.data(), e.size()), ORK_OK)
        << ork_last_error();
    std::memcpy(mine_ + offset, e.data(), e.size() * sizeof(float));
  }
  // The last logits of `tokens` evaluated by ork_eval in a fresh context.
  std::vector<float> eval_tokens(const std::vector<int32_t>& tokens) {
    ork_context* c = nullptr;
    EXPECT_EQ(ork_context_create(m_, 64, &c), ORK_OK);
    const float* l = nullptr;
    EXPECT_EQ(ork_eval(c, tokens.data(), int64_t(tokens.size()), &l), ORK_OK) << ork_last_error();
    std::vector<float> out(l, l + kVocab);
    ork_context_free(c);
    return out;
  }
  static constexpr size_t kBytes = 64 * 1024;
  ork::testing::TempDir dir_;
  ork_model* m_ = nullptr;
  int fd_ = -1;
  uint8_t* mine_ = nullptr;
  ork_mem* mem_ = nullptr;
};

const std::vector<int32_t> kPrompt = {1, 7, 300, 42, 5, 99, 250, 3};

TEST_F(ApiEmbd, EmbeddingsInAnImportedMemfdGiveTheTokensLogitsBitForBit) {
  const std::vector<float> expected = eval_tokens(kPrompt);
  std::vector<int32_t> longer = kPrompt;
  longer.push_back(77);
  const std::vector<float> expected_next = eval_tokens(longer);

  write_embd(kPrompt, 4096);
  ork_context* c = nullptr;
  ASSERT_EQ(ork_context_create(m_, 64, &c), ORK_OK);
  const float* l = nullptr;
  ASSERT_EQ(ork_eval_embd(c, mem_, 4096, int64_t(kPrompt.size()), &l), ORK_OK) << ork_last_error();
  EXPECT_EQ(std::memcmp(l, expected.data(), kVocab * sizeof(float)), 0);
  // A decode step from embeddings, then from a token: the sequence continues either way.
  write_embd({77}, 0);
  ASSERT_EQ(ork_eval_embd(c, mem_, 0, 1, &l), ORK_OK) << ork_last_error();
  EXPECT_EQ(std::memcmp(l, expected_next.data(), kVocab * sizeof(float)), 0);
  int64_t n_past = 0;
  ork_context_n_past(c, &n_past);
  EXPECT_EQ(n_past, int64_t(longer.size()));
  ork_context_free(c);
}

TEST_F(ApiEmbd, TheCallersMemoryIsReadNotACopyOfIt) {
  // Same memory, same call; only the bytes behind the caller's own mapping change in between.
  const std::vector<int32_t> other = {9, 8, 7, 6, 5, 4, 3, 2};
  ork_context* c = nullptr;
  ASSERT_EQ(ork_context_create(m_, 64, &c), ORK_OK);
  const float* l = nullptr;
  write_embd(kPrompt, 8192);
  ASSERT_EQ(ork_eval_embd(c, mem_, 8192, 8, &l), ORK_OK);
  EXPECT_EQ(std::vector<float>(l, l + kVocab), eval_tokens(kPrompt));
  write_embd(other, 8192);
  ASSERT_EQ(ork_context_reset(c), ORK_OK);
  ASSERT_EQ(ork_eval_embd(c, mem_, 8192, 8, &l), ORK_OK);
  EXPECT_EQ(std::vector<float>(l, l + kVocab), eval_tokens(other));
  ork_context_free(c);
  // With caller memory for the logits too (a fresh context), nothing of the I/O is ork's.
  ASSERT_EQ(ork_context_create(m_, 64, &c), ORK_OK);
  ASSERT_EQ(ork_context_set_logits(c, mem_, 0), ORK_OK);
  ASSERT_EQ(ork_eval_embd(c, mem_, 8192, 8, &l), ORK_OK);
  void* host = nullptr;
  ASSERT_EQ(ork_mem_info_get(mem_, &host, nullptr), ORK_OK);
  EXPECT_EQ(static_cast<const void*>(l), host);
  EXPECT_EQ(std::vector<float>(reinterpret_cast<const float*>(mine_), reinterpret_cast<const float*>(mine_) + kVocab),
            eval_tokens(other));
  ork_mem_info ci{};
  ASSERT_EQ(ork_query_mem(nullptr, c, &ci), ORK_OK);
  EXPECT_EQ(ci.io_bytes, 0u) << "the context allocated a logits buffer of its own";
  ASSERT_EQ(ork_context_set_logits(c, nullptr, 0), ORK_OK);
  ork_context_free(c);
}

TEST_F(ApiEmbd, BadInputGivesAStatus) {
  ork_context* c = nullptr;
  ASSERT_EQ(ork_context_create(m_, 16, &c), ORK_OK);
  const float* l = nullptr;
  const uint64_t row = kEmbd * sizeof(float);
  // The embeddings must fit past the offset: too many tokens, an offset near the end, an offset
  // whose sum with the size overflows, a misaligned offset.
  EXPECT_EQ(ork_eval_embd(c, mem_, kBytes - 2 * row, 3, &l), ORK_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(ork_eval_embd(c, mem_, kBytes - row + 4, 1, &l), ORK_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(ork_eval_embd(c, mem_, UINT64_MAX - 3, 1, &l), ORK_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(ork_eval_embd(c, mem_, kBytes + 4096, 1, &l), ORK_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(ork_eval_embd(c, mem_, 2, 1, &l), ORK_ERR_INVALID_ARG);
  EXPECT_EQ(ork_eval_embd(c, mem_, 0, 0, &l), ORK_ERR_INVALID_ARG);
  EXPECT_EQ(ork_eval_embd(c, mem_, 0, -1, &l), ORK_ERR_INVALID_ARG);
  EXPECT_EQ(ork_eval_embd(c, mem_, 0, INT64_MAX, &l), ORK_ERR_CONTEXT_FULL);
  // Handles.
  EXPECT_EQ(ork_eval_embd(nullptr, mem_, 0, 1, &l), ORK_ERR_BAD_HANDLE);
  EXPECT_EQ(ork_eval_embd(c, nullptr, 0, 1, &l), ORK_ERR_BAD_HANDLE);
  int junk = 0;
  EXPECT_EQ(ork_eval_embd(c, reinterpret_cast<ork_mem*>(&junk), 0, 1, &l), ORK_ERR_BAD_HANDLE);
  int64_t n_past = -1;
  ASSERT_EQ(ork_context_n_past(c, &n_past), ORK_OK);
  EXPECT_EQ(n_past, 0) << "a failed eval changed the context";
  // ork_embed_tokens: short buffer, bad tokens, null handle.
  std::vector<float> e(kEmbd);
  EXPECT_EQ(ork_embed_tokens(m_, kPrompt.data(), 2, e.data(), e.size()), ORK_ERR_BUFFER_TOO_SMALL);
  const int32_t bad = int32_t(kVocab);
  EXPECT_EQ(ork_embed_tokens(m_, &bad, 1, e.data(), e.size()), ORK_ERR_INVALID_ARG);
  EXPECT_EQ(ork_embed_tokens(m_, kPrompt.data(), 0, e.data(), e.size()), ORK_ERR_INVALID_ARG);
  EXPECT_EQ(ork_embed_tokens(nullptr, kPrompt.data(), 1, e.data(), e.size()), ORK_ERR_BAD_HANDLE);
  EXPECT_EQ(ork_embed_tokens(m_, kPrompt.data(), 1, nullptr, 0), ORK_ERR_INVALID_ARG);
  // A freed memory handle.
  ork_mem* keep = mem_;
  ASSERT_EQ(ork_mem_free(keep), ORK_OK);
  mem_ = nullptr;
  EXPECT_EQ(ork_eval_embd(c, keep, 0, 1, &l), ORK_ERR_BAD_HANDLE);  // freed mem
  ork_context_free(c);
}

}  // namespace
