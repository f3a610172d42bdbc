// Ring KV caches on the command line (the default; --no-swa-ring turns them off): ork mem plans the
// smaller KV cache of the sliding-window layers' rings, ork run gives the same greedy tokens as with
// full caches, and --swa-ring with --no-swa-ring is one error.
#include <gtest/gtest.h>

#include <string>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "tools/run_ork.h"

namespace ork {
namespace {

TEST(CliSwaRing, PlansTheRingsAndGivesTheSameTokens) {
  testing::TempDir dir;
  gen::ModelSpec s = gen::preset("tiny-gemma2");
  s.sliding_window = 8;
  gen::write_model(s, dir.file("g.gguf"));
  auto kv = [&](const std::string& flag) {
    const testing::OrkResult r =
        testing::run_ork("mem -m " + dir.file("g.gguf") + " --device cpu --ctx 1024 --plan-only --json" + flag, dir);
    EXPECT_EQ(r.status, 0) << r.err;
    const size_t at = r.out.find("\"kv_cache_bytes\":");
    return at == std::string::npos ? uint64_t(0) : std::stoull(r.out.substr(at + 17));
  };
  const uint64_t full = kv(" --no-swa-ring"), ring = kv("");
  EXPECT_GT(ring, 0u);
  EXPECT_LT(ring, full);
  EXPECT_EQ(kv(" --swa-ring"), ring);
  const std::string run = "run -m " + dir.file("g.gguf") + " --prompt-tokens " +
                          "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24 -n 24 --temp 0 -t 2 "
                          "--print-tokens";
  const testing::OrkResult a = testing::run_ork(run + " --no-swa-ring", dir), b = testing::run_ork(run, dir);
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  const testing::OrkResult c = testing::run_ork(run + " --swa-ring --no-swa-ring", dir);
  EXPECT_NE(c.status, 0);
  EXPECT_NE(c.err.find("--swa-ring and --no-swa-ring contradict each other"), std::string::npos) << c.err;
}

}  // namespace
}  // namespace ork
