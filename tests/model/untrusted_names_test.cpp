// Names from a model file (architecture, tokenizer model, rope scaling type, tensor names, tokens)
// reach error messages quoted: escaped control bytes, text past a NUL kept, a length cap. A file
// cannot split an error over lines, forge an "ork: error:" line, or send terminal escapes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "gguf/file.h"
#include "model/model.h"
#include "rewrite_gguf.h"
#include "temp_dir.h"

namespace ork::model {
namespace {

using namespace std::string_literals;
using ork::testing::Edit;
using ork::testing::rewrite;

// A newline that forges an error line, a terminal escape (clear screen), a NUL and text after it.
const std::string kEvil = "x\nork: error: forged\x1b[2J\0after-nul"s;

// The message of Model::load's error on `good` rewritten by `e`.
std::string load_error(const std::string& good, const std::string& bad, const Edit& e) {
  rewrite(good, bad, e);
  try {
    Model::load(bad);
  } catch (const Error& err) {
    return err.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

// One printable line: no control byte at all, the escapes visible, nothing cut at the NUL.
void expect_clean(const std::string& msg) {
  for (const char c : msg) {
    EXPECT_FALSE(uint8_t(c) < 0x20 || uint8_t(c) == 0x7f) << "control byte " << int(c) << " in: " << msg;
  }
  EXPECT_NE(msg.find("x\\nork: error: forged\\x1b[2J\\x00after-nul"), std::string::npos) << msg;
}

class UntrustedNames : public ::testing::Test {
 protected:
  void SetUp() override {
    good_ = dir_.file("good.gguf");
    bad_ = dir_.file("bad.gguf");
    gen::write_model(gen::preset("tiny-llama"), good_);
  }
  std::string replaced(const std::string& key, const std::string& value) {
    return load_error(good_, bad_, {{key}, {}, [&](gguf::Writer& w) { w.add_string(key, value); }});
  }
  ork::testing::TempDir dir_;
  std::string good_, bad_;
};

TEST_F(UntrustedNames, Architecture) {
  const std::string msg = replaced("general.architecture", kEvil);
  expect_clean(msg);
  EXPECT_NE(msg.find("unsupported architecture"), std::string::npos) << msg;
}

TEST_F(UntrustedNames, LongArchitectureIsCapped) {
  const std::string msg = replaced("general.architecture", std::string(5000, 'a'));
  EXPECT_LT(msg.size(), 400u) << msg.size();
  EXPECT_NE(msg.find("(5000 bytes)"), std::string::npos) << msg;
}

TEST_F(UntrustedNames, TokenizerModel) {
  const std::string msg = replaced("tokenizer.ggml.model", kEvil);
  expect_clean(msg);
  EXPECT_NE(msg.find("unsupported tokenizer"), std::string::npos) << msg;
}

TEST_F(UntrustedNames, RopeScalingType) {
  const std::string msg = replaced("llama.rope.scaling.type", kEvil);
  expect_clean(msg);
  EXPECT_NE(msg.find("rope.scaling.type"), std::string::npos) << msg;
}

TEST_F(UntrustedNames, TensorName) {
  const std::string name = "blk." + kEvil + ".rope_freqs.weight";
  const float f[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  const std::string msg = load_error(good_, bad_, {{}, {}, [&](gguf::Writer& w) {
                                                     w.add_tensor(name, quant::Type::F32, {8}, f, sizeof f);
                                                   }});
  expect_clean(msg);
  EXPECT_NE(msg.find("per-layer RoPE"), std::string::npos) << msg;
}

TEST_F(UntrustedNames, DuplicateToken) {
  const gguf::File f = gguf::File::open(good_);
  std::vector<std::string> tokens;
  for (const gguf::Value& t : f.find("tokenizer.ggml.tokens")->elements()) tokens.emplace_back(t.str);
  ASSERT_GT(tokens.size(), 10u);
  tokens[8] = tokens[9] = kEvil;
  const std::string msg = load_error(good_, bad_, {{"tokenizer.ggml.tokens"}, {}, [&](gguf::Writer& w) {
                                                     w.add_string_array("tokenizer.ggml.tokens", tokens);
                                                   }});
  expect_clean(msg);
  EXPECT_NE(msg.find("duplicate token"), std::string::npos) << msg;
}

}  // namespace
}  // namespace ork::model
