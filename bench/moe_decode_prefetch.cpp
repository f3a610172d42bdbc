// Decode prefetch of a streamed MoE model on the simulated NPU: the device-level hit rate of the
// routed experts (their units found loaded and ready when the matmul needs them) and the modeled
// decode time with the predictor's guesses named to the prefetcher (--expert-prefetch predict)
// beside the always-miss baseline (none: nothing named before each layer's router). Prints one JSON
// object.
//
// MODELED, not measured: the simulator prices the NPU jobs and the host work with the board cost
// model (src/npu/sim/board_model.h) and weights::ModeledLoads times the streamed loads (one loader at
// load_gbps; a routed expert's load starts no earlier than it was named; a wrong guess the runtime
// loaded takes the loader's time). The model is generated here (ork-gen-model's library): a
// Mixtral-style llama with skewed routing, q8_0, streamed through a small window so that experts come
// and go. Each configuration runs `--reps` times (fresh engine each); the figures are medians with
// min and max (the cache's LRU state follows the prefetcher thread, so loads may differ run to run).
// Usage: moe_decode_prefetch [--steps N] [--reps R] [--layers L] [--experts X] [--used K]
//                            [--embd E] [--ff F] [--skew S] [--window-mb W] [--board-profile FILE] [--dir D]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "bench_util.h"
#include "core/json.h"
#include "gen_model/gen_model.h"
#include "npu/sim/board_model.h"
#include "runtime/context.h"
#include "runtime/engine.h"

using namespace ork;

