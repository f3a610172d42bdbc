// Board-model benchmark: the modeled RK3588 time of the NPU matmuls of one decoded token (M = 1) and
// of a 128-token prefill, for models shaped like Qwen2.5-0.5B, Qwen2.5-1.5B, Phi-3-mini and
// Llama-3-8B, w8a8 — beside RKLLM's published figures. Prints one JSON object.
//
// MODELED, not measured: the simulator in timing-only mode runs ork's real NPU path (task split,
// register commands, Q/K/V and gate/up as one job each as ork submits them) and the board cost model
// (src/npu/sim/board_model.h, docs/board-model.md) prices each job; the host work between the matmuls
// (norms, RoPE, the f16 KV cache, attention, sampling, quantizing activations) is priced from the
// shape by npu/sim/host_cost.h — the decoded token at position 128, after a 128-token prompt.
// `matmuls_only_tok_per_s` leaves the host work out (the figure earlier results reported).
// The *_schedule_auto phases price what `--schedule auto` would run (runtime/schedule.h): each job on
// the NPU, its matmuls on the CPU's int8 path, or split along N between them, whichever the model
// prices lowest — the CPU side priced by the same profile's CPU parameters (sim::cost_cpu_matmul_ns),
// a split by sim::cost_overlapped_ns (both sides sharing ddr_total_gbps).
// The *_w4a8 phases price `--npu-wtype i4` as ork runs it (runtime/npu_matmul.h): W4A8 by splitting
// (2·M int4 activation rows), int4 weights with one scale per row in K chunks of 480 columns
// (npu/task_split_int4.h), through the same jobs as int8: Q/K/V and gate/up one job each, N spread
// over the three cores, register commands built once; each task priced at the int4 MAC rate with
// its int4 bytes. The *_w4a8_g32_earlier phases price the earlier int4 path (groups of 32: one task
// per 32-column group, npu::matmul_i4_chunks, one job per linear, one core), for comparison.
// Every phase has a breakdown of its time: submits × submit_us, tasks × task_us, the DDR bytes at
// ddr_gbps, the busiest core, the CPU's share. *_w4a8_schedule_auto: `--npu-wtype i4 --schedule
// auto`, the CPU side priced as the CPU int4 path (runtime/cpu_int4_cost.h: 0.5 byte per weight).
// The *_w4a4 phases price `--npu-wtype i4a4`: the same int4 weights and jobs with int4 activations,
// one int4 row per token (W4A4: half the activation rows and MACs of W4A8 by splitting).
// Usage: board_model [--board-profile FILE] [--model NAME]   (--model: price that shape only)
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/json.h"
#include "npu/device.h"
#include "npu/layout_int4.h"
#include "npu/matmul.h"
#include "npu/matmul_int4.h"
#include "npu/sim/host_cost.h"
#include "ops/attention_blocked.h"
#include "runtime/schedule.h"

using namespace ork;

