// ork run --draft / --lookup end to end: the same greedy tokens as without, the draft object in
// --json, the draft line of --stats, and one clear error line for a mismatched vocabulary or
// conflicting flags.
#include <gtest/gtest.h>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "tools/run_ork.h"

namespace ork {
namespace {

class CliSpeculative : public ::testing::Test {
 protected:
  void SetUp() override {
    gen::ModelSpec s = gen::preset("tiny-llama");
    gen::write_model(s, dir_.file("t.gguf"));
    s.noise_std = 0.1f;
    gen::write_model(s, dir_.file("d.gguf"));
    s.n_vocab += 8;
    gen::write_model(s, dir_.file("v.gguf"));
  }
  testing::OrkResult run(const std::string& args) {
    return testing::run_ork("run -m " + dir_.file("t.gguf") + " --prompt-tokens 1,5,9,5,9,5 -n 24 --temp 0 -t 2 " +
                                args,
                            dir_);
  }
  testing::TempDir dir_;
};

TEST_F(CliSpeculative, DraftAndLookupGiveTheTargetOnlyTokens) {
  for (const std::string device : {"cpu", "sim"}) {
    const testing::OrkResult base = run("--device " + device + " --print-tokens");
    ASSERT_EQ(base.status, 0) << base.err;
    for (const std::string& extra : {"--draft " + dir_.file("d.gguf") + " --draft-max 3", std::string("--lookup 2"),
                                    "--draft " + dir_.file("d.gguf") + " --draft-device cpu --draft-max 5"}) {
      const testing::OrkResult r = run("--device " + device + " --print-tokens --stats " + extra);
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_EQ(r.out, base.out) << device << " " << extra;
      EXPECT_NE(r.err.find("ork: draft: "), std::string::npos) << r.err;
    }
  }
  const testing::OrkResult j = run("--device cpu --json --draft " + dir_.file("d.gguf"));
  ASSERT_EQ(j.status, 0) << j.err;
  for (const char* key : {"\"draft\":{", "\"acceptance_rate\":", "\"mean_accepted\":", "\"passes_per_token\":",
                          "\"bytes_streamed_per_token\":", "\"source\":\"draft-model\""}) {
    EXPECT_NE(j.out.find(key), std::string::npos) << key << " in " << j.out;
  }
}

TEST_F(CliSpeculative, BadDraftsAndFlagsAreOneClearLine) {
  const testing::OrkResult v = run("--draft " + dir_.file("v.gguf"));
  EXPECT_NE(v.status, 0);
  EXPECT_NE(v.err.find("vocabulary"), std::string::npos) << v.err;
  EXPECT_EQ(std::count(v.err.begin(), v.err.end(), '\n'), 1) << v.err;
  const testing::OrkResult both = run("--draft " + dir_.file("d.gguf") + " --lookup 2");
  EXPECT_EQ(both.status, 2) << both.err;
  const testing::OrkResult missing = run("--draft " + dir_.file("nope.gguf"));
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.err.find("nope.gguf"), std::string::npos) << missing.err;
  EXPECT_EQ(run("--draft " + dir_.file("d.gguf") + " --draft-max 0").status, 2);
  EXPECT_EQ(run("--draft " + dir_.file("d.gguf") + " --draft-max 2 --draft-min 3").status, 2);
  EXPECT_EQ(run("--draft " + dir_.file("d.gguf") + " --draft-p-min 1.5").status, 2);
  EXPECT_EQ(run("--lookup 0").status, 2);
  EXPECT_EQ(run("--draft " + dir_.file("d.gguf") + " --draft-device gpu").status, 2);
}

}  // namespace
}  // namespace ork
