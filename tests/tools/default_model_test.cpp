// The embedded default model (models/tiny-fortunes.gguf, trained by tools/train_tiny): its metadata,
// ork's tokenizer against the training tokenizer on the held-out text, and that it is trained.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "build_dirs.h"
#include "gguf/file.h"
#include "model/model.h"
#include "runtime/context.h"
#include "runtime/engine.h"

namespace ork {
namespace {

const std::string kModels = ork::testing::source_dir() + "/models/";
const std::string kModel = kModels + "tiny-fortunes.gguf";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(DefaultModel, IsALlamaWithTheTrainingTokenizer) {
  const auto m = model::Model::load(kModel);
  const model::Config& c = m->config();
  EXPECT_EQ(c.arch, model::Arch::kLlama);
  EXPECT_TRUE(c.tied_output);
  EXPECT_EQ(c.n_vocab, 1024);
  const model::Tokenizer& tok = m->tokenizer();
  EXPECT_TRUE(tok.vocab().add_bos);
  EXPECT_GE(tok.bos(), 0);
}

// heldout.tokens is what tools/train_tiny/bpe.py gave for heldout.txt (no BOS): ork must reproduce
// the training tokenization exactly, or the model sees different ids than it was trained on.
TEST(DefaultModel, OrkTokenizesHeldOutTextAsTheTrainingScriptDid) {
  const auto m = model::Model::load(kModel);
  const std::string text = slurp(kModels + "heldout.txt");
  std::istringstream ids_in(slurp(kModels + "heldout.tokens"));
  std::vector<int32_t> want;
  for (int32_t id; ids_in >> id;) want.push_back(id);
  ASSERT_GT(want.size(), 10000u);
  const std::vector<int32_t> got = m->tokenizer().encode(text, false, false);
  ASSERT_EQ(got.size(), want.size());
  size_t first_diff = 0;
  while (first_diff < got.size() && got[first_diff] == want[first_diff]) ++first_diff;
  EXPECT_EQ(first_diff, got.size()) << "first difference at token " << first_diff;
  EXPECT_EQ(m->tokenizer().decode(got, false), text);
}

// A trained model predicts held-out text far better than chance (perplexity = n_vocab = 1024):
// mean NLL over the second halves of 4 windows of 256 tokens, F16 weights on the CPU.
TEST(DefaultModel, PredictsHeldOutTextFarBetterThanChance) {
  runtime::EngineOptions eo;
  eo.model_path = kModel;
  eo.device = "cpu";
  runtime::Engine engine(eo);
  const model::Tokenizer& tok = engine.model().tokenizer();
  const std::vector<int32_t> ids = tok.encode(slurp(kModels + "heldout.txt"), true, false);
  const int64_t n = 256;
  runtime::Context ctx(engine, n);
  double nll = 0;
  int64_t count = 0;
  for (int64_t c = 0; c < 4; ++c) {
    std::vector<int32_t> w(ids.begin() + c * n, ids.begin() + (c + 1) * n);
    w[0] = tok.bos();
    ctx.reset();
    const std::vector<float>& logits = ctx.eval_all(w);
    for (int64_t j = n / 2; j + 1 < n; ++j) {
      const float* l = logits.data() + j * ctx.n_vocab();
      double mx = l[0], s = 0;
      for (int64_t i = 1; i < ctx.n_vocab(); ++i) mx = std::max(mx, double(l[i]));
      for (int64_t i = 0; i < ctx.n_vocab(); ++i) s += std::exp(double(l[i]) - mx);
      nll += std::log(s) + mx - double(l[w[size_t(j + 1)]]);
      ++count;
    }
  }
  EXPECT_LT(std::exp(nll / double(count)), 100.0);
}

}  // namespace
}  // namespace ork