namespace {

struct Shape {
  const char* name;
  int64_t hidden, layers, heads, kv_heads, head_dim, ff, vocab;
  double rkllm_decode, rkllm_prefill;  // tok/s; prefill from TTFT at 128 tokens
  const char* rkllm_source;
  bool qkv_bias;  // Q/K/V biases (Qwen2's attention), added on the host
};

// Shapes from the models' published configs; RKLLM figures from airockchip/rknn-llm benchmark.md
// (878f936; 128-token prompt, w8a8, RK3588) — Llama-3-8B from README 1a502afb (v1.1.0, 64-token
// prompt, TTFT 1128 ms).
const Shape kShapes[] = {
    {"qwen2.5-0.5b", 896, 24, 14, 2, 64, 4864, 151936, 41.58, 128 / 0.1459, "rknn-llm benchmark.md 878f936 (Qwen2-0.5B)", true},
    {"qwen2.5-1.5b", 1536, 28, 12, 2, 128, 8960, 151936, 16.69, 128 / 0.37831, "rknn-llm benchmark.md 878f936", true},
    {"phi-3-mini", 3072, 32, 32, 32, 96, 8192, 32064, 7.45, 128 / 1.01728, "rknn-llm benchmark.md 878f936", false},
    {"llama-3-8b", 4096, 32, 32, 8, 128, 14336, 128256, 3.79, 64 / 1.128, "rknn-llm README 1a502afb (v1.1.0)", false},
};

struct Phase {
  double ns = 0, submits = 0, tasks = 0, ddr = 0, switches = 0;
  double busy[3] = {0, 0, 0};
  double cpu_ns = 0, cpu_matmuls = 0;  // the schedule's CPU matmuls (schedule auto only)
  double splits = 0;                   // calls split along N between the NPU and the CPU
  double host_ns = 0;                  // host work between the matmuls (npu/sim/host_cost.h), in ns
  double host_by_kind[npu::sim::kHostKinds] = {};  // host_ns by npu::sim::HostKind
};

// The decoded token is priced at this position: after RKLLM's 128-token prompt.
constexpr int64_t kDecodePosition = 128;

// Adds the host work of the phase's pass (m = 1: one decoded token at kDecodePosition; else an
// m-token prompt from position 0), with the KV cache in f16 (ork's default), to its time.
// norm_fold: int4 weights (npu/sim/host_cost.h HostShape::norm_fold).
void add_host(const npu::sim::BoardProfile& p, const Shape& s, int64_t m, Phase& ph, bool norm_fold) {
  npu::sim::HostShape h;
  h.hidden = s.hidden, h.layers = s.layers, h.heads = s.heads, h.kv_heads = s.kv_heads, h.head_dim = s.head_dim;
  h.ff = s.ff, h.vocab = s.vocab, h.qkv_bias = s.qkv_bias, h.norm_fold = norm_fold;
  h.glu_from_sums = true;  // gate/up's results scaled in ffn_down's quantizing pass (MatmulBackend::ffn)
  h.scale_in_readers = true;  // Q/K/V's, attn_output's, ffn_down's scaled by the passes that read them
  h.residual_in_quantize = true;  // each residual add and norm done by the next input's quantizing pass
  const npu::sim::HostPass pass = m == 1 ? npu::sim::sequence_pass(kDecodePosition, 1, 1) : npu::sim::sequence_pass(0, m, 1, ops::kAttentionTileTokens);
  const npu::sim::HostCost c = npu::sim::cost_host_pass(p, h, pass);
  ph.host_ns += c.ns;
  ph.ns += c.ns;
  for (int k = 0; k < npu::sim::kHostKinds; ++k) ph.host_by_kind[k] += c.ns_by_kind[k];
}

// What the simulator accounted between `before` and `after`, added `times` times to `ph`.
void add_sim_delta(const npu::sim::SimStats& before, const npu::sim::SimStats& after, double times, Phase& ph) {
  ph.ns += times * (after.modeled_ns - before.modeled_ns);
  ph.submits += times * double(after.submits - before.submits);
  ph.tasks += times * double(after.tasks - before.tasks);
  ph.ddr += times * double(after.modeled_ddr_bytes - before.modeled_ddr_bytes);
  ph.switches += times * double(after.domain_switches - before.domain_switches);
  for (int i = 0; i < 3; ++i) ph.busy[i] += times * (after.modeled_core_busy_ns[i] - before.modeled_core_busy_ns[i]);
}

// The modeled cost of one job of int8 matmuls sharing an (m × k) input, one per entry of `ns` (an
// (n × k) weight each), added `times` times to `ph`.
// kI4: W4A8 by splitting, 2·m int4 rows against int4 weights; with a4 (W4A4) m int4 rows.
void price(npu::Device& dev, npu::MatmulScratch& scratch, int64_t m, int64_t k, std::vector<int64_t> ns,
           double times, Phase& ph, npu::Dtype wtype = npu::Dtype::kI8, bool a4 = false) {
  if (wtype == npu::Dtype::kI4 && !a4) m *= 2;
  std::vector<npu::PackedWeight> ws(ns.size());
  std::vector<const npu::PackedWeight*> wp;
  std::vector<std::vector<int32_t>> c(ns.size());
  std::vector<void*> cp;
  for (size_t i = 0; i < ns.size(); ++i) {
    ws[i].n = ns[i], ws[i].k = k, ws[i].dtype = wtype;
    ws[i].buf = dev.alloc(npu::packed_weight_bytes(ns[i], k, wtype), 0);  // never packed: timing only
    wp.push_back(&ws[i]);
    c[i].resize(size_t(m * ns[i]));
    cp.push_back(c[i].data());
  }
  std::vector<int8_t> a(size_t(m * k), 1);
  npu::run_matmul_group(dev, scratch, wp, a.data(), m, cp);  // builds the job once
  const npu::sim::SimStats before = dev.sim_kernel()->stats();
  npu::run_matmul_group(dev, scratch, wp, a.data(), m, cp);
  const npu::sim::SimStats after = dev.sim_kernel()->stats();
  add_sim_delta(before, after, times, ph);
}

// Where `--schedule auto` runs the job: on the NPU (priced by the simulator), its matmuls on the CPU,
// or split along N (the NPU part priced by the simulator, the time the call outlasts it added as CPU
// time, as runtime::HybridMatmul counts it).
void price_scheduled(npu::Device& dev, npu::MatmulScratch& scratch, const runtime::Scheduler* sched, int64_t m,
                     int64_t k, std::vector<int64_t> ns, double times, Phase& ph, npu::Dtype wtype, bool a4) {
  const runtime::Choice c = sched != nullptr ? sched->choose(m, k, ns) : runtime::Choice{};
  if (c.split) {
    price(dev, scratch, m, k, c.npu_rows, times, ph, wtype, a4);
    const double extra = std::max(0.0, c.split_ns - c.split_npu_ns);
    ph.ns += times * extra;
    ph.cpu_ns += times * extra;
    ph.cpu_matmuls += times * double(ns.size());
    ph.splits += times;
    return;
  }
  if (!c.cpu) {
    price(dev, scratch, m, k, std::move(ns), times, ph, wtype, a4);
    return;
  }
  for (int64_t n : ns) {
    const double t = sched->cpu_ns(m, k, n);
    ph.ns += times * t;
    ph.cpu_ns += times * t;
    ph.cpu_matmuls += times;
  }
}

// grouped: Q/K/V and gate/up as one job each (as ork runs a resident model); else one job per matmul.
// sched: each group where --schedule auto puts it (grouped only); null: all on the NPU.
// wtype: the device weight type (kI4: --npu-wtype i4); a4: int4 activations (--npu-wtype i4a4).
Phase price_model(npu::Device& dev, const Shape& s, int64_t m, bool grouped,
                  const runtime::Scheduler* sched = nullptr, npu::Dtype wtype = npu::Dtype::kI8, bool a4 = false) {
  npu::MatmulScratch scratch(dev);
  Phase ph;
  const auto price = [&](npu::Device& d, npu::MatmulScratch& sc, int64_t mm, int64_t k, std::vector<int64_t> ns,
                         double times, Phase& p) {
    price_scheduled(d, sc, sched, mm, k, std::move(ns), times, p, wtype, a4);
  };
  const int64_t q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim;
  const double L = double(s.layers);
  if (grouped) {
    price(dev, scratch, m, s.hidden, {q, kv, kv}, L, ph);  // attn_q, attn_k, attn_v
    price(dev, scratch, m, s.hidden, {s.ff, s.ff}, L, ph);  // ffn_gate, ffn_up
  } else {
    price(dev, scratch, m, s.hidden, {q}, L, ph);
    price(dev, scratch, m, s.hidden, {kv}, 2 * L, ph);
    price(dev, scratch, m, s.hidden, {s.ff}, 2 * L, ph);
  }
  price(dev, scratch, m, q, {s.hidden}, L, ph);     // attn_output
  price(dev, scratch, m, s.ff, {s.hidden}, L, ph);  // ffn_down
  // The output projection runs for the last position only, in decode and prefill alike.
  price(dev, scratch, 1, s.hidden, {s.vocab}, 1, ph);
  add_host(dev.sim_kernel()->options().board, s, m, ph, wtype == npu::Dtype::kI4);
  return ph;
}

// The modeled cost of one W4A8-by-splitting matmul of the earlier int4 path (an (n × k) int4 weight,
// m tokens, one task per K chunk of `chunk` columns, one job, core 0), added `times` times to `ph`.
void price_i4(npu::Device& dev, int64_t m, int64_t k, int64_t n, int64_t chunk, double times, Phase& ph) {
  const npu::Buffer w = dev.alloc(npu::packed_weight_bytes_i4(n, k), 0);  // never packed: timing only
  std::vector<int8_t> a(size_t(2 * m * k), 1);
  std::vector<int32_t> c(size_t(npu::i4_k_chunks(npu::pad_k(k), chunk) * 2 * m * n));
  const npu::sim::SimStats before = dev.sim_kernel()->stats();
  npu::matmul_i4_chunks(dev, w, a.data(), 2 * m, k, n, chunk, c.data());
  const npu::sim::SimStats after = dev.sim_kernel()->stats();
  add_sim_delta(before, after, times, ph);
}

Phase price_model_i4(npu::Device& dev, const Shape& s, int64_t m, int64_t chunk) {
  Phase ph;
  const int64_t q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim;
  const double L = double(s.layers);
  price_i4(dev, m, s.hidden, q, chunk, L, ph);
  price_i4(dev, m, s.hidden, kv, chunk, 2 * L, ph);
  price_i4(dev, m, s.hidden, s.ff, chunk, 2 * L, ph);
  price_i4(dev, m, q, s.hidden, chunk, L, ph);
  price_i4(dev, m, s.ff, s.hidden, chunk, L, ph);
  price_i4(dev, 1, s.hidden, s.vocab, chunk, 1, ph);
  add_host(dev.sim_kernel()->options().board, s, m, ph, true);
  return ph;
}

// Where the phase's time goes (ms per token), from its counts and the profile: the fixed cost of
// its submits and of its tasks (summed over the cores), its DDR bytes at the full ddr_gbps, and
// the MACs it ran at the int8 / int4 rate of all three cores.
void write_breakdown(JsonWriter& j, const Phase& ph, int64_t tokens, const npu::sim::BoardProfile& p) {
  const double t = double(tokens);
  j.key("breakdown_ms_per_token").begin_object();
  j.key("submits_x_submit_us").value(ph.submits * p.submit_us / 1e3 / t);
  j.key("tasks_x_task_us_all_cores").value(ph.tasks * p.task_us / 1e3 / t);
  j.key("ddr_bytes_at_ddr_gbps").value(ph.ddr / (p.ddr_gbps * 1e9) * 1e3 / t);
  j.key("core_busy_max").value(std::max({ph.busy[0], ph.busy[1], ph.busy[2]}) / 1e6 / t);
  j.key("schedule_cpu_matmuls").value(ph.cpu_ns / 1e6 / t);
  j.key("host_work").value(ph.host_ns / 1e6 / t);
  j.end_object();
  j.key("host_work_ms_per_token").begin_object();  // host_work by what the host does
  for (int k = 0; k < npu::sim::kHostKinds; ++k) {
    j.key(npu::sim::host_kind_name(npu::sim::HostKind(k))).value(ph.host_by_kind[k] / 1e6 / t);
  }
  j.end_object();
}

void write_phase(JsonWriter& j, const Phase& ph, int64_t tokens, const npu::sim::BoardProfile& p) {
  j.begin_object();
  write_breakdown(j, ph, tokens, p);
  j.key("modeled_ms").value(ph.ns / 1e6);
  j.key("modeled_npu_ms").value((ph.ns - ph.cpu_ns - ph.host_ns) / 1e6);
  j.key("host_modeled_ms").value(ph.host_ns / 1e6);
  j.key("tok_per_s").value(double(tokens) / (ph.ns / 1e9));
  j.key("matmuls_only_tok_per_s").value(double(tokens) / ((ph.ns - ph.host_ns) / 1e9));
  j.key("submits_per_token").value(ph.submits / double(tokens));
  j.key("tasks_per_token").value(ph.tasks / double(tokens));
  j.key("ddr_bytes_per_token").value(ph.ddr / double(tokens));
  j.key("domain_switches_per_token").value(ph.switches / double(tokens));
  j.key("npu_busy_fraction").begin_array();
  for (double b : ph.busy) j.value(b / ph.ns);  // of the whole modeled time, host work included
  j.end_array();
  if (ph.cpu_matmuls > 0) {
    j.key("cpu_modeled_ms").value(ph.cpu_ns / 1e6);
    j.key("cpu_matmuls_per_token").value(ph.cpu_matmuls / double(tokens));
    j.key("split_calls_per_token").value(ph.splits / double(tokens));
  }
  j.end_object();
}

}  // namespace

