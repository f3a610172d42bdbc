// Context::eval runs the forward pass in chunks of at most m_max tokens: on the CPU int8 path
// (per-row quantization, integer sums: results independent of the batch) a long eval equals one
// without chunking token for token, every logit bit for bit; an error in a later chunk leaves the
// sequence as it was.
#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "runtime/context.h"
#include "runtime/engine.h"

namespace ork::runtime {
namespace {

TEST(ContextChunks, ChunkedEvalEqualsOneBatchAndErrorsKeepTheSequence) {
  testing::TempDir dir;
  gen::write_model(testing::small_q8_model(), dir.file("m.gguf"));
  std::vector<int32_t> tokens;
  for (int32_t i = 0; i < 23; ++i) tokens.push_back((i * 37 + 5) % 256);
  auto logits_with = [&](int64_t m_max) {
    EngineOptions o;
    o.model_path = dir.file("m.gguf");
    o.device = "cpu";
    o.cpu_int8 = true;
    o.threads = 2;
    o.m_max = m_max;
    o.kv_type = model::KvType::kF32;  // no staging: the scratch is the activations alone
    Engine e(o);
    Context c(e, 64), five(e, 64);
    const std::vector<float> all = c.eval_all(tokens);
    EXPECT_EQ(c.n_past(), int64_t(tokens.size()));
    five.eval(std::vector<int32_t>(tokens.begin(), tokens.begin() + 5));
    if (m_max == 5) { EXPECT_EQ(c.memory().scratch_bytes, five.memory().scratch_bytes) << "activations of more than m_max rows"; }
    return all;
  };
  const std::vector<float> one_batch = logits_with(64), chunked = logits_with(5);
  EXPECT_EQ(chunked, one_batch);

  EngineOptions o;
  o.model_path = dir.file("m.gguf");
  o.device = "cpu";
  o.m_max = 4;
  Engine e(o);
  Context c(e, 64);
  std::vector<int32_t> bad = tokens;
  bad[9] = 1 << 20;  // outside the vocabulary, in the third chunk
  EXPECT_THROW(c.eval(bad), Error);
  EXPECT_EQ(c.n_past(), 0);
  const float* l = c.eval(tokens);
  EXPECT_EQ(c.n_past(), int64_t(tokens.size()));
  EXPECT_NE(l, nullptr);
}

}  // namespace
}  // namespace ork::runtime
