// ork against llama.cpp's recorded greedy tokens (tests/fixtures/llama_cpp_greedy/, written by
// bench/oracle_greedy.sh with llama.cpp's own forward pass on the same generated files): each
// fixture's model is regenerated with ork-gen-model and run on ork's exact CPU path with the context
// llama.cpp used. The last prompt position's logits must be close to llama.cpp's (its f16 GELU table,
// and for quantized weights its q8 activations, bound the difference), and ork's greedy token must be
// llama.cpp's at every step. The steps are fed llama.cpp's tokens (teacher forcing), so one step
// cannot derail the rest: on f32 weights every argmax must agree; on quantized weights a step where
// llama.cpp's token is within 0.02 of ork's best logit (a near-tie the activation rounding decides,
// e.g. 6.508 vs 6.495 on q4_K) counts as a tie, and at most one is allowed per fixture.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "model/reference_forward.h"
#include "model/temp_dir.h"
#include "runtime/context.h"
#include "runtime/engine.h"

namespace ork::runtime {
namespace {

struct Fixture {
  std::string name;
  std::map<std::string, std::string> fields;  // "key: value" lines
  template <class T>
  std::vector<T> list(const std::string& key) const {
    std::vector<T> out;
    std::istringstream in(fields.at(key));
    for (T v; in >> v;) out.push_back(v);
    return out;
  }
};

// gtest prints a parameter with this (the name, not the object's bytes).
void PrintTo(const Fixture& f, std::ostream* os) { *os << f.name; }

std::vector<Fixture> fixtures() {
  std::vector<Fixture> out;
  const std::filesystem::path dir = std::filesystem::path(ORK_SOURCE_DIR) / "tests/fixtures/llama_cpp_greedy";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".txt") continue;
    Fixture f;
    f.name = e.path().stem().string();
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      const size_t colon = line.find(": ");
      if (colon != std::string::npos) f.fields[line.substr(0, colon)] = line.substr(colon + 2);
    }
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(), [](const Fixture& a, const Fixture& b) { return a.name < b.name; });
  return out;
}

class LlamaCppOracle : public ::testing::TestWithParam<Fixture> {};

TEST_P(LlamaCppOracle, GreedyTokensAndLogitsMatch) {
  const Fixture& f = GetParam();
  for (const char* key : {"gen", "n_ctx", "prompt", "tokens", "last_prompt_logits", "llama_cpp"}) {
    ASSERT_TRUE(f.fields.count(key)) << f.name << " lacks '" << key << "'";
  }
  testing::TempDir dir;
  const std::string path = dir.file("m.gguf");
  const std::string cmd = std::string(ORK_BINARY_DIR) + "/ork-gen-model " + f.fields.at("gen") + " -o " + path;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

  EngineOptions o;
  o.model_path = path;
  o.exact = true;
  o.threads = 2;
  Engine engine(o);
  Context ctx(engine, std::stoll(f.fields.at("n_ctx")));
  const auto prompt = f.list<int32_t>("prompt");
  const auto want = f.list<int32_t>("tokens");
  const auto llama_logits = f.list<double>("last_prompt_logits");
  ASSERT_EQ(int64_t(llama_logits.size()), ctx.n_vocab());

  const float* logits = ctx.eval(prompt);
  const bool quantized = f.name.find("q8_0") != std::string::npos || f.name.find("q4_k") != std::string::npos;
  EXPECT_LT(testing::normalized_error(logits, llama_logits), quantized ? 3e-2 : 3e-3)
      << "logits of the last prompt position vs " << f.fields.at("llama_cpp");
  std::vector<int32_t> got;
  int ties = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const int32_t next = int32_t(std::max_element(logits, logits + ctx.n_vocab()) - logits);
    got.push_back(next);
    if (next != want[i]) {
      const bool tie = quantized && logits[next] - logits[want[i]] < 0.02f;
      ties += tie ? 1 : 0;
      EXPECT_TRUE(tie) << "step " << i << ": ork picks " << next << " (" << logits[next] << "), llama.cpp "
                       << want[i] << " (" << logits[want[i]] << ")";
    }
    if (i + 1 < want.size()) logits = ctx.eval({want[i]});
  }
  EXPECT_LE(ties, 1) << "near-ties; ork's tokens " << ::testing::PrintToString(got);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LlamaCppOracle, ::testing::ValuesIn(fixtures()),
                         [](const ::testing::TestParamInfo<Fixture>& info) { return info.param.name; });

}  // namespace
}  // namespace ork::runtime
