// read_vocab: tokenizer.ggml.* metadata written with gguf::Writer, read back through gguf::File.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "gguf/file.h"
#include "gguf/writer.h"
#include "model/tokenizer.h"
#include "model/tokenizer_vocab.h"

namespace ork::model {
namespace {

std::string write_file(const std::string& name, const gguf::Writer& w) {
  const std::string path = ::testing::TempDir() + "ork_tokenizer_" + name + ".gguf";
  w.write(path);
  return path;
}

TEST(TokenizerGguf, ReadsKeysAndDefaults) {
  gguf::Writer w;
  w.add_string("tokenizer.ggml.model", "llama");
  w.add_string_array("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "\xE2\x96\x81" "a"});
  w.add_float32_array("tokenizer.ggml.scores", {0, 0, 0, -1});
  w.add_int32_array("tokenizer.ggml.token_type", {2, 3, 3, 1});
  const gguf::File f = gguf::File::open(write_file("spm", w));
  const Vocab v = read_vocab(f);
  EXPECT_EQ(v.model, "llama");
  EXPECT_EQ(v.tokens.size(), 4u);
  EXPECT_EQ(v.scores.back(), -1.0f);
  EXPECT_EQ(v.types[1], 3);
  EXPECT_EQ(v.bos, 1);  // llama.cpp SPM defaults
  EXPECT_EQ(v.eos, 2);
  EXPECT_EQ(v.unk, 0);
  EXPECT_TRUE(v.add_bos);
  EXPECT_TRUE(v.add_space_prefix);
  Tokenizer t(v);
  EXPECT_EQ(t.encode("a", true, false), (std::vector<int32_t>{1, 3}));
}

TEST(TokenizerGguf, Gpt2KeysAndErrors) {
  gguf::Writer w;
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", "qwen2");
  w.add_string_array("tokenizer.ggml.tokens", {"a", "b", "ab"});
  w.add_string_array("tokenizer.ggml.merges", {"a b"});
  w.add_uint32("tokenizer.ggml.eos_token_id", 2);
  const Vocab v = read_vocab(gguf::File::open(write_file("bpe", w)));
  EXPECT_EQ(v.pre, "qwen2");
  EXPECT_FALSE(v.add_bos);  // qwen2 default
  EXPECT_EQ(v.bos, -1);
  EXPECT_EQ(v.eos, 2);
  EXPECT_EQ(v.merges, (std::vector<std::string>{"a b"}));

  gguf::Writer bad;
  bad.add_string("tokenizer.ggml.model", "gpt2");
  bad.add_string_array("tokenizer.ggml.tokens", {"a"});
  try {
    read_vocab(gguf::File::open(write_file("nomerges", bad)));
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.merges"), std::string::npos) << e.what();
  }
  gguf::Writer none;
  none.add_string("tokenizer.ggml.model", "llama");
  try {
    read_vocab(gguf::File::open(write_file("notokens", none)));
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.tokens"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ork::model
