// End-to-end tests of the `ork` command: real processes, generated model files, exit codes and the
// one-line errors for bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "tools/run_ork.h"

namespace ork {
namespace {

using Result = testing::OrkResult;
using testing::run_ork;

int count_lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = dir_.file("m.gguf");
    gen::ModelSpec spec = gen::preset("tiny-llama");
    gen::write_model(spec, model_);
  }
  testing::TempDir dir_;
  std::string model_;
};

TEST_F(Cli, GreedyRunIsDeterministicAndJsonHasTheFields) {
  const std::string args = "run -m " + model_ + " --prompt-tokens 1,2,3 -n 8 --temp 0 --json";
  const Result a = run_ork(args, dir_);
  ASSERT_EQ(a.status, 0) << a.err;
  for (const char* key : {"\"tokens\":[", "\"text\":", "\"n_prompt\":3", "\"n_gen\":8", "\"prompt_ms\":",
                          "\"gen_ms\":", "\"prompt_tok_per_s\":", "\"gen_tok_per_s\":",
                          "\"device\":\"cpu\"", "\"threads\":"}) {
    EXPECT_NE(a.out.find(key), std::string::npos) << key << " in " << a.out;
  }
  const Result b = run_ork(args + " -t 1", dir_);
  ASSERT_EQ(b.status, 0) << b.err;
  auto tokens = [](const std::string& s) { return s.substr(0, s.find(']')); };
  EXPECT_EQ(tokens(a.out), tokens(b.out)) << "greedy output depends on the thread count";
}

// --kv-type: the plan names the type and counts its bytes (f16 by default, half of f32); a run with
// each type works; an unknown type is one usage error line.
TEST_F(Cli, KvTypeFlag) {
  auto kv_bytes = [&](const std::string& flag) {
    const Result r = run_ork("mem -m " + model_ + " --device cpu --ctx 256 --plan-only --json" + flag, dir_);
    EXPECT_EQ(r.status, 0) << r.err;
    const size_t at = r.out.find("\"kv_cache_bytes\":");
    return at == std::string::npos ? std::string() : r.out.substr(at, r.out.find(',', at) - at);
  };
  EXPECT_EQ(kv_bytes(""), kv_bytes(" --kv-type f16"));
  EXPECT_NE(kv_bytes(" --kv-type f32"), kv_bytes(" --kv-type f16"));
  const Result q = run_ork("mem -m " + model_ + " --device cpu --ctx 256 --plan-only --json --kv-type q8_0", dir_);
  EXPECT_NE(q.out.find("\"kv_type\":\"q8_0\""), std::string::npos) << q.out;
  for (const char* t : {"f32", "f16", "q8_0"}) {
    const Result r = run_ork("run -m " + model_ + " --prompt-tokens 5,6 -n 3 --temp 0 --print-tokens --kv-type " + t, dir_);
    EXPECT_EQ(r.status, 0) << t << ": " << r.err;
  }
  const Result bad = run_ork("run -m " + model_ + " --prompt-tokens 5,6 -n 3 --kv-type q4_0", dir_);
  EXPECT_EQ(bad.status, 2) << bad.err;
  EXPECT_EQ(count_lines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("--kv-type: unknown KV cache type 'q4_0'"), std::string::npos) << bad.err;
}

TEST_F(Cli, PrintTokensMatchesJsonTokens) {
  const Result j = run_ork("run -m " + model_ + " --prompt-tokens 5,6 -n 5 --temp 0 --json", dir_);
  const Result p = run_ork("run -m " + model_ + " --prompt-tokens 5,6 -n 5 --temp 0 --print-tokens", dir_);
  ASSERT_EQ(j.status, 0) << j.err;
  ASSERT_EQ(p.status, 0) << p.err;
  const size_t open = j.out.find('[');
  const std::string ids = j.out.substr(open + 1, j.out.find(']') - open - 1);
  EXPECT_EQ(p.out, ids + "\n");
}

