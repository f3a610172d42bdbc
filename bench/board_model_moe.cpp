// Board-model benchmark of a MoE model: the modeled RK3588 time and the bytes read per token of a
// Qwen3-30B-A3B-shaped model (w8a8, and w4a8 as `--npu-wtype i4` runs it), resident across IOMMU domains against streamed through one
// window with expert-sized slots. Prints one JSON object.
//
// MODELED, not measured: the simulator in timing-only mode prices ork's real NPU jobs (task split,
// register commands, Q/K/V and each expert's gate/up as one job) with the board cost model
// (src/npu/sim/board_model.h); streamed weights are timed by weights::ModeledLoads, the model that
// `ork run --stats` uses on the simulator: one loader at load_gbps, as deep as the plan's prefetch
// queue, a routed expert's load starting no earlier than its router (or, for a correct decode guess,
// the previous layer's router) named it. The host work between the jobs (norms, RoPE, attention,
// activation quantization) is priced by npu/sim/host_cost.h, a MoE layer as a dense one of the routed
// experts' width (HostShape::moe_ffn; the router's own matmul and top-k are not priced), spread evenly
// over the layers of the timeline (decode at position 128, after RKLLM's prompt); domain switches of
// a resident model are counted as one per domain per token (the planner fills domains in forward order).
// Routing is uniform: decode uses 8 experts per layer, a 128-token prefill chunk 1024 rows over the
// 128 experts (8 rows each, every expert). Streamed units are all loaded again every token (decode)
// and every chunk (prefill): the 2 GiB budget holds 7 % of the weights, so cross-token reuse is
// left out (a bound on the loading, not a prediction of cache hits).
// Usage: board_model_moe [--board-profile FILE]
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/json.h"
#include "npu/device.h"
#include "npu/matmul.h"
#include "npu/sim/host_cost.h"
#include "ops/attention_blocked.h"
#include "weights/modeled_loads.h"

using namespace ork;

