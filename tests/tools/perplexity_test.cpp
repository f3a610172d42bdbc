// `ork perplexity`: its number against a direct computation of the same windows' NLL (token by token
// through Context::eval, not eval_all), its window arithmetic, and the one-line errors.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "gen_model/gen_model.h"
#include "gen_model/vocab.h"
#include "model/temp_dir.h"
#include "tools/run_ork.h"
#include "runtime/context.h"
#include "runtime/engine.h"

namespace ork {
namespace {

using CmdResult = testing::OrkResult;

CmdResult ork_cmd(const std::string& args, const testing::TempDir& dir) {
  return testing::run_ork(args, dir);
}

// The number after "key": in a one-line JSON object (NaN when absent).
double json_number(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return std::nan("");
  return std::strtod(json.c_str() + at + key.size() + 3, nullptr);
}

// NLL sum and count over the scored halves of n_chunk windows, evaluating one token at a time.
struct Direct {
  double nll = 0;
  int64_t count = 0;
  int64_t n_chunk = 0;
};

Direct direct_nll(const std::string& model_path, const std::string& text, int64_t n_ctx,
                  int64_t max_chunks) {
  runtime::EngineOptions eo;
  eo.model_path = model_path;
  eo.device = "cpu";
  eo.threads = 1;
  runtime::Engine engine(eo);
  const model::Tokenizer& tok = engine.model().tokenizer();
  const std::vector<int32_t> ids = tok.encode(text, tok.vocab().add_bos, false);
  Direct d;
  d.n_chunk = std::min<int64_t>(int64_t(ids.size()) / n_ctx, max_chunks);
  runtime::Context ctx(engine, n_ctx);
  const int64_t nv = ctx.n_vocab();
  for (int64_t c = 0; c < d.n_chunk; ++c) {
    std::vector<int32_t> w(ids.begin() + c * n_ctx, ids.begin() + (c + 1) * n_ctx);
    if (tok.vocab().add_bos) w[0] = tok.bos();
    ctx.reset();
    for (int64_t j = 0; j + 1 < n_ctx; ++j) {
      const float* l = ctx.eval({w[size_t(j)]});
      if (j < n_ctx / 2) continue;
      double mx = l[0];
      for (int64_t i = 1; i < nv; ++i) mx = std::max(mx, double(l[i]));
      double s = 0;
      for (int64_t i = 0; i < nv; ++i) s += std::exp(double(l[i]) - mx);
      d.nll += std::log(s) + mx - double(l[w[size_t(j + 1)]]);
      ++d.count;
    }
  }
  return d;
}

class Perplexity : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = dir_.file("m.gguf");
    gen::write_model(gen::preset("tiny-llama"), model_);
    text_ = dir_.file("text.txt");
    std::ofstream(text_) << gen::corpus_text();
  }
  testing::TempDir dir_;
  std::string model_, text_;
};

TEST_F(Perplexity, MatchesTokenByTokenNllOfTheSameWindows) {
  for (const int64_t n_ctx : {16, 33}) {
    const CmdResult r = ork_cmd("perplexity -m " + model_ + " -f " + text_ + " --ctx " +
                              std::to_string(n_ctx) + " --json -t 2",
                          dir_);
    ASSERT_EQ(r.status, 0) << r.err;
    const Direct d = direct_nll(model_, std::string(gen::corpus_text()), n_ctx, 1 << 30);
    ASSERT_GT(d.n_chunk, 2);
    EXPECT_EQ(json_number(r.out, "chunks"), double(d.n_chunk)) << r.out;
    EXPECT_EQ(json_number(r.out, "tokens"), double(d.count)) << r.out;
    EXPECT_EQ(d.count, d.n_chunk * (n_ctx - 1 - n_ctx / 2));
    const double want = std::exp(d.nll / double(d.count));
    EXPECT_NEAR(json_number(r.out, "ppl"), want, 1e-4 * want) << r.out;
    EXPECT_GE(json_number(r.out, "ms"), 0.0) << r.out;
  }
}

TEST_F(Perplexity, ChunksLimitsTheWindowsAndTextOutputHasOneLine) {
  const CmdResult r = ork_cmd("perplexity -m " + model_ + " -f " + text_ + " --ctx 16 --chunks 3", dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("PPL = ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("over 21 tokens (3 windows of 16"), std::string::npos) << r.out;
  const Direct d = direct_nll(model_, std::string(gen::corpus_text()), 16, 3);
  const double want = std::exp(d.nll / double(d.count));
  EXPECT_NEAR(std::strtod(r.out.c_str() + 6, nullptr), want, 1e-3 * want) << r.out;
  // stderr is not a terminal here: no progress bar, only the summary line.
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(Perplexity, BadInputGivesOneLine) {
  std::ofstream(dir_.file("short.txt")) << "just a few words";
  struct Case {
    std::string args;
    int status;
    const char* needle;
  };
  const Case cases[] = {
      {"perplexity -m " + model_ + " -f " + dir_.file("nothere.txt"), 1, "nothere.txt"},
      {"perplexity -m " + model_ + " -f " + dir_.file("short.txt") + " --ctx 64", 1,
       "shorter than one window"},
      {"perplexity -m " + model_, 2, "--file"},
      {"perplexity -m " + model_ + " -f " + text_ + " --ctx 2", 2, "--ctx"},
      {"perplexity -m " + model_ + " -f " + text_ + " --chunks 0", 2, "--chunks"},
      {"perplexity -m " + dir_.file("missing.gguf") + " -f " + text_, 1, "missing.gguf"},
  };
  for (const Case& c : cases) {
    const CmdResult r = ork_cmd(c.args, dir_);
    EXPECT_EQ(r.status, c.status) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << "\n" << r.err;
  }
}

}  // namespace
}  // namespace ork
