// ork bench — prompt-processing and token-generation speed (modelled on llama-bench), with the
// decode's weight bandwidth beside the machine's measured memory copy bandwidth.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "device_flags.h"
#include "bench_speculative.h"
#include "board_report.h"
#include "compute_probe.h"
#include "runtime/hybrid_matmul.h"
#include "speculative_flags.h"
#include "core/json.h"
#include "core/log.h"
#include "core/machine.h"
#include "core/timer.h"
#include "memory_bandwidth.h"
#include "ops/cpu_features.h"
#include "runtime/context.h"
#include "runtime/engine.h"

namespace ork::cli {
namespace {

const std::vector<OptionSpec> kBenchOptions = {
    {{"-m", "--model"}, true, "GGUF model file (default: the embedded default model)"},
    {{"-p", "--n-prompt"}, true, "prompt tokens evaluated in one batch (default 128; 0: skip)"},
    {{"-n", "--n-gen"}, true, "tokens generated one at a time (default 64; 0: skip)"},
    {{"-d", "--n-depth"}, true,
     "tokens already in the context before each timed test (default 0; filled once, untimed, as llama-bench -d)"},
    {{"-t", "--threads"}, true, "threads (default: all cores)"},
    {{"--pin"}, false, "pin threads to CPUs, fastest cores first (the Cortex-A76 cores of an RK3588)"},
    {{"-r", "--repetitions"}, true, "repetitions of each test (default 5)"},
    {{"--device"}, true, "cpu (default) | sim | npu"},
    {{"--residency"}, true, "npu/sim weights: auto | resident | stream (default auto)"},
    {{"--bw-mib"}, true, "MiB per memory-bandwidth buffer (default 256; keep it far above the last-level cache)"},
    {{"--exact"}, false, "CPU matmuls on the f32-decode reference path instead of the SIMD kernels"},
    {{"--json"}, false, "print one JSON object instead of the table"},
    {{"-v", "--verbose"}, false, "debug messages on stderr (ORK_VERBOSE=1)"},
    {{"-h", "--help"}, false, "this help"},
};

struct Stats {
  double mean = 0, stddev = 0, median = 0;
};

// Read passes of the probe around each decode repetition (after one untimed pass).
constexpr int kPairedPasses = 3;

Stats stats(const std::vector<double>& v) {
  Stats s;
  if (v.empty()) return s;
  for (double x : v) s.mean += x;
  s.mean /= double(v.size());
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  const size_t h = sorted.size() / 2;
  s.median = sorted.size() % 2 ? sorted[h] : 0.5 * (sorted[h - 1] + sorted[h]);
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(ss / double(v.size() - 1));
  }
  return s;
}

// Bytes of weights one decode step reads: every linear weight, plus one embedding row.
uint64_t weight_bytes_per_token(const model::Model& m) {
  uint64_t bytes = 0;
  for (const model::Linear* l : m.weights().linears()) bytes += l->w->n_bytes;
  const gguf::TensorInfo* e = m.weights().token_embd;
  if (e != nullptr && e->rows() > 0) bytes += e->n_bytes / e->rows();
  return bytes;
}

std::vector<int32_t> random_tokens(int64_t n, int64_t n_vocab, uint32_t seed) {
  std::mt19937 gen{seed};
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (auto& id : t) id = int32_t(gen() % uint32_t(n_vocab));
  return t;
}

}  // namespace

