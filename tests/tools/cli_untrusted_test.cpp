// `ork` on a model whose names carry newlines, terminal escapes and NULs: the error is still one
// "ork: error:" line, with no control byte and no forged second line.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "gen_model/gen_model.h"
#include "model/rewrite_gguf.h"
#include "model/temp_dir.h"
#include "tools/run_ork.h"

namespace ork {
namespace {

using namespace std::string_literals;

TEST(CliUntrusted, ArchitectureWithControlBytesGivesOneCleanLine) {
  testing::TempDir dir;
  const std::string good = dir.file("good.gguf"), bad = dir.file("bad.gguf");
  gen::write_model(gen::preset("tiny-llama"), good);
  const std::string evil = "x\nork: error: forged\x1b[2J\0"s + std::string(3000, 'z');
  testing::rewrite(good, bad, {{"general.architecture"}, {}, [&](gguf::Writer& w) {
                                 w.add_string("general.architecture", evil);
                               }});
  const testing::OrkResult r = testing::run_ork("run -m " + bad + " -p hi", dir);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("ork: error: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find("\nork: error: forged"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'x\\nork: error: forged\\x1b[2J\\x00zzz"), std::string::npos) << r.err;
  EXPECT_LT(r.err.size(), 1000u) << r.err.size();
}

TEST(CliUntrusted, UnknownPreTokenizerIsAnErrorUnlessForced) {
  testing::TempDir dir;
  const std::string good = dir.file("good.gguf"), bad = dir.file("pre.gguf");
  gen::write_model(gen::preset("tiny-llama"), good);
  testing::rewrite(good, bad, {{"tokenizer.ggml.pre"}, {}, [](gguf::Writer& w) {
                                 w.add_string("tokenizer.ggml.pre", "mystery-pre");
                               }});
  for (const std::string& cmd : {"tokenize -m " + bad + " -p hi", "run -m " + bad + " -p hi -n 2"}) {
    const testing::OrkResult r = testing::run_ork(cmd, dir);
    EXPECT_EQ(r.status, 1) << cmd;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("tokenizer.ggml.pre 'mystery-pre' is not a pre-tokenizer ork knows"), std::string::npos)
        << r.err;
    const testing::OrkResult forced = testing::run_ork(cmd + " --tokenizer-pre llama3", dir);
    EXPECT_EQ(forced.status, 0) << cmd << ": " << forced.err;
  }
}

}  // namespace
}  // namespace ork
