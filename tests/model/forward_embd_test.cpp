// Forward::eval_embd: the pass from input embeddings equals eval() on the tokens bit for bit, and it
// reads the caller's embeddings in place (not a copy taken at the start).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "core/error.h"
#include "core/thread_pool.h"
#include "gen_model/gen_model.h"
#include "model/forward.h"
#include "model/model.h"
#include "temp_dir.h"

namespace ork::model {
namespace {

// CpuMatmul that runs a hook before its `at`-th call (1-based).
class SpyMatmul final : public MatmulBackend {
 public:
  explicit SpyMatmul(ThreadPool& pool) : cpu_(pool) {}
  void matmul(const Linear& w, const float* x, int64_t m, float* y) override {
    if (++calls_ == at_ && hook_) hook_();
    cpu_.matmul(w, x, m, y);
  }
  const char* name() const override { return "spy"; }
  void arm(int at, std::function<void()> hook) {
    calls_ = 0;
    at_ = at;
    hook_ = std::move(hook);
  }

 private:
  CpuMatmul cpu_;
  int calls_ = 0, at_ = 0;
  std::function<void()> hook_;
};

class ForwardEmbd : public ::testing::Test {
 protected:
  void SetUp() override {
    gen::ModelSpec s;
    s.n_embd = 128;
    s.n_ff = 256;
    s.n_layer = 2;
    s.n_vocab = 300;
    s.weight_type = quant::Type::Q8_0;
    s.seed = 3;
    const std::string path = dir_.file("m.gguf");
    gen::write_model(s, path);
    m_ = Model::load(path);
  }
  std::vector<float> embed(const std::vector<int32_t>& t) const {
    std::vector<float> e(t.size() * size_t(m_->config().n_embd));
    Forward::embed_tokens(m_->config(), m_->weights(), t.data(), int64_t(t.size()), e.data());
    return e;
  }
  ork::testing::TempDir dir_;
  std::unique_ptr<Model> m_;
};

TEST_F(ForwardEmbd, EmbeddingsGiveTheTokensLogitsBitForBit) {
  const Config& c = m_->config();
  const std::vector<int32_t> prompt = {1, 17, 42, 299, 5, 0}, next = {123};
  ThreadPool pool(2);
  CpuMatmul backend(pool);
  Forward a(c, m_->weights(), backend, pool), b(c, m_->weights(), backend, pool);
  KvCache ca(c.n_layer, 16, c.kv_dim()), cb(c.n_layer, 16, c.kv_dim());
  std::vector<float> la(prompt.size() * size_t(c.n_vocab)), lb(la.size());
  a.eval(ca, prompt.data(), int64_t(prompt.size()), 0, true, la.data());
  const std::vector<float> e = embed(prompt);
  b.eval_embd(cb, e.data(), int64_t(prompt.size()), 0, true, lb.data());
  EXPECT_EQ(std::memcmp(la.data(), lb.data(), la.size() * sizeof(float)), 0);
  // A decode step after the prefill (the KV caches must agree too).
  a.eval(ca, next.data(), 1, int64_t(prompt.size()), false, la.data());
  b.eval_embd(cb, embed(next).data(), 1, int64_t(prompt.size()), false, lb.data());
  EXPECT_EQ(std::memcmp(la.data(), lb.data(), size_t(c.n_vocab) * sizeof(float)), 0);
  EXPECT_THROW(b.eval_embd(cb, nullptr, 1, 7, false, lb.data()), Error);
  EXPECT_THROW(b.eval_embd(cb, e.data(), 6, 12, false, lb.data()), Error);  // past the cache
}

TEST_F(ForwardEmbd, ReadsTheCallersEmbeddingsInPlace) {
  const Config& c = m_->config();
  const std::vector<int32_t> t = {4, 8, 15, 16};
  ThreadPool pool(1);
  SpyMatmul spy(pool);
  Forward f(c, m_->weights(), spy, pool);
  const std::vector<float> original = embed(t), other = embed({23, 42, 7, 9});
  auto eval_embd = [&](std::vector<float> e, bool tamper) {
    KvCache cache(c.n_layer, 8, c.kv_dim());
    std::vector<float> logits(size_t(c.n_vocab));
    // Call 4 is layer 0's Wo, after its norm read the embeddings and before its residual add does.
    spy.arm(4, [&] {
      if (tamper) e = other;  // same storage, new contents
    });
    f.eval_embd(cache, e.data(), int64_t(t.size()), 0, false, logits.data());
    return logits;
  };
  const std::vector<float> plain = eval_embd(original, false);
  // A copy taken at the start would not see the change; reading in place, the residual add does.
  EXPECT_NE(eval_embd(original, true), plain);
  EXPECT_EQ(eval_embd(original, false), plain);
}

}  // namespace
}  // namespace ork::model