int cmd_bench(const std::vector<std::string>& argv) {
  std::vector<OptionSpec> specs = kBenchOptions;
  specs.insert(specs.end(), kSpeculativeOptions.begin(), kSpeculativeOptions.end());
  specs.insert(specs.end(), kSimOptions.begin(), kSimOptions.end());
  specs.insert(specs.end(), kKvOptions.begin(), kKvOptions.end());
  const Args args("bench", specs, argv);
  if (args.has("--help")) {
    std::printf("usage: ork bench [-m MODEL] [-p 128] [-n 64] [-d 0] [-t N] [-r 5] [--json]\n\n%s",
                format_options(specs).c_str());
    return 0;
  }
  if (args.has("--verbose")) log::set_verbose(true);
  runtime::EngineOptions eo = engine_options(args, "cpu");
  const int64_t n_prompt = args.get_int("--n-prompt", 128, 0, int64_t(1) << 20);
  const int64_t n_gen = args.get_int("--n-gen", 64, 0, int64_t(1) << 20);
  const int64_t n_depth = args.get_int("--n-depth", 0, 0, int64_t(1) << 22);
  const int reps = int(args.get_int("--repetitions", 5, 1, 10000));
  const bool json = args.has("--json");
  const size_t bw_bytes = size_t(args.get_int("--bw-mib", 256, 1, 1 << 16)) << 20;

  // --draft: loaded first (on the target's device: planned first, the target beside it).
  const std::unique_ptr<runtime::Engine> draft = wants_speculative(args) && n_gen > 0 ? load_draft(args, eo) : nullptr;
  runtime::Engine engine(eo);
  const int64_t n_vocab = engine.model().config().n_vocab;
  runtime::Context ctx(engine, n_depth + std::max<int64_t>({n_prompt, n_gen, 1}) + 1);

  // Warm-up (page in the weights, size the scratch), as llama-bench's: the whole prompt once (a
  // shorter batch left the first timed prompt to grow the scratch: ≈ 35 % slower than the rest),
  // then one decode step.
  ctx.eval(random_tokens(std::max<int64_t>(n_prompt, 1), n_vocab, 1));
  ctx.eval(random_tokens(1, n_vocab, 2));
  // The depth: filled once (untimed); every timed test then starts from it, as llama-bench restores
  // its cached depth state before each repetition: truncate keeps the rows, except where a
  // sliding-window ring no longer reaches back (then its saved state is restored).
  ctx.reset();
  if (n_depth > 0) ctx.eval(random_tokens(n_depth, n_vocab, 3));
  bool has_ring = false;
  for (int64_t l = 0; l < engine.model().config().n_layer; ++l) has_ring = has_ring || ctx.kv_rows(l) < ctx.n_ctx();
  const std::vector<uint8_t> depth_state = has_ring ? ctx.state() : std::vector<uint8_t>{};
  const std::vector<int64_t> depth_from = ctx.state_from();
  const auto to_depth = [&] {
    if (ctx.keepable(std::min(n_depth, ctx.n_past())) == n_depth) {
      ctx.truncate(n_depth);
    } else {
      ctx.set_state(depth_state, n_depth, depth_from);
    }
  };

  // The decode's own warm-up: one untimed repetition from the depth, so the timed ones find their KV
  // cache rows in memory (the cache is committed as it fills; llama.cpp clears its whole buffer at
  // creation). Their first touch had made the first timed repetition the slowest — by 11 % (median;
  // 1–22 %, 36 runs) on this project's development VM, where a page's first touch costs ≈ 15–20 µs.
  if (n_gen > 0) {
    to_depth();
    for (int32_t id : random_tokens(n_gen, n_vocab, 4)) ctx.eval({id});
  }

  // On the simulator: the modeled board time of the timed passes (board_report.h).
  std::optional<BoardReport> board;
  if (engine.device() != nullptr && engine.device()->sim_kernel() != nullptr) {
    board.emplace();
    board->profile = engine.device()->sim_kernel()->options().board.name;
    board->cpu_priced = engine.hybrid() != nullptr;
    board->start = board_snapshot(engine);
  }
  std::vector<double> pp, tg;
  for (int r = 0; r < reps && n_prompt > 0; ++r) {
    const std::vector<int32_t> tokens = random_tokens(n_prompt, n_vocab, uint32_t(100 + r));
    to_depth();
    const double t0 = now_ms();
    ctx.eval(tokens);
    pp.push_back(1000.0 * double(n_prompt) / (now_ms() - t0));
  }
  if (board) board->after_prompt = board_snapshot(engine);
  // The read rate, measured next to each decode repetition: before the first, then after each (the
  // higher of the two around a repetition is its reference), since a shared machine's rate drifts.
  std::optional<ReadProbe> probe(std::in_place, engine.pool(), bw_bytes);
  // And, when the CPU decodes, the arithmetic its threads got, before the first repetition and after
  // each (compute_probe.h): repetition r lies between figure r − 1 (or the first) and figure r.
  std::optional<ComputeProbe> compute;
  if (n_gen > 0 && engine.device() == nullptr) compute.emplace(engine.pool());
  std::vector<double> paired_read, paired_cores;
  const double cores_before = compute ? compute->measure(kPairedPasses).cores() : 0.0;
  double read_before = n_gen > 0 ? probe->gbs(kPairedPasses) : 0.0;
  for (int r = 0; r < reps && n_gen > 0; ++r) {
    const std::vector<int32_t> tokens = random_tokens(n_gen, n_vocab, uint32_t(200 + r));
    to_depth();
    const double t0 = now_ms();
    for (int32_t id : tokens) ctx.eval({id});
    tg.push_back(1000.0 * double(n_gen) / (now_ms() - t0));
    const double read_after = probe->gbs(kPairedPasses);
    paired_read.push_back(std::max(read_before, read_after));
    read_before = read_after;
    if (compute) paired_cores.push_back(compute->measure(kPairedPasses).cores());
  }
  if (board) {
    board->end = board_snapshot(engine);
    board->prompt_tokens = n_prompt > 0 ? n_prompt * reps : 0;
    board->decode_tokens = n_gen * reps;
  }

  const uint64_t wbytes = weight_bytes_per_token(engine.model());
  const double read_gbs = probe->gbs(7);
  const bool huge_pages = probe->huge_pages_advised();
  const ComputeProbe::Rate compute_rate = compute ? compute->measure(7) : ComputeProbe::Rate{};
  compute.reset();
  probe.reset();  // its buffer is freed before the copy test allocates two
  const double mem_gbs = copy_bandwidth_gbs(engine.pool(), bw_bytes, 7);
  const Stats spp = stats(pp), stg = stats(tg);
  const double decode_gbs = stg.mean * double(wbytes) / 1e9;
  // Each repetition's decode GB/s over the read rate measured around it.
  std::vector<double> paired_fraction;
  for (size_t r = 0; r < tg.size(); ++r)
    paired_fraction.push_back(paired_read[r] > 0 ? tg[r] * double(wbytes) / 1e9 / paired_read[r] : 0.0);
  const double paired = stats(paired_fraction).median;
  const std::string isa(eo.exact ? std::string("exact") : std::string(ops::isa_name(ops::best_isa())));

  if (json) {
    JsonWriter j;
    j.begin_object();
    j.key("machine").value(machine_name());
    j.key("model").value(eo.model_path);
    j.key("device").value(engine.device_name());
    j.key("kernels").value(isa);
    j.key("threads").value(engine.threads());
    j.key("repetitions").value(int64_t(reps));
    j.key("n_prompt").value(n_prompt);
    j.key("n_gen").value(n_gen);
    j.key("n_depth").value(n_depth);
    // "<test>_tok_per_s" (the mean), _stddev, _median and _runs (every repetition).
    const auto array = [&](const std::string& name, const std::vector<double>& v) {
      j.key(name).begin_array();
      for (double x : v) j.value(x);
      j.end_array();
    };
    const auto test = [&](const std::string& name, const Stats& st, const std::vector<double>& runs) {
      j.key(name).value(st.mean);
      j.key(name + "_stddev").value(st.stddev);
      j.key(name + "_median").value(st.median);
      array(name + "_runs", runs);
    };
    test("pp_tok_per_s", spp, pp);
    test("tg_tok_per_s", stg, tg);
    j.key("weight_bytes_per_token").value(int64_t(wbytes));
    j.key("decode_gb_per_s").value(decode_gbs);
    j.key("memcpy_gb_per_s").value(mem_gbs);
    j.key("decode_bandwidth_fraction").value(mem_gbs > 0 ? decode_gbs / mem_gbs : 0.0);
    j.key("read_gb_per_s").value(read_gbs);
    j.key("read_buffer_huge_pages").value(huge_pages);  // advised, as the weight panels are
    j.key("decode_read_fraction").value(read_gbs > 0 ? decode_gbs / read_gbs : 0.0);
    array("read_gb_per_s_paired_runs", paired_read);
    array("decode_read_fraction_paired_runs", paired_fraction);
    j.key("decode_read_fraction_paired").value(paired);
    // The threads' arithmetic (a CPU decode): an L2-resident Q4_K decode matmul, best of 7, every
    // thread and one thread on its share; their ratio (threads' worth) before the first repetition
    // and after each.
    if (!paired_cores.empty()) {
      j.key("compute_gb_per_s").value(compute_rate.all_gbs);
      j.key("compute_one_thread_gb_per_s").value(compute_rate.one_gbs);
      j.key("compute_cores_before_first_run").value(cores_before);
      array("compute_cores_paired_runs", paired_cores);
    }
    if (board) j.key("board_model").raw(board->to_json());
    if (engine.hybrid() != nullptr) j.key("schedule").raw(engine.hybrid()->stats().to_json());
    if (wants_speculative(args) && n_gen > 0) bench_speculative(args, engine, draft.get(), n_gen, reps, &j);
    j.end_object();
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("model %s: %.1f MB of weights read per token; device %s, kernels %s, %d threads, "
                "%d repetitions\n",
                eo.model_path.c_str(), double(wbytes) / 1e6, engine.device_name(), isa.c_str(),
                engine.threads(), reps);
    std::printf("| test   |            t/s |\n|--------|----------------|\n");
    // Test names as llama-bench prints them: pp128, tg64 @ d4096.
    const std::string at = n_depth > 0 ? " @ d" + std::to_string(n_depth) : std::string();
    const std::string pp_name = "pp" + std::to_string(n_prompt) + at, tg_name = "tg" + std::to_string(n_gen) + at;
    if (n_prompt > 0) std::printf("| %-6s | %7.2f ± %5.2f |\n", pp_name.c_str(), spp.mean, spp.stddev);
    if (n_gen > 0) std::printf("| %-6s | %7.2f ± %5.2f |\n", tg_name.c_str(), stg.mean, stg.stddev);
    if (n_gen > 0)
      std::printf("decode reads %.2f GB/s of weights: %.0f%% of the memory copy bandwidth %.2f GB/s "
                  "(read+write), %.0f%% of the read bandwidth %.2f GB/s (%d threads, best of 7)\n",
                  decode_gbs, mem_gbs > 0 ? 100.0 * decode_gbs / mem_gbs : 0.0, mem_gbs,
                  read_gbs > 0 ? 100.0 * decode_gbs / read_gbs : 0.0, read_gbs, engine.threads());
    if (n_gen > 0)
      std::printf("against the read bandwidth measured around each repetition: %.0f%% (median of %zu)\n",
                  100.0 * paired, paired_fraction.size());
    if (!paired_cores.empty())
      std::printf("%s; after each repetition %.2f threads' worth (median)\n",
                  compute_rate.describe(engine.threads()).c_str(), stats(paired_cores).median);
    if (board) std::printf("%s\n", board->to_text().c_str());
    if (wants_speculative(args) && n_gen > 0) bench_speculative(args, engine, draft.get(), n_gen, reps, nullptr);
  }
  return 0;
}

}  // namespace ork::cli
