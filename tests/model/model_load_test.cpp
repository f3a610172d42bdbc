// Loading a model validates metadata, tensor shapes and the tokenizer: each defect is an ork::Error
// whose message names the file and the field or tensor at fault.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

#include "core/error.h"
#include "core/fp16.h"
#include "gen_model/gen_model.h"
#include "gguf/file.h"
#include "gguf/writer.h"
#include "model/model.h"
#include "rewrite_gguf.h"
#include "temp_dir.h"

namespace ork::model {
namespace {

using ork::testing::TempDir;

using ork::testing::Edit;
using ork::testing::rewrite;

class ModelLoad : public ::testing::Test {
 protected:
  void SetUp() override {
    good_ = dir_.file("good.gguf");
    gen::write_model(gen::preset("tiny-llama"), good_);
  }
  // Expects Model::load to throw an ork::Error mentioning every needle.
  void expect_error(const Edit& e, std::initializer_list<const char*> needles) {
    const std::string bad = dir_.file("bad.gguf");
    rewrite(good_, bad, e);
    try {
      Model::load(bad);
      ADD_FAILURE() << "no error for " << *needles.begin();
    } catch (const Error& err) {
      const std::string msg = err.what();
      EXPECT_NE(msg.find("bad.gguf"), std::string::npos) << msg;
      for (const char* n : needles) EXPECT_NE(msg.find(n), std::string::npos) << msg;
    }
  }
  TempDir dir_;
  std::string good_;
};

TEST_F(ModelLoad, GoodModelLoads) {
  const auto m = Model::load(good_);
  EXPECT_EQ(m->config().arch, Arch::kLlama);
  EXPECT_EQ(m->weights().linears().size(), size_t(m->config().n_layer * 7 + 1));
  for (size_t i = 0; i < m->weights().linears().size(); ++i) {
    EXPECT_EQ(m->weights().linears()[i]->index, int32_t(i));
  }
}

TEST_F(ModelLoad, MissingFileNamesThePath) {
  try {
    Model::load(dir_.file("nope.gguf"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nope.gguf"), std::string::npos);
  }
}

TEST_F(ModelLoad, UnsupportedArchitecture) {
  expect_error({{"general.architecture"}, {}, [](gguf::Writer& w) { w.add_string("general.architecture", "mamba"); }},
               {"mamba", "unsupported architecture"});
}

TEST_F(ModelLoad, MissingHyperParameter) {
  expect_error({{"llama.block_count"}, {}, nullptr}, {"llama.block_count"});
}

TEST_F(ModelLoad, HeadCountsInconsistent) {
  expect_error({{"llama.attention.head_count_kv"}, {},
                [](gguf::Writer& w) { w.add_uint32("llama.attention.head_count_kv", 3); }},
               {"head_count_kv"});
}

TEST_F(ModelLoad, MissingTensor) {
  expect_error({{}, {"blk.1.ffn_down.weight"}, nullptr}, {"blk.1.ffn_down.weight"});
}

TEST_F(ModelLoad, WrongTensorShape) {
  const gguf::File f = gguf::File::open(good_);
  const gguf::TensorInfo& t = f.tensor("blk.0.attn_q.weight");
  std::vector<float> data(t.n_elements, 0.0f);
  std::vector<uint64_t> dims = {t.dims[1], t.dims[0] / 2};
  std::vector<float> half(size_t(dims[0] * dims[1]), 0.0f);
  expect_error({{}, {"blk.0.attn_q.weight"},
                [&](gguf::Writer& w) {
                  w.add_tensor("blk.0.attn_q.weight", quant::Type::F32, dims, half.data(), half.size() * 4);
                }},
               {"blk.0.attn_q.weight", "shape"});
}

// tiny-llama: head_dim 16 = rope.dimension_count, so rope_freqs.weight must be {8}.
TEST_F(ModelLoad, RopeFrequencyFactorsLoadAsF32OrF16) {
  const std::vector<float> factors = {1.0f, 1.0f, 1.5f, 2.0f, 4.0f, 8.0f, 8.0f, 0.5f};
  const std::string path = dir_.file("freqs.gguf");
  rewrite(good_, path, {{}, {}, [&](gguf::Writer& w) {
                          w.add_tensor("rope_freqs.weight", quant::Type::F32, {8}, factors.data(), 32);
                        }});
  const auto m = Model::load(path);
  ASSERT_EQ(m->config().n_rot, 16);
  ASSERT_NE(m->weights().rope_freqs, nullptr);
  for (size_t i = 0; i < factors.size(); ++i) EXPECT_EQ(m->weights().rope_freqs[i], factors[i]) << i;

  std::vector<uint16_t> halves;
  for (float f : factors) halves.push_back(f32_to_f16(f));
  rewrite(good_, path, {{}, {}, [&](gguf::Writer& w) {
                          w.add_tensor("rope_freqs.weight", quant::Type::F16, {8}, halves.data(), 16);
                        }});
  const auto m16 = Model::load(path);
  ASSERT_NE(m16->weights().rope_freqs, nullptr);
  for (size_t i = 0; i < factors.size(); ++i) EXPECT_EQ(m16->weights().rope_freqs[i], factors[i]) << i;

  EXPECT_EQ(Model::load(good_)->weights().rope_freqs, nullptr);
}

TEST_F(ModelLoad, RopeFrequencyFactorsWrongShapeNamesTheTensorAndShapes) {
  std::vector<float> factors(32, 1.0f);
  expect_error({{}, {},
                [&](gguf::Writer& w) {
                  w.add_tensor("rope_freqs.weight", quant::Type::F32, {32}, factors.data(), factors.size() * 4);
                }},
               {"rope_freqs.weight", "shape {32}", "expected {8}"});
  expect_error({{}, {},
                [&](gguf::Writer& w) {
                  w.add_tensor("rope_freqs.weight", quant::Type::F32, {4, 2}, factors.data(), 32);
                }},
               {"rope_freqs.weight", "shape {4, 2}", "expected {8}"});
}

TEST_F(ModelLoad, RopeFrequencyFactorsOfAnotherTypeAreRefused) {
  std::vector<uint16_t> bf16(8, 0x3f80);  // 1.0 in bf16
  expect_error({{}, {},
                [&](gguf::Writer& w) { w.add_tensor("rope_freqs.weight", quant::Type::BF16, {8}, bf16.data(), 16); }},
               {"rope_freqs.weight", "bf16", "f32 or f16"});
}

TEST_F(ModelLoad, RopeFrequencyFactorsMustBePositive) {
  for (float bad : {0.0f, -2.0f, NAN}) {
    std::vector<float> factors(8, 1.0f);
    factors[5] = bad;
    expect_error({{}, {},
                  [&](gguf::Writer& w) { w.add_tensor("rope_freqs.weight", quant::Type::F32, {8}, factors.data(), 32); }},
                 {"rope_freqs.weight", "element 5", "> 0"});
  }
}

TEST_F(ModelLoad, PerLayerRopeFrequencyFactorsAreRefusedNotIgnored) {
  std::vector<float> factors(8, 2.0f);
  expect_error({{}, {},
                [&](gguf::Writer& w) {
                  w.add_tensor("blk.1.rope_freqs.weight", quant::Type::F32, {8}, factors.data(), 32);
                }},
               {"blk.1.rope_freqs.weight", "not supported"});
}

// none, linear, yarn and longrope are read (forward_rope_scaling_test.cpp); any other type is refused.
TEST_F(ModelLoad, UnknownRopeScalingIsRefused) {
  expect_error({{}, {},
                [](gguf::Writer& w) {
                  w.add_string("llama.rope.scaling.type", "dynamic");
                  w.add_float32("llama.rope.scaling.factor", 4.0f);
                }},
               {"llama.rope.scaling.type", "'dynamic'", "not supported"});
}

// The gemma2 / phi3 specifics: each defect is one error naming the key or tensor.
TEST_F(ModelLoad, GemmaAndPhi3DefectsNameTheField) {
  auto expect_arch_error = [&](const char* preset, const Edit& e, std::initializer_list<const char*> needles) {
    const std::string src = dir_.file(std::string(preset) + ".gguf");
    gen::write_model(gen::preset(preset), src);
    EXPECT_NO_THROW(Model::load(src));
    const std::string bad = dir_.file("bad.gguf");
    rewrite(src, bad, e);
    try {
      Model::load(bad);
      ADD_FAILURE() << "no error for " << *needles.begin();
    } catch (const Error& err) {
      const std::string msg = err.what();
      for (const char* n : needles) EXPECT_NE(msg.find(n), std::string::npos) << msg;
    }
  };
  expect_arch_error("tiny-gemma2",
                    {{"gemma2.attention.sliding_window_pattern"}, {},
                     [](gguf::Writer& w) { w.add_int32_array("gemma2.attention.sliding_window_pattern", {1, 0, 1}); }},
                    {"sliding_window_pattern", "array"});
  expect_arch_error("tiny-gemma2",
                    {{"gemma2.attn_logit_softcapping"}, {},
                     [](gguf::Writer& w) { w.add_float32("gemma2.attn_logit_softcapping", -1.0f); }},
                    {"attn_logit_softcapping", "> 0"});
  expect_arch_error("tiny-gemma2", {{}, {"blk.1.post_ffw_norm.weight"}, nullptr}, {"blk.1.post_ffw_norm.weight"});
  expect_arch_error("tiny-gemma3", {{}, {"blk.0.attn_q_norm.weight"}, nullptr}, {"blk.0.attn_q_norm.weight"});
  expect_arch_error("tiny-phi3", {{}, {"blk.2.ffn_up.weight"}, nullptr}, {"blk.2.ffn_up.weight"});
  expect_arch_error("tiny-phi3", {{}, {"blk.0.attn_qkv.weight"}, nullptr}, {"blk.0.attn_q.weight"});
  expect_arch_error("tiny-phi3",
                    {{"phi3.rope.scaling.attn_factor"}, {},
                     [](gguf::Writer& w) { w.add_float32("phi3.rope.scaling.attn_factor", 0.0f); }},
                    {"rope.scaling.attn_factor", "> 0"});
  std::vector<float> bad_factors(8, -1.0f);
  expect_arch_error("tiny-phi3",
                    {{}, {"rope_factors_long.weight"},
                     [&](gguf::Writer& w) {
                       w.add_tensor("rope_factors_long.weight", quant::Type::F32, {8}, bad_factors.data(), 32);
                     }},
                    {"rope_factors_long.weight", "> 0"});
}

TEST_F(ModelLoad, TokenizerMissing) {
  expect_error({{"tokenizer.ggml.tokens"}, {}, nullptr}, {"tokenizer.ggml.tokens"});
}

TEST_F(ModelLoad, VocabSizeDisagreesWithEmbedding) {
  expect_error({{"llama.vocab_size"}, {}, [](gguf::Writer& w) { w.add_uint32("llama.vocab_size", 7); }},
               {"vocab_size"});
}

}  // namespace
}  // namespace ork::model