TEST_F(Cli, SeededSamplingReproduces) {
  const std::string args = "run -m " + model_ + " -p \"hello world\" -n 12 --temp 1.0 --seed 42 --print-tokens";
  const Result a = run_ork(args, dir_);
  const Result b = run_ork(args, dir_);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST_F(Cli, TextRunPrintsPromptAndTimingSummary) {
  const Result r = run_ork("run -m " + model_ + " -p \"The cat\" -n 4", dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("The cat", 0), 0u) << r.out;
  EXPECT_NE(r.err.find("tok/s"), std::string::npos) << r.err;
}

TEST_F(Cli, TokenizeJsonAndBos) {
  const Result plain = run_ork("tokenize -m " + model_ + " -p \"hello world\" --json", dir_);
  const Result bos = run_ork("tokenize -m " + model_ + " -p \"hello world\" --json --bos", dir_);
  ASSERT_EQ(plain.status, 0) << plain.err;
  ASSERT_EQ(bos.status, 0) << bos.err;
  EXPECT_EQ(plain.out.rfind("{\"tokens\":[", 0), 0u);
  EXPECT_GT(bos.out.size(), plain.out.size());
}

TEST_F(Cli, SimulatedNpuRunMatchesCpuInt8AndReportsResidency) {
  const std::string base = "run -m " + model_ + " --prompt-tokens 1,2,3 -n 8 --temp 0 ";
  const Result cpu = run_ork(base + "--device cpu --cpu-int8 --print-tokens", dir_);
  const Result sim = run_ork(base + "--device sim --print-tokens --stats", dir_);
  const Result streamed =
      run_ork(base + "--device sim --residency stream --wcache-budget-mb 1 --print-tokens", dir_);
  ASSERT_EQ(cpu.status, 0) << cpu.err;
  ASSERT_EQ(sim.status, 0) << sim.err;
  ASSERT_EQ(streamed.status, 0) << streamed.err;
  EXPECT_EQ(cpu.out, sim.out);
  EXPECT_EQ(cpu.out, streamed.out);
  EXPECT_NE(sim.err.find("residency: resident"), std::string::npos) << sim.err;
  const Result json = run_ork(base + "--device sim --residency stream --json", dir_);
  ASSERT_EQ(json.status, 0) << json.err;
  for (const char* key : {"\"residency\":{\"mode\":\"stream\"", "\"evictions\":", "\"iova_wall_hits\":",
                          "\"bytes_streamed\":", "\"prefetch_hidden_fraction\":", "\"loaded\":0",
                          "\"domain_switches\":", "\"stall_ms\":", "\"load_ms\":"}) {
    EXPECT_NE(json.out.find(key), std::string::npos) << key << " in " << json.out;
  }
}

TEST_F(Cli, ProbesOnTheSimulator) {
  const Result dma = run_ork("probe dma --device sim --domains 2 --json", dir_);
  ASSERT_EQ(dma.status, 0) << dma.err;
  EXPECT_NE(dma.out.find("{\"id\":0,\"buffers\":63,\"bytes\":4227858432,\"errno\":14}"), std::string::npos)
      << dma.out;
  EXPECT_NE(dma.out.find("{\"id\":1,\"buffers\":63,"), std::string::npos) << dma.out;
  EXPECT_NE(dma.out.find("\"total_bytes\":8455716864"), std::string::npos) << dma.out;
  const Result stream = run_ork("probe stream --device sim --iters 5 --mb 16 --json", dir_);
  ASSERT_EQ(stream.status, 0) << stream.err;
  EXPECT_NE(stream.out.find("\"leaked_iova_bytes\":0"), std::string::npos) << stream.out;
  const Result small = run_ork("probe dma --device sim --sim-window-mb 256 --json", dir_);
  ASSERT_EQ(small.status, 0) << small.err;
  EXPECT_NE(small.out.find("\"buffers\":3,"), std::string::npos) << small.out;  // 256 MiB: slot 0 holds page 0
}

TEST_F(Cli, ProbeCpuMeasuresTheReadRateAndTheThreadsArithmetic) {
  const Result j = run_ork("probe cpu -t 2 --passes 1 --bw-mib 16 --json", dir_);
  ASSERT_EQ(j.status, 0) << j.err;
  for (const char* key : {"\"machine\":", "\"threads\":2,", "\"read_gb_per_s\":", "\"compute_gb_per_s\":",
                          "\"compute_one_thread_gb_per_s\":", "\"compute_cores\":"}) {
    EXPECT_NE(j.out.find(key), std::string::npos) << key << " in " << j.out;
  }
  const auto number_after = [&](const std::string& key) {
    const size_t at = j.out.find("\"" + key + "\":");
    return at == std::string::npos ? -1.0 : std::stod(j.out.substr(at + key.size() + 3));
  };
  EXPECT_GT(number_after("read_gb_per_s"), 0.0);
  EXPECT_GT(number_after("compute_gb_per_s"), 0.0);
  EXPECT_GT(number_after("compute_cores"), 0.0);
  const Result text = run_ork("probe cpu -t 1 --passes 1 --bw-mib 16", dir_);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find(", 1 thread\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("threads' worth"), std::string::npos) << text.out;
  for (const char* bad : {"probe cpu --passes 0", "probe cpu -t -1", "probe cpu --bw-mib x", "probe cpu --model m"}) {
    const Result r = run_ork(bad, dir_);
    EXPECT_EQ(r.status, 2) << bad << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << bad << ": " << r.err;
  }
}

TEST_F(Cli, ProbeRegcmdPrintsTasksAndEntries) {
  const Result j = run_ork("probe regcmd --dtype i8 -m 4 -k 64 -n 32 --addr-a 0x1000 --addr-b 0x2000 "
                           "--addr-c 0x3000 --addr-regcmd 0x4000 --json", dir_);
  ASSERT_EQ(j.status, 0) << j.err;
  EXPECT_EQ(j.out.rfind("{\"dtype\":\"i8\",\"m\":4,\"k\":64,\"n\":32,\"tasks\":[{\"core\":0,\"index\":0,"
                        "\"regcfg_amount\":108,\"enable_mask\":13,\"int_mask\":768,"
                        "\"regcmd_addr\":\"0x0000000000004000\",\"regcmd\":[\"0x0201000000b11040\",", 0), 0u)
      << j.out.substr(0, 300);
  EXPECT_NE(j.out.find("\"0x0201000010001070\""), std::string::npos);  // CNA_FEATURE_DATA_ADDR = 0x1000
  EXPECT_NE(j.out.find("\"0x00810000000d0008\"]}]}"), std::string::npos);  // OPERATION_ENABLE ends it
  const Result text = run_ork("probe regcmd -m 64 -k 8300 -n 96 --cores 3", dir_);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("task core=2 index=0"), std::string::npos);
  EXPECT_NE(text.out.find("PC_REGISTER_AMOUNTS"), std::string::npos);
  for (const char* bad : {"probe regcmd -m 4 -k 64", "probe regcmd -m 4 -k 64 -n 32 --dtype i4",
                          "probe regcmd -m 4 -k 64 -n 32 --addr-a 0x1001", "probe regcmd -m 4 -k 64 -n 32 --addr-c zz",
                          "probe regcmd -m 0 -k 64 -n 32"}) {
    const Result r = run_ork(bad, dir_);
    EXPECT_EQ(r.status, 2) << bad << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << bad << ": " << r.err;
  }
}

TEST_F(Cli, ProbeReportWritesOneJsonFile) {
  const std::string path = dir_.file("report.json");
  const Result r = run_ork("probe report --device sim --sim-window-mb 256 -o " + path, dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(path);
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* key : {"\"ork_version\":", "\"device\":{\"name\":\"sim\",\"simulated\":true",
                          "\"probes\":{\"matmul\":{\"passed\":", "\"failed\":0", "\"dma\":{", "\"stream\":{",
                          "\"kernel_log\":"}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << " in " << json.substr(0, 400);
  }
  EXPECT_EQ(json.back(), '\n');
  const Result bad = run_ork("probe report --device sim -o /nonexistent-dir/r.json", dir_);
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("/nonexistent-dir/r.json"), std::string::npos) << bad.err;
}

