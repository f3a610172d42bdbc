// An external oracle for the tokenizers: llama.cpp's own tokenizer test vocabularies and the token
// ids its tests/test-tokenizer-0 expects for them (made by llama.cpp's test-tokenizer-0.py from the
// Hugging Face tokenizers), copied unchanged into tests/fixtures/llama_vocab by
// bench/llama_cpp/copy_vocab_fixtures.sh (source commit in its SOURCE file). Each text is encoded
// as llama.cpp's test does: no BOS/EOS added, special-token text not parsed.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "build_dirs.h"
#include "model/model.h"
#include "model/tokenizer.h"

namespace ork::model {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t next; (next = s.find(sep, at)) != std::string::npos; at = next + sep.size()) {
    out.push_back(s.substr(at, next - at));
  }
  out.push_back(s.substr(at));
  return out;
}

struct Case {
  const char* vocab;  // ggml-vocab-NAME.gguf
  const char* cases;  // ggml-vocab-NAME.gguf.inp / .out
  const char* pre;    // "" or a tokenizer.ggml.pre override
};

class LlamaVocab : public ::testing::TestWithParam<Case> {};

TEST_P(LlamaVocab, EncodesEveryTextAsLlamaCppExpects) {
  const Case c = GetParam();
  const std::string dir = ork::testing::source_dir() + "/tests/fixtures/llama_vocab/";
  const auto tok = load_tokenizer(dir + "ggml-vocab-" + c.vocab + ".gguf", {c.pre});
  const std::string base = dir + "ggml-vocab-" + c.cases + ".gguf";
  const std::vector<std::string> texts = split(read(base + ".inp"), "\n__ggml_vocab_test__\n");
  const std::vector<std::string> ids = split(read(base + ".out"), "\n");
  ASSERT_EQ(texts.size(), ids.size());
  ASSERT_GT(texts.size(), 40u);
  for (size_t i = 0; i < texts.size(); ++i) {
    std::vector<int32_t> want;
    std::istringstream in(ids[i]);
    for (int32_t id; in >> id;) want.push_back(id);
    EXPECT_EQ(tok->encode(texts[i], false, false), want) << c.cases << " case " << i << ": \"" << texts[i] << "\"";
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LlamaVocab,
                         ::testing::Values(Case{"llama-spm", "llama-spm", ""}, Case{"llama-bpe", "llama-bpe", ""},
                                           Case{"phi-3", "phi-3", ""}, Case{"gpt-2", "gpt-2", ""},
                                           Case{"qwen2", "qwen2", ""}, Case{"qwen2", "qwen35", "qwen35"},
                                           Case{"deepseek-coder", "deepseek-coder", ""}),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           std::string n = i.param.cases;
                           for (char& ch : n) ch = ch == '-' ? '_' : ch;
                           return n;
                         });

}  // namespace
}  // namespace ork::model
