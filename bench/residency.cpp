// Residency benchmark (issue: models bigger than the window). Prints one JSON object:
//  resident  — a ≈300 MB model on a simulated NPU with 64 MiB windows and 16 domains: planned
//              resident across several domains; a 64-token run has no evictions and streams no
//              bytes after load; tokens equal the CPU int8 path's.
//  streamed  — the same model with one domain: it streams (evictions, IOVA-wall hits handled) and
//              gives the same tokens as the resident run.
//  prefill   — forced streaming of a prefill of 128 tokens: the fraction of load time hidden
//              behind compute by the prefetcher (1 − stall / load), median of --reps runs.
// Usage: residency [--model PATH] [--tokens 64] [--stream-tokens 8] [--prefill 128] [--reps 3]
// Without --model it generates the ≈300 MB Q8_0 model in /tmp.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/json.h"
#include "core/timer.h"
#include "gen_model/gen_model.h"
#include "runtime/context.h"
#include "runtime/engine.h"
#include "runtime/generator.h"
#include "runtime/sampler.h"

using namespace ork;

namespace {

struct RunResult {
  std::vector<int32_t> tokens;
  runtime::ResidencyStats stats;
  double ms = 0;
  int64_t n_vocab = 0;
};

runtime::EngineOptions options(const std::string& path, const std::string& device, uint32_t domains,
                               weights::Residency residency) {
  runtime::EngineOptions o;
  o.model_path = path;
  o.device = device;
  o.cpu_int8 = device == "cpu";
  o.npu.sim_window_bytes = uint64_t(64) << 20;
  o.npu.sim_domains = domains;
  o.residency = residency;
  return o;
}

RunResult generate(const runtime::EngineOptions& o, const std::vector<int32_t>& prompt, int64_t n) {
  runtime::Engine e(o);
  runtime::Context ctx(e, 512);
  runtime::SamplerParams p;
  p.temperature = 0;
  runtime::Sampler sampler(p);
  Stopwatch sw;
  RunResult r;
  r.tokens = runtime::generate(ctx, sampler, prompt, n, [](int32_t) { return true; }).tokens;
  r.ms = sw.elapsed_ms();
  r.stats = e.residency_stats();
  r.n_vocab = ctx.n_vocab();
  return r;
}

}  // namespace

int run(int argc, char** argv) {
  std::string model;
  int64_t n_tokens = 64, n_stream = 8, n_prefill = 128, reps = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--model") model = argv[i + 1];
    else if (a == "--tokens") n_tokens = std::stoll(argv[i + 1]);
    else if (a == "--stream-tokens") n_stream = std::stoll(argv[i + 1]);
    else if (a == "--prefill") n_prefill = std::stoll(argv[i + 1]);
    else if (a == "--reps") reps = std::stoll(argv[i + 1]);
    else {
      std::fprintf(stderr, "residency: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (model.empty()) {
    model = "/tmp/ork-bench-residency-300mb.gguf";
    gen::ModelSpec s;
    s.arch = "llama";
    s.weight_type = quant::Type::Q8_0;
    s.n_vocab = 16000;
    s.n_embd = 1024;
    s.n_ff = 2816;
    s.n_layer = 22;
    s.n_head = 16;
    s.n_head_kv = 4;
    s.n_ctx = 1024;
    gen::write_model(s, model);
  }
  const std::vector<int32_t> prompt = {1, 2, 3, 4};
  using weights::Residency;

  const RunResult cpu = generate(options(model, "cpu", 16, Residency::kAuto), prompt, n_tokens);
  const RunResult res = generate(options(model, "sim", 16, Residency::kAuto), prompt, n_tokens);
  const RunResult str = generate(options(model, "sim", 1, Residency::kAuto), prompt, n_stream);
  const bool res_same = res.tokens == cpu.tokens;
  const bool str_same =
      std::equal(str.tokens.begin(), str.tokens.end(), res.tokens.begin(),
                 res.tokens.begin() + std::min(res.tokens.size(), str.tokens.size()));

  std::vector<int32_t> long_prompt;
  // Token ids below the model's vocabulary (the default model's 16000: ids 1..15000).
  const int64_t id_range = std::min<int64_t>(15000, cpu.n_vocab - 1);
  for (int64_t i = 0; i < n_prefill; ++i) long_prompt.push_back(int32_t(1 + (i * 7919) % id_range));
  std::vector<double> hidden, stall, load, wall;
  for (int64_t r = 0; r < reps; ++r) {
    const RunResult p = generate(options(model, "sim", 16, Residency::kStream), long_prompt, 1);
    hidden.push_back(p.stats.prefetch_hidden_fraction);
    stall.push_back(p.stats.stall_ms);
    load.push_back(p.stats.load_ms);
    wall.push_back(p.ms);
  }

  JsonWriter j;
  j.begin_object();
  j.key("bench").value("residency");
  j.key("machine").value(bench::machine_name());
  j.key("model").value(model);
  j.key("window_mib").value(64);
  j.key("resident").begin_object();
  j.key("tokens_generated").value(int64_t(res.tokens.size()));
  j.key("same_tokens_as_cpu_int8").value(res_same);
  j.key("ms").value(res.ms);
  j.key("cpu_int8_ms").value(cpu.ms);
  j.key("residency").raw(res.stats.to_json());
  j.end_object();
  j.key("streamed").begin_object();
  j.key("tokens_generated").value(int64_t(str.tokens.size()));
  j.key("same_tokens_as_resident").value(str_same);
  j.key("ms").value(str.ms);
  j.key("residency").raw(str.stats.to_json());
  j.end_object();
  j.key("prefill").begin_object();
  j.key("prompt_tokens").value(n_prefill);
  j.key("reps").value(reps);
  j.key("median_prefetch_hidden_fraction").value(bench::median(hidden));
  j.key("median_stall_ms").value(bench::median(stall));
  j.key("median_load_ms").value(bench::median(load));
  j.key("median_wall_ms").value(bench::median(wall));
  j.end_object();
  j.end_object();
  std::printf("%s\n", j.str().c_str());
  return res_same && str_same ? 0 : 1;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "residency: error: %s\n", e.what());
    return 1;
  }
}