namespace {

struct Options {
  int steps = 32, reps = 3, layers = 2, experts = 8, used = 2, embd = 1024, ff = 2048;
  float skew = 4.0f;
  uint32_t window_mb = 24;
  std::string profile, dir = "/tmp";
};

struct Run {
  uint64_t expert_slot_bytes = 0;
  uint32_t expert_slots = 0;
  std::vector<int32_t> tokens;
  weights::ModeledRoutedStats x;  // decode steps only
  double decode_ns = 0, stall_ns = 0;  // modeled, decode steps only
};

double modeled_ns(const runtime::Engine& e) {
  return e.device()->sim_kernel()->stats().modeled_ns + e.host_meter()->modeled_ns() +
         e.modeled_loads()->stats().stall_ns;
}

Run run(const Options& opt, const std::string& path, weights::ExpertPrefetch p) {
  runtime::EngineOptions o;
  o.model_path = path;
  o.device = "sim";
  o.threads = 2;
  o.residency = weights::Residency::kStream;
  o.npu.sim_window_bytes = uint64_t(opt.window_mb) << 20;
  o.npu.sim_domains = 1;
  o.npu.board_profile = opt.profile;
  o.expert_prefetch = p;
  o.persist_path = path + ".orkpack";  // streamed loads read the packed bytes back instead of packing again
  runtime::Engine e(o);
  runtime::Context ctx(e, opt.steps + 16);
  const float* l = nullptr;
  for (int32_t t : {1, 7, 300, 42, 5, 99, 250, 3}) l = ctx.eval({t});  // one token per pass: decode steps
  const weights::ModeledRoutedStats b = e.modeled_loads()->routed_stats();
  const double t0 = modeled_ns(e), s0 = e.modeled_loads()->stats().stall_ns;
  Run r;
  r.expert_slot_bytes = e.plan()->expert_slot_bytes;
  r.expert_slots = e.plan()->expert_slots;
  for (int i = 0; i < opt.steps; ++i) {
    const int32_t next = int32_t(std::max_element(l, l + ctx.n_vocab()) - l);
    r.tokens.push_back(next);
    l = ctx.eval({next});
  }
  const weights::ModeledRoutedStats a = e.modeled_loads()->routed_stats();
  r.x = {a.acquires - b.acquires, a.reused - b.reused, a.hits - b.hits, a.late - b.late,
         a.misses - b.misses, a.wasted - b.wasted, a.wasted_bytes - b.wasted_bytes};
  r.decode_ns = modeled_ns(e) - t0;
  r.stall_ns = e.modeled_loads()->stats().stall_ns - s0;
  e.wait_prefetch_idle();
  return r;
}

void spread(JsonWriter& j, const char* key, std::vector<double> v) {
  j.key(key).begin_object();
  j.key("median").value(bench::median(v));
  j.key("min").value(*std::min_element(v.begin(), v.end()));
  j.key("max").value(*std::max_element(v.begin(), v.end()));
  j.end_object();
}

void write(JsonWriter& j, const std::vector<Run>& runs, int steps) {
  std::vector<double> hit, hits, late, miss, reused, loads, wasted, wasted_bytes, ms, stall;
  for (const Run& r : runs) {
    hit.push_back(r.x.hit_rate());
    hits.push_back(double(r.x.hits));
    late.push_back(double(r.x.late));
    miss.push_back(double(r.x.misses));
    reused.push_back(double(r.x.reused));
    loads.push_back(double(r.x.loads()));
    wasted.push_back(double(r.x.wasted));
    wasted_bytes.push_back(double(r.x.wasted_bytes));
    ms.push_back(r.decode_ns / 1e6 / steps);
    stall.push_back(r.stall_ns / 1e6 / steps);
  }
  j.begin_object();
  j.key("expert_unit_acquires").value(runs[0].x.acquires);
  spread(j, "hit_rate", hit);
  spread(j, "expert_unit_loads", loads);
  spread(j, "ready", hits);
  spread(j, "late", late);
  spread(j, "misses", miss);
  spread(j, "reused", reused);
  spread(j, "wasted_guess_loads", wasted);
  spread(j, "wasted_bytes", wasted_bytes);
  spread(j, "decode_modeled_ms_per_token", ms);
  spread(j, "decode_stall_modeled_ms_per_token", stall);
  j.end_object();
}

int usage() {
  std::fprintf(stderr, "usage: moe_decode_prefetch [--steps N] [--reps R] [--layers L] [--experts X] [--used K] "
                       "[--embd E] [--ff F] [--skew S] [--window-mb W] [--board-profile FILE] [--dir D]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage();
    const char* v = argv[++i];
    if (a == "--steps") opt.steps = std::atoi(v);
    else if (a == "--reps") opt.reps = std::atoi(v);
    else if (a == "--layers") opt.layers = std::atoi(v);
    else if (a == "--experts") opt.experts = std::atoi(v);
    else if (a == "--used") opt.used = std::atoi(v);
    else if (a == "--embd") opt.embd = std::atoi(v);
    else if (a == "--ff") opt.ff = std::atoi(v);
    else if (a == "--skew") opt.skew = float(std::atof(v));
    else if (a == "--window-mb") opt.window_mb = uint32_t(std::atoi(v));
    else if (a == "--board-profile") opt.profile = v;
    else if (a == "--dir") opt.dir = v;
    else return usage();
  }
  if (opt.steps < 1 || opt.reps < 1 || opt.window_mb < 1) return usage();
  try {
    gen::ModelSpec s = gen::preset("tiny-mixtral");
    s.n_layer = opt.layers;
    s.n_expert = opt.experts;
    s.n_expert_used = opt.used;
    s.n_embd = opt.embd;
    s.n_ff = opt.ff;
    s.routing_skew = opt.skew;
    s.weight_type = quant::Type::Q8_0;
    const std::string path = opt.dir + "/moe_decode_prefetch_" + std::to_string(::getpid()) + ".gguf";
    gen::write_model(s, path);
    std::vector<Run> predict, none;
    for (int r = 0; r < opt.reps; ++r) {
      predict.push_back(run(opt, path, weights::ExpertPrefetch::kPredict));
      none.push_back(run(opt, path, weights::ExpertPrefetch::kNone));
    }
    std::remove(path.c_str());
    std::remove((path + ".orkpack").c_str());
    bool same = true;
    for (int r = 0; r < opt.reps; ++r) same = same && predict[r].tokens == none[r].tokens && predict[r].tokens == predict[0].tokens;
    JsonWriter j;
    j.begin_object();
    j.key("bench").value("moe_decode_prefetch");
    j.key("modeled").value(true);
    j.key("what").value("streamed MoE decode on the simulated NPU: routed expert units ready when their matmul needs "
                        "them, in the board model's time, with the predictor's guesses prefetched vs none");
    j.key("machine").value(bench::machine_name());
    j.key("profile").raw(npu::sim::board_profile_json(npu::sim::load_board_profile(opt.profile)));
    j.key("model").begin_object();
    j.key("arch").value("llama (Mixtral-style)").key("layers").value(int64_t(opt.layers));
    j.key("experts").value(int64_t(opt.experts)).key("experts_used").value(int64_t(opt.used));
    j.key("embd").value(int64_t(opt.embd)).key("expert_ff").value(int64_t(opt.ff));
    j.key("routing_skew").value(double(opt.skew)).key("type").value("q8_0");
    j.end_object();
    j.key("window_mb").value(uint64_t(opt.window_mb));
    j.key("expert_slot_bytes").value(predict[0].expert_slot_bytes);  // 0: experts tiled
    j.key("expert_slots").value(uint64_t(predict[0].expert_slots));
    j.key("prompt_tokens").value(int64_t(8)).key("decode_steps").value(int64_t(opt.steps));
    j.key("reps").value(int64_t(opt.reps));
    j.key("tokens_identical").value(same);
    j.key("predict");
    write(j, predict, opt.steps);
    j.key("none");
    write(j, none, opt.steps);
    j.end_object();
    std::printf("%s\n", j.str().c_str());
    if (!same) {
      std::fprintf(stderr, "moe_decode_prefetch: the tokens differ between runs\n");
      return 1;
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "moe_decode_prefetch: %s\n", e.what());
    return 1;
  }
  return 0;
}