namespace {

// Qwen3-30B-A3B's shape as the issue gives it, matching zyzshishui/slime scripts/models/qwen3-30B-A3B.sh
// (a Megatron recipe: 48 layers, hidden 2048, 32 heads, 4 query groups of 128 channels, 128 experts,
// top-8, expert FFN 768, vocab 151936, untied output); the Hugging Face config.json was not read.
struct MoeShape {
  const char* name = "qwen3-30b-a3b";
  int64_t hidden = 2048, layers = 48, heads = 32, kv_heads = 4, head_dim = 128;
  int64_t experts = 128, used = 8, expert_ff = 768, vocab = 151936;
};

// The device form of the weights: int8 (w8a8), or int4 with W4A8 by splitting (`--npu-wtype i4`:
// two int4 activation rows per token, half the weight bytes).
struct Form {
  const char* name;
  npu::Dtype dtype;
};
constexpr Form kW8a8{"w8a8", npu::Dtype::kI8};
constexpr Form kW4a8{"w4a8", npu::Dtype::kI4};

struct Job {
  int64_t m, k;
  std::vector<int64_t> ns;  // one weight per entry
  bool expert;              // a routed expert's job (its load waits for the router)
};

// The modeled ns and DDR bytes of one job, from the timing-only simulator.
struct Priced {
  double ns = 0, ddr = 0, submits = 0;
};
Priced price(npu::Device& dev, npu::MatmulScratch& scratch, const Job& job, const Form& form) {
  const int64_t m = form.dtype == npu::Dtype::kI4 ? 2 * job.m : job.m;  // W4A8: two int4 rows per token
  std::vector<npu::PackedWeight> ws(job.ns.size());
  std::vector<const npu::PackedWeight*> wp;
  std::vector<std::vector<int32_t>> c(job.ns.size());
  std::vector<void*> cp;
  for (size_t i = 0; i < job.ns.size(); ++i) {
    ws[i].n = job.ns[i], ws[i].k = job.k, ws[i].dtype = form.dtype;
    ws[i].buf = dev.alloc(npu::packed_weight_bytes(job.ns[i], job.k, form.dtype), 0);  // timing only
    wp.push_back(&ws[i]);
    c[i].resize(size_t(m * job.ns[i]));
    cp.push_back(c[i].data());
  }
  std::vector<int8_t> a(size_t(m * job.k), 1);
  npu::run_matmul_group(dev, scratch, wp, a.data(), m, cp);  // builds the job once
  const npu::sim::SimStats before = dev.sim_kernel()->stats();
  npu::run_matmul_group(dev, scratch, wp, a.data(), m, cp);
  const npu::sim::SimStats after = dev.sim_kernel()->stats();
  return {after.modeled_ns - before.modeled_ns, double(after.modeled_ddr_bytes - before.modeled_ddr_bytes),
          double(after.submits - before.submits)};
}

// One layer's jobs for `tokens` tokens with `experts_run` experts of `rows` rows each.
std::vector<Job> layer_jobs(const MoeShape& s, int64_t tokens, int64_t experts_run, int64_t rows) {
  const int64_t q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim;
  std::vector<Job> jobs = {{tokens, s.hidden, {q, kv, kv}, false}, {tokens, q, {s.hidden}, false}};
  for (int64_t e = 0; e < experts_run; ++e) {
    jobs.push_back({rows, s.hidden, {s.expert_ff, s.expert_ff}, true});  // gate, up
    jobs.push_back({rows, s.expert_ff, {s.hidden}, true});              // down
  }
  return jobs;
}

struct PhaseResult {
  double compute_ns = 0, ddr = 0, submits = 0, weight_bytes = 0;
  double host_ns = 0;  // host work of the pass (in compute_ns too)
  double streamed_ns = 0, load_ns = 0, stall_ns = 0;
};

// The modeled host work of a pass of `tokens` tokens (one: a decoded token at position 128; more: a
// prompt chunk from position 0).
double host_ns(const npu::sim::BoardProfile& board, const MoeShape& s, const Form& form, int64_t tokens) {
  npu::sim::HostShape h;
  h.hidden = s.hidden, h.layers = s.layers, h.heads = s.heads, h.kv_heads = s.kv_heads, h.head_dim = s.head_dim;
  h.ff = s.used * s.expert_ff, h.vocab = s.vocab;
  h.norm_fold = form.dtype == npu::Dtype::kI4;  // int4 weights carry their input's norm weight
  h.glu_from_sums = h.scale_in_readers = h.residual_in_quantize = h.moe_ffn = true;  // as the runtime runs it
  const npu::sim::HostPass pass = tokens == 1 ? npu::sim::sequence_pass(128, 1, 1)
                                              : npu::sim::sequence_pass(0, tokens, 1, ops::kAttentionTileTokens);
  return npu::sim::cost_host_pass(board, h, pass).ns;
}

// Prices the jobs of one pass (every layer, then the output for one row) and the host work between
// them; streamed: each weight loaded once in the pass, at load_gbps, `slots` deep; routed experts
// requested when their layer's router ran (guessed_ahead: one layer earlier, as a correct decode guess).
PhaseResult run_phase(npu::Device& dev, const npu::sim::BoardProfile& board, const MoeShape& s, const Form& form,
                      int64_t tokens, int64_t experts_run, int64_t rows, uint32_t slots, bool guessed_ahead) {
  const double load_gbps = board.load_gbps;
  npu::MatmulScratch scratch(dev);
  const std::vector<Job> layer = layer_jobs(s, tokens, experts_run, rows);
  std::vector<Priced> priced;
  for (const Job& j : layer) priced.push_back(price(dev, scratch, j, form));
  const Job out{1, s.hidden, {s.vocab}, false};
  const Priced out_p = price(dev, scratch, out, form);
  PhaseResult r;
  r.host_ns = host_ns(board, s, form, tokens);
  weights::ModeledLoads loads(slots, load_gbps);
  double now = 0, router_prev = 0;
  for (int64_t l = 0; l < s.layers; ++l) {
    double router = 0;
    for (size_t i = 0; i < layer.size(); ++i) {
      if (layer[i].expert && router == 0) router = loads.timeline(now);  // the router runs after attention
      for (int64_t n : layer[i].ns) {
        const uint64_t bytes = npu::packed_weight_bytes(n, layer[i].k, form.dtype);
        r.weight_bytes += double(bytes);
        const double requested = layer[i].expert ? (guessed_ahead && l > 0 ? router_prev : router) : 0.0;
        loads.acquire(now, bytes, true, requested);
      }
      now += priced[i].ns;
      r.compute_ns += priced[i].ns;
      r.ddr += priced[i].ddr;
      r.submits += priced[i].submits;
    }
    router_prev = router;
    now += r.host_ns / double(s.layers);  // the layer's host work, while the loader goes on
  }
  for (int64_t n : out.ns) {
    const uint64_t bytes = npu::packed_weight_bytes(n, out.k, form.dtype);
    r.weight_bytes += double(bytes);
    loads.acquire(now, bytes, true, 0.0);
  }
  now += out_p.ns;
  r.compute_ns += out_p.ns;
  r.ddr += out_p.ddr;
  r.submits += out_p.submits;
  r.compute_ns += r.host_ns;
  r.load_ns = loads.stats().load_ns;
  r.stall_ns = loads.stats().stall_ns;
  r.streamed_ns = now + r.stall_ns;
  return r;
}

void write_phase(JsonWriter& j, const PhaseResult& r, int64_t tokens, double switch_ns, double switches) {
  const double resident_ns = r.compute_ns + switches * switch_ns;
  j.begin_object();
  j.key("weight_bytes_read_per_token").value(r.weight_bytes / double(tokens));
  j.key("ddr_bytes_per_token").value(r.ddr / double(tokens));
  j.key("submits_per_token").value(r.submits / double(tokens));
  j.key("host_modeled_ms").value(r.host_ns / 1e6);
  j.key("resident").begin_object();
  j.key("modeled_ms").value(resident_ns / 1e6);
  j.key("tok_per_s").value(double(tokens) / (resident_ns / 1e9));
  j.key("domain_switches").value(switches);
  j.end_object();
  j.key("streamed").begin_object();
  j.key("modeled_ms").value(r.streamed_ns / 1e6);
  j.key("tok_per_s").value(double(tokens) / (r.streamed_ns / 1e9));
  j.key("bytes_loaded_per_token").value(r.weight_bytes / double(tokens));
  j.key("load_ms").value(r.load_ns / 1e6);
  j.key("stall_ms").value(r.stall_ns / 1e6);
  j.key("prefetch_hidden_fraction").value(r.load_ns > 0 ? 1.0 - r.stall_ns / r.load_ns : 1.0);
  j.end_object();
  j.end_object();
}

// The figures of one device form of the weights: the model's packed bytes, its resident domains, the
// streamed slots, and every phase resident and streamed.
void write_form(JsonWriter& j, npu::Device& dev, const npu::sim::BoardProfile& board, const MoeShape& s,
                const Form& form) {
  const int64_t q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim;
  const double expert_bytes = 2.0 * double(npu::packed_weight_bytes(s.expert_ff, s.hidden, form.dtype)) +
                              double(npu::packed_weight_bytes(s.hidden, s.expert_ff, form.dtype));
  const double attn_bytes = double(npu::packed_weight_bytes(q, s.hidden, form.dtype) +
                                   2 * npu::packed_weight_bytes(kv, s.hidden, form.dtype) +
                                   npu::packed_weight_bytes(s.hidden, q, form.dtype));
  const double out_bytes = double(npu::packed_weight_bytes(s.vocab, s.hidden, form.dtype));
  const double total = double(s.layers) * (attn_bytes + double(s.experts) * expert_bytes) + out_bytes;
  // Resident: domains of 4 GiB filled to about 7/8 (footprint rounding and the scratch).
  const double window = double(dev.caps().window_bytes);
  const double domains = std::ceil(total / (window * 7 / 8));
  // Streamed: the budget of the default --wcache-budget-mb 3072 cut to half a window; the prefetch
  // queue as deep as it holds expert weights (weights::Plan, expert-sized slots).
  const double budget = window / 2;
  const uint32_t slots = uint32_t(budget / double(npu::packed_weight_bytes(s.expert_ff, s.hidden, form.dtype))) - 1;
  const double switch_ns = board.domain_switch_us * 1e3;

  j.key("packed_weight_bytes").value(total);
  j.key("expert_bytes").value(expert_bytes);
  j.key("resident_domains").value(domains);
  j.key("stream_budget_bytes").value(budget);
  j.key("expert_slots").value(std::floor(budget / expert_bytes));
  j.key("prefetch_slots").value(uint64_t(slots));
  j.key("decode_always_miss");
  write_phase(j, run_phase(dev, board, s, form, 1, s.used, 1, slots, false), 1, switch_ns, domains);
  j.key("decode_every_guess_right");
  write_phase(j, run_phase(dev, board, s, form, 1, s.used, 1, slots, true), 1, switch_ns, domains);
  j.key("prefill_128");
  write_phase(j, run_phase(dev, board, s, form, 128, s.experts, 128 * s.used / s.experts, slots, false), 128,
              switch_ns, domains);
  // Longer prefill chunks: the runtime's chunk is EngineOptions::m_max (runtime::Context::eval_all;
  // the device scratch is reserved for m_max rows). Every expert is loaded once per chunk whatever its
  // length, so more tokens per chunk is more compute per byte loaded. The stream budget loses the
  // larger scratch (its A and C for m rows of the widest weight, the output head), so the queue is
  // shallower.
  for (const int64_t m : {int64_t(256), int64_t(512)}) {
    const double scratch = double(m) * double(s.vocab) * 4.0 + double(m) * double(s.hidden);
    const uint32_t slots_m = uint32_t((budget - scratch) / double(npu::packed_weight_bytes(s.expert_ff, s.hidden,
                                                                                           form.dtype))) - 1;
    j.key("prefill_" + std::to_string(m));
    write_phase(j, run_phase(dev, board, s, form, m, s.experts, m * s.used / s.experts, slots_m, false), m,
                switch_ns, domains);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string profile;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--board-profile") == 0 && i + 1 < argc) {
      profile = argv[++i];
    } else {
      std::fprintf(stderr, "usage: board_model_moe [--board-profile FILE]\n");
      return 2;
    }
  }
  try {
    npu::sim::SimOptions o;
    o.board = npu::sim::load_board_profile(profile);
    o.timing_only = true;
    auto dev = npu::Device::open_sim(o);
    const MoeShape s;
    JsonWriter j;
    j.begin_object();
    j.key("bench").value("board_model_moe");
    j.key("modeled").value(true);
    j.key("what").value("RK3588 board time of the NPU matmuls of a Qwen3-30B-A3B-shaped MoE model, w8a8 (top level) "
                        "and w4a8 (`w4a8`: --npu-wtype i4, W4A8 by splitting), resident across IOMMU domains vs "
                        "streamed (expert-sized slots, routed prefetch, weights::ModeledLoads); host work priced (npu/sim/host_cost.h, HostShape::moe_ffn); "
                        "uniform routing; streamed weights loaded again every pass");
    j.key("machine").value(bench::machine_name());
    j.key("profile").raw(npu::sim::board_profile_json(o.board));
    j.key("shape").begin_object();
    j.key("name").value(s.name).key("hidden").value(s.hidden).key("layers").value(s.layers);
    j.key("heads").value(s.heads).key("kv_heads").value(s.kv_heads).key("head_dim").value(s.head_dim);
    j.key("experts").value(s.experts).key("experts_used").value(s.used).key("expert_ff").value(s.expert_ff);
    j.key("vocab").value(s.vocab);
    j.end_object();
    write_form(j, *dev, o.board, s, kW8a8);
    j.key(kW4a8.name).begin_object();
    write_form(j, *dev, o.board, s, kW4a8);
    j.end_object();
    j.end_object();
    std::printf("%s\n", j.str().c_str());
  } catch (const Error& e) {
    std::fprintf(stderr, "board_model_moe: %s\n", e.what());
    return 1;
  }
  return 0;
}