int main(int argc, char** argv) {
  std::string profile, only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--board-profile") == 0 && i + 1 < argc) {
      profile = argv[++i];
    } else if (std::strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: board_model [--board-profile FILE] [--model NAME]\n");
      return 2;
    }
  }
  if (!only.empty() && std::none_of(std::begin(kShapes), std::end(kShapes),
                                    [&](const Shape& s) { return only == s.name; })) {
    std::string names;
    for (const Shape& s : kShapes) names += std::string(names.empty() ? "" : ", ") + s.name;
    std::fprintf(stderr, "board_model: --model %s: not one of %s\n", only.c_str(), names.c_str());
    return 2;
  }
  try {
    npu::sim::SimOptions o;
    o.board = npu::sim::load_board_profile(profile);
    o.timing_only = true;
    auto dev = npu::Device::open_sim(o);
    JsonWriter j;
    j.begin_object();
    j.key("bench").value("board_model");
    j.key("modeled").value(true);
    j.key("what").value("RK3588 board time of one decoded token (at position 128) and of a 128-token prompt: the NPU "
                        "jobs (w8a8; Q/K/V and gate/up one job each, as ork runs a resident model; "
                        "*_one_job_per_matmul: the earlier pattern), the schedule's CPU matmuls and the host work "
                        "between them (npu/sim/host_cost.h, KV cache f16); matmuls_only_tok_per_s leaves the host "
                        "work out");
    j.key("machine").value(bench::machine_name());
    j.key("profile").raw(npu::sim::board_profile_json(o.board));
    j.key("models").begin_array();
    for (const Shape& s : kShapes) {
      if (!only.empty() && only != s.name) continue;
      j.begin_object();
      j.key("name").value(s.name);
      j.key("shape").begin_object();
      j.key("hidden").value(s.hidden).key("layers").value(s.layers).key("heads").value(s.heads);
      j.key("kv_heads").value(s.kv_heads).key("head_dim").value(s.head_dim).key("ff").value(s.ff);
      j.key("vocab").value(s.vocab);
      j.end_object();
      j.key("decode");
      write_phase(j, price_model(*dev, s, 1, true), 1, o.board);
      j.key("prefill_128");
      write_phase(j, price_model(*dev, s, 128, true), 128, o.board);
      j.key("decode_one_job_per_matmul");
      write_phase(j, price_model(*dev, s, 1, false), 1, o.board);
      j.key("prefill_128_one_job_per_matmul");
      write_phase(j, price_model(*dev, s, 128, false), 128, o.board);
      const runtime::Scheduler sched(runtime::Schedule::kAuto, o.board, dev->caps().cores, 128, true);
      j.key("decode_schedule_auto");
      write_phase(j, price_model(*dev, s, 1, true, &sched), 1, o.board);
      j.key("prefill_128_schedule_auto");
      write_phase(j, price_model(*dev, s, 128, true, &sched), 128, o.board);
      j.key("decode_w4a8");
      write_phase(j, price_model(*dev, s, 1, true, nullptr, npu::Dtype::kI4), 1, o.board);
      j.key("prefill_128_w4a8");
      write_phase(j, price_model(*dev, s, 128, true, nullptr, npu::Dtype::kI4), 128, o.board);
      const runtime::Scheduler sched_i4(runtime::Schedule::kAuto, o.board, dev->caps().cores, 128, true,
                                        npu::Dtype::kI4);
      j.key("decode_w4a8_schedule_auto");
      write_phase(j, price_model(*dev, s, 1, true, &sched_i4, npu::Dtype::kI4), 1, o.board);
      j.key("prefill_128_w4a8_schedule_auto");
      write_phase(j, price_model(*dev, s, 128, true, &sched_i4, npu::Dtype::kI4), 128, o.board);
      j.key("decode_w4a8_one_job_per_matmul");
      write_phase(j, price_model(*dev, s, 1, false, nullptr, npu::Dtype::kI4), 1, o.board);
      j.key("decode_w4a4");
      write_phase(j, price_model(*dev, s, 1, true, nullptr, npu::Dtype::kI4, true), 1, o.board);
      j.key("prefill_128_w4a4");
      write_phase(j, price_model(*dev, s, 128, true, nullptr, npu::Dtype::kI4, true), 128, o.board);
      const runtime::Scheduler sched_a4(runtime::Schedule::kAuto, o.board, dev->caps().cores, 128, true,
                                        npu::Dtype::kI4, true);
      j.key("decode_w4a4_schedule_auto");
      write_phase(j, price_model(*dev, s, 1, true, &sched_a4, npu::Dtype::kI4, true), 1, o.board);
      j.key("prefill_128_w4a4_schedule_auto");
      write_phase(j, price_model(*dev, s, 128, true, &sched_a4, npu::Dtype::kI4, true), 128, o.board);
      j.key("decode_w4a8_g32_earlier");
      write_phase(j, price_model_i4(*dev, s, 1, 32), 1, o.board);
      j.key("rkllm").begin_object();
      j.key("decode_tok_per_s").value(s.rkllm_decode).key("prefill_tok_per_s").value(s.rkllm_prefill);
      j.key("source").value(s.rkllm_source);
      j.end_object();
      j.end_object();
    }
    j.end_array();
    j.end_object();
    std::printf("%s\n", j.str().c_str());
  } catch (const Error& e) {
    std::fprintf(stderr, "board_model: %s\n", e.what());
    return 1;
  }
  return 0;
}