// Bad input: one clear line on stderr naming what is wrong, a non-zero exit, never a crash.
struct BadCase {
  const char* args;  // {M} is replaced by the model path, {D} by the temp dir
  int status;
  const char* needle;
};

TEST_F(Cli, BadInputGivesOneLineAndNonZeroExit) {
  {
    std::ofstream(dir_.file("trunc.gguf")) << "GGUF\x03";
    std::ofstream(dir_.file("text.gguf")) << "this is not a gguf file at all";
  }
  const BadCase cases[] = {
      {"run -m {D}/missing.gguf -p hi", 1, "missing.gguf"},
      {"run -m {D}/trunc.gguf -p hi", 1, "trunc.gguf"},
      {"run -m {D}/text.gguf -p hi", 1, "text.gguf"},
      {"run -m {M} -p hi -n abc", 2, "--n-predict"},
      {"run -m {M} -p hi --temp -1", 2, "--temp"},
      {"run -m {M} -p hi --top-p 2", 2, "--top-p"},
      {"run -m {M} -p hi -t 0", 2, "--threads"},
      {"run -m {M} -p hi --bogus", 2, "--bogus"},
      {"run -m {M}", 2, "--prompt"},
      {"run -m {M} -p hi --device quantum", 1, "quantum"},
      {"run -m {M} --prompt-tokens 1,x", 2, "--prompt-tokens"},
      {"run -m {M} --prompt-tokens 1,999999", 1, "999999"},
      {"run -m {M} -p \"a b c d e f g h i j k l m n o p\" --ctx 4", 1, "context"},
      {"tokenize -m {M}", 2, "--prompt"},
      {"tokenize -m {M} -f {D}/nothere.txt", 1, "nothere.txt"},
      {"frobnicate", 2, "frobnicate"},
      {"probe dma --device npu", 1, "no RK3588 NPU found"},
      {"run -m {M} -p hi --device npu", 1, "no RK3588 NPU found"},
      {"run -m {M} -p hi --device sim --residency always", 2, "--residency"},
      {"run -m {M} -p hi --device sim --sim-domains 17", 2, "--sim-domains"},
      {"probe dma --device sim --sim-window-mb 0", 2, "--sim-window-mb"},
      {"probe teleport --device sim", 2, "teleport"},
  };
  for (const BadCase& c : cases) {
    std::string args = c.args;
    for (size_t at; (at = args.find("{M}")) != std::string::npos;) args.replace(at, 3, model_);
    const std::string d = model_.substr(0, model_.rfind('/'));
    for (size_t at; (at = args.find("{D}")) != std::string::npos;) args.replace(at, 3, d);
    const Result r = run_ork(args, dir_);
    EXPECT_EQ(r.status, c.status) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << args << "\n" << r.err;
    if (c.status == 1) { EXPECT_EQ(count_lines(r.err), 1) << args << "\n" << r.err; }
  }
}

}  // namespace
}  // namespace ork
