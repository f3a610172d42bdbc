// `ork bench`: the JSON report's fields and their relations (weight bytes per token recomputed
// from the GGUF tensors, bandwidths and fractions), skipping a test with -p 0, and one-line errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "gen_model/gen_model.h"
#include "gguf/file.h"
#include "model/temp_dir.h"
#include "tools/run_ork.h"

namespace ork {
namespace {

// The number after "key": in a one-line JSON object (NaN when absent).
double json_number(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return std::nan("");
  return std::strtod(json.c_str() + at + key.size() + 3, nullptr);
}

// The numbers of "key":[a,b,...] in a one-line JSON object (empty when absent).
std::vector<double> json_array(const std::string& json, const std::string& key) {
  std::vector<double> out;
  size_t at = json.find("\"" + key + "\":[");
  if (at == std::string::npos) return out;
  const char* p = json.c_str() + at + key.size() + 4;
  while (*p != ']' && *p != '\0') {
    char* end = nullptr;
    out.push_back(std::strtod(p, &end));
    if (end == p) break;
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

std::string small_model(const testing::TempDir& dir, bool tied) {
  gen::ModelSpec spec;
  spec.arch = "llama";
  spec.weight_type = quant::Type::Q8_0;
  spec.n_vocab = 600;
  spec.n_embd = 128;
  spec.n_ff = 256;
  spec.n_layer = 2;
  spec.tied_output = tied;
  const std::string path = dir.file(tied ? "tied.gguf" : "m.gguf");
  gen::write_model(spec, path);
  return path;
}

// Every 2-D tensor is a matmul weight read once per token, except the embedding, of which one row
// is read (all of it when it is also the tied output).
uint64_t expected_bytes_per_token(const std::string& path, bool tied) {
  const gguf::File f = gguf::File::open(path);
  uint64_t bytes = 0;
  for (const gguf::TensorInfo& t : f.tensors()) {
    if (t.dims.size() != 2) continue;
    if (t.name == "token_embd.weight")
      bytes += tied ? t.n_bytes + t.n_bytes / t.rows() : t.n_bytes / t.rows();
    else
      bytes += t.n_bytes;
  }
  return bytes;
}

TEST(OrkBench, JsonReportIsConsistent) {
  testing::TempDir dir;
  for (bool tied : {false, true}) {
    const std::string model = small_model(dir, tied);
    const testing::OrkResult r =
        testing::run_ork("bench -m " + model + " -p 8 -n 4 -r 2 -t 2 --bw-mib 8 --json", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one line of JSON: " << r.out;
    EXPECT_EQ(json_number(r.out, "threads"), 2);
    EXPECT_EQ(json_number(r.out, "repetitions"), 2);
    EXPECT_NE(r.out.find("\"machine\":\""), std::string::npos) << r.out;
    EXPECT_GT(json_number(r.out, "pp_tok_per_s"), 0);
    // Two runs: the median is their mean.
    EXPECT_NEAR(json_number(r.out, "pp_tok_per_s_median"), json_number(r.out, "pp_tok_per_s"),
                1e-5 * json_number(r.out, "pp_tok_per_s"));
    EXPECT_NE(r.out.find("\"tg_tok_per_s_runs\":["), std::string::npos) << r.out;
    const double tg = json_number(r.out, "tg_tok_per_s");
    EXPECT_GT(tg, 0);
    const double wbytes = json_number(r.out, "weight_bytes_per_token");
    EXPECT_EQ(wbytes, double(expected_bytes_per_token(model, tied))) << "tied=" << tied;
    const double decode = json_number(r.out, "decode_gb_per_s");
    EXPECT_NEAR(decode, tg * wbytes / 1e9, 2e-5 * decode);  // JSON keeps 6 digits
    const double copy = json_number(r.out, "memcpy_gb_per_s"), read = json_number(r.out, "read_gb_per_s");
    EXPECT_GT(copy, 0);
    EXPECT_GT(read, 0);
    EXPECT_NEAR(json_number(r.out, "decode_bandwidth_fraction"), decode / copy, 2e-5 * decode / copy);
    EXPECT_NEAR(json_number(r.out, "decode_read_fraction"), decode / read, 2e-5 * decode / read);
    // Paired: repetition i's decode GB/s over the read rate measured around it; the median of two.
    const std::vector<double> tg_runs = json_array(r.out, "tg_tok_per_s_runs"),
                              read_runs = json_array(r.out, "read_gb_per_s_paired_runs"),
                              fractions = json_array(r.out, "decode_read_fraction_paired_runs");
    ASSERT_EQ(tg_runs.size(), 2u) << r.out;
    ASSERT_EQ(read_runs.size(), 2u) << r.out;
    ASSERT_EQ(fractions.size(), 2u) << r.out;
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_GT(read_runs[i], 0);
      const double want = tg_runs[i] * wbytes / 1e9 / read_runs[i];
      EXPECT_NEAR(fractions[i], want, 2e-5 * want) << i;
    }
    const double paired = json_number(r.out, "decode_read_fraction_paired");
    EXPECT_NEAR(paired, 0.5 * (fractions[0] + fractions[1]), 2e-5 * paired);
    // The threads' arithmetic: rates, and one threads'-worth figure after each repetition.
    EXPECT_GT(json_number(r.out, "compute_gb_per_s"), 0);
    EXPECT_GT(json_number(r.out, "compute_one_thread_gb_per_s"), 0);
    const std::vector<double> cores = json_array(r.out, "compute_cores_paired_runs");
    ASSERT_EQ(cores.size(), 2u) << r.out;
    for (double c : cores) EXPECT_GT(c, 0) << r.out;
    EXPECT_GT(json_number(r.out, "compute_cores_before_first_run"), 0) << r.out;
  }
}

TEST(OrkBench, PromptTestCanBeSkippedAndTableIsDefault) {
  testing::TempDir dir;
  const std::string model = small_model(dir, false);
  const testing::OrkResult j = testing::run_ork("bench -m " + model + " -p 0 -n 2 -r 1 --bw-mib 8 --json", dir);
  ASSERT_EQ(j.status, 0) << j.err;
  EXPECT_EQ(json_number(j.out, "pp_tok_per_s"), 0);
  EXPECT_GT(json_number(j.out, "tg_tok_per_s"), 0);
  const testing::OrkResult t = testing::run_ork("bench -m " + model + " -p 4 -n 2 -r 1 --bw-mib 8", dir);
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("| pp4 "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("| tg2 "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("of the read bandwidth"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("measured around each repetition"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("threads' worth"), std::string::npos) << t.out;
}

TEST(OrkBench, PinnedThreadsRun) {
  testing::TempDir dir;
  const std::string model = small_model(dir, false);
  const testing::OrkResult r =
      testing::run_ork("bench -m " + model + " -p 4 -n 2 -r 1 -t 2 --pin --bw-mib 8 --json", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json_number(r.out, "threads"), 2);
  EXPECT_GT(json_number(r.out, "tg_tok_per_s"), 0);
}

TEST(OrkBench, BadInputIsOneLineAndNonZero) {
  testing::TempDir dir;
  struct Case {
    std::string args;
    int status;
    std::string says;
  };
  const Case cases[] = {
      {"bench -m " + dir.file("missing.gguf"), 1, "cannot open"},
      {"bench -r 0", 2, "--repetitions"},
      {"bench -p -1", 2, "--n-prompt"},
      {"bench --bogus", 2, "unknown option"},
      {"bench --bw-mib 0", 2, "--bw-mib"},
  };
  for (const Case& c : cases) {
    const testing::OrkResult r = testing::run_ork(c.args, dir);
    EXPECT_EQ(r.status, c.status) << c.args;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << c.args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args;
  }
}

}  // namespace
}  // namespace ork

namespace ork {
namespace {

// ork bench --draft / --lookup: the speculative object, greedy tokens identical to target-only, a
// target as its own draft accepting everything; on sim the modeled figures, labelled.
TEST(OrkBench, SpeculativeFigures) {
  testing::TempDir dir;
  const std::string model = small_model(dir, false);
  const testing::OrkResult r = testing::run_ork(
      "bench -m " + model + " --draft " + model + " --draft-max 3 -p 0 -n 12 -r 2 -t 2 --bw-mib 8 --json", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"speculative\":{\"source\":\"draft-model\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"tokens_identical\":true"), std::string::npos) << r.out;
  EXPECT_EQ(json_number(r.out, "acceptance_rate"), 1.0) << r.out;
  EXPECT_GT(json_number(r.out, "tokens_per_target_pass"), 2.0) << r.out;
  EXPECT_GT(json_number(r.out, "sd_tok_per_s_median"), 0.0);
  EXPECT_EQ(r.out.find("modeled"), std::string::npos) << "cpu figures are measured: " << r.out;

  const testing::OrkResult s = testing::run_ork(
      "bench -m " + model + " --lookup 2 -p 0 -n 12 -r 1 -t 2 --bw-mib 8 --device sim --json", dir);
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_NE(s.out.find("\"source\":\"lookup\""), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("\"modeled\":true"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("\"board_profile\":\"rk3588-public-v1\""), std::string::npos) << s.out;
  EXPECT_GT(json_number(s.out, "modeled_ms_per_token_target_only"), 0.0) << s.out;
  EXPECT_NE(s.out.find("\"tokens_identical\":true"), std::string::npos) << s.out;
  // The compute probe is about a CPU decode's threads: not measured for a device's decode.
  EXPECT_EQ(s.out.find("compute_cores_paired_runs"), std::string::npos) << s.out;
  EXPECT_EQ(s.out.find("compute_cores_before_first_run"), std::string::npos) << s.out;
}

}  // namespace
}  // namespace ork
