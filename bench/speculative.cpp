// Speculative-decoding benchmark (issue 18). Prints one JSON object.
//
// Models (ork-gen-model, q8_0): a target of --layers layers whose layers from --draft-layers on have
// their attn_output and ffn_down scaled by each --layer-scale value, and a draft that is the target's
// first --draft-layers layers (the same tensors: same seed, same names) plus --noise. The scale
// tunes how often the draft agrees with the target (0: the extra layers add nothing, acceptance 1).
// Greedy decoding of -n tokens after a fixed prompt, target-only and with the draft at each -K.
//
//  sim  — MODELED board time (board cost model, profile named in the output; docs/board-model.md):
//         the target on a simulated NPU with one --window-mb window, so it streams; the draft on a
//         simulated NPU of its own where it is resident. modeled_npu_ms_per_token = the NPU jobs of
//         the target's and the draft's decode passes (SimStats::modeled_ns) per generated token. The
//         copy of the streamed weight bytes into device buffers is not in the board model; it is
//         reported as bytes_streamed_per_token and as stream_copy_ms_per_token_lower_bound = 2 ×
//         bytes (read + write) / the profile's ddr_gbps, a lower bound of that copy.
//  cpu  — MEASURED wall time on this machine (medians and min/max over --reps runs), target-only and
//         with the draft, and the speed-up.
// Usage: speculative [-n 32] [-K 2,4] [--layers 8] [--draft-layers 2] [--embd 256] [--ff 768]
//                    [--vocab 1024] [--layer-scale 0,0.2,0.5] [--noise 0] [--window-mb 2]
//                    [--reps 3] [--threads 2] [--dir /tmp] [--skip-cpu] [--skip-sim]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/json.h"
#include "core/timer.h"
#include "gen_model/gen_model.h"
#include "npu/sim/board_model.h"
#include "npu/sim/sim_kernel.h"
#include "runtime/context.h"
#include "runtime/draft_model.h"
#include "runtime/engine.h"
#include "runtime/sampler.h"
#include "runtime/speculative.h"

using namespace ork;

namespace {

struct Config {
  int64_t n = 32;
  std::vector<int64_t> ks = {2, 4};
  int layers = 8, draft_layers = 2, embd = 256, ff = 768, vocab = 1024;
  std::vector<double> scales = {0.0, 0.2, 0.5};
  float noise = 0.0f;
  int64_t window_mb = 2;
  int reps = 3, threads = 2;
  std::string dir = "/tmp";
  bool cpu = true, sim = true;
};

std::vector<double> parse_list(const char* s) {
  std::vector<double> v;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) v.push_back(std::atof(item.c_str()));
  return v;
}

const std::vector<int32_t> kPrompt = {1, 17, 42, 99, 7, 300, 5, 250};

runtime::SamplerParams greedy() {
  runtime::SamplerParams p;
  p.temperature = 0.0f;
  return p;
}

double modeled_ns(runtime::Engine& e) {
  return e.device() != nullptr && e.device()->sim_kernel() != nullptr ? e.device()->sim_kernel()->stats().modeled_ns : 0;
}

struct Run {
  std::vector<int32_t> tokens;
  double decode_ms = 0;        // wall clock of the decode phase
  double target_modeled_ns = 0, draft_modeled_ns = 0;  // decode phase
  uint64_t bytes_streamed = 0;
  runtime::SpeculativeStats stats;
};

// Target-only greedy decode: the prompt in one pass, then one pass per token.
Run target_only(runtime::Engine& target, int64_t n) {
  runtime::Context ctx(target, 256);
  runtime::Sampler s(greedy());
  Run r;
  const float* l = ctx.eval(kPrompt);
  const double m0 = modeled_ns(target);
  const uint64_t b0 = target.plan() ? target.residency_stats().bytes_streamed : 0;
  Stopwatch sw;
  const model::Tokenizer& tok = target.model().tokenizer();
  for (int64_t i = 0; i < n; ++i) {
    const int32_t id = s.sample(l, int32_t(ctx.n_vocab()));
    r.tokens.push_back(id);
    if (tok.is_eog(id)) break;  // where generate() and generate_speculative() stop
    if (i + 1 < n) l = ctx.eval({id});
  }
  r.decode_ms = sw.elapsed_ms();
  r.target_modeled_ns = modeled_ns(target) - m0;
  r.bytes_streamed = (target.plan() ? target.residency_stats().bytes_streamed : 0) - b0;
  return r;
}

Run with_draft(runtime::Engine& target, runtime::Engine& draft, int64_t n, int64_t k) {
  runtime::Context ctx(target, 256);
  runtime::Sampler s(greedy());
  runtime::DraftModel dm(draft, 256, greedy(), 0.0f);
  runtime::SpeculativeOptions so;
  so.draft_max = k;
  const double d0 = modeled_ns(draft);
  runtime::SpeculativeResult sr =
      runtime::generate_speculative(ctx, dm, s, kPrompt, n, so, [](int32_t) { return true; });
  Run r;
  r.tokens = sr.gen.tokens;
  r.decode_ms = sr.gen.gen_ms;
  r.stats = sr.stats;
  r.target_modeled_ns = sr.stats.modeled_ns;
  r.bytes_streamed = sr.stats.bytes_streamed;
  // The draft's passes: all of them decode-phase work (its first batch includes the prompt).
  r.draft_modeled_ns = modeled_ns(draft) - d0;
  return r;
}

void write_stats(JsonWriter& j, const runtime::SpeculativeStats& s) {
  j.key("acceptance_rate").value(s.acceptance_rate());
  j.key("mean_accepted").value(s.mean_accepted());
  j.key("target_passes_per_token").value(s.passes_per_token());
  j.key("tokens_per_target_pass").value(s.passes_per_token() > 0 ? 1.0 / s.passes_per_token() : 0.0);
}

runtime::EngineOptions engine_options(const std::string& path, const std::string& device, const Config& c,
                                      bool streamed) {
  runtime::EngineOptions o;
  o.model_path = path;
  o.device = device;
  o.threads = c.threads;
  if (streamed) {
    o.npu.sim_window_bytes = uint64_t(c.window_mb) << 20;
    o.npu.sim_domains = 1;
    o.residency = weights::Residency::kStream;
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "-n" && has) c.n = std::atoll(argv[++i]);
    else if (a == "-K" && has) { c.ks.clear(); for (double k : parse_list(argv[++i])) c.ks.push_back(int64_t(k)); }
    else if (a == "--layers" && has) c.layers = std::atoi(argv[++i]);
    else if (a == "--draft-layers" && has) c.draft_layers = std::atoi(argv[++i]);
    else if (a == "--embd" && has) c.embd = std::atoi(argv[++i]);
    else if (a == "--ff" && has) c.ff = std::atoi(argv[++i]);
    else if (a == "--vocab" && has) c.vocab = std::atoi(argv[++i]);
    else if (a == "--layer-scale" && has) c.scales = parse_list(argv[++i]);
    else if (a == "--noise" && has) c.noise = float(std::atof(argv[++i]));
    else if (a == "--window-mb" && has) c.window_mb = std::atoll(argv[++i]);
    else if (a == "--reps" && has) c.reps = std::atoi(argv[++i]);
    else if (a == "--threads" && has) c.threads = std::atoi(argv[++i]);
    else if (a == "--dir" && has) c.dir = argv[++i];
    else if (a == "--skip-cpu") c.cpu = false;
    else if (a == "--skip-sim") c.sim = false;
    else {
      std::fprintf(stderr, "speculative: unknown or incomplete argument '%s' (see the header of bench/speculative.cpp)\n",
                   a.c_str());
      return 2;
    }
  }
  if (c.n < 2 || c.ks.empty() || c.draft_layers < 1 || c.draft_layers >= c.layers || c.reps < 1) {
    std::fprintf(stderr, "speculative: need -n >= 2, some -K, 1 <= --draft-layers < --layers, --reps >= 1\n");
    return 2;
  }
  try {
    const npu::sim::BoardProfile board = npu::sim::load_board_profile("");
    JsonWriter j;
    j.begin_object();
    j.key("bench").value("speculative");
    j.key("machine").value(bench::machine_name());
    j.key("n_gen").value(c.n);
    j.key("prompt_tokens").value(int64_t(kPrompt.size()));
    j.key("target").begin_object();
    j.key("layers").value(c.layers).key("embd").value(c.embd).key("ff").value(c.ff).key("vocab").value(c.vocab);
    j.key("type").value("q8_0");
    j.end_object();
    j.key("draft").begin_object();
    j.key("layers").value(c.draft_layers).key("noise").value(double(c.noise));
    j.end_object();
    j.key("sim_modeled").value(true);
    j.key("board_profile").raw(npu::sim::board_profile_json(board));
    j.key("runs").begin_array();
    for (double scale : c.scales) {
      gen::ModelSpec s;
      s.n_vocab = c.vocab, s.n_embd = c.embd, s.n_ff = c.ff, s.n_layer = c.layers, s.n_head = 4, s.n_head_kv = 2;
      s.weight_type = quant::Type::Q8_0;
      s.scale_layers_from = c.draft_layers;
      s.layer_scale = float(scale);
      const std::string tpath = c.dir + "/ork-spec-target-" + std::to_string(scale) + ".gguf";
      const std::string dpath = c.dir + "/ork-spec-draft.gguf";
      gen::write_model(s, tpath);
      s.n_layer = c.draft_layers;
      s.layer_scale = 1.0f;
      s.noise_std = c.noise;
      gen::write_model(s, dpath);

      j.begin_object();
      j.key("layer_scale").value(scale);
      j.key("target_file").value(tpath);
      j.key("draft_file").value(dpath);
      if (c.sim) {
        runtime::Engine target(engine_options(tpath, "sim", c, true));
        runtime::Engine draft(engine_options(dpath, "sim", c, false));
        const Run base = target_only(target, c.n);
        j.key("sim").begin_object();
        j.key("target_mode").value(target.residency_stats().mode);
        j.key("draft_mode").value(draft.residency_stats().mode);
        // Tokens after the first (which the prompt's pass gives); fewer than n - 1 at an end token.
        const double gen = double(std::max<size_t>(base.tokens.size(), 2) - 1);
        const double stream_ms_per_byte = 2.0 / (board.ddr_gbps * 1e9) * 1e3;
        const double base_npu = base.target_modeled_ns / 1e6 / gen;
        const double base_stream = double(base.bytes_streamed) / gen * stream_ms_per_byte;
        j.key("target_only").begin_object();
        j.key("n_gen").value(int64_t(base.tokens.size()));
        j.key("modeled_npu_ms_per_token").value(base_npu);
        j.key("bytes_streamed_per_token").value(double(base.bytes_streamed) / gen);
        j.key("stream_copy_ms_per_token_lower_bound").value(base_stream);
        j.key("modeled_tok_per_s").value(1e3 / base_npu);
        j.key("modeled_tok_per_s_with_stream_copy").value(1e3 / (base_npu + base_stream));
        j.end_object();
        j.key("with_draft").begin_array();
        for (int64_t k : c.ks) {
          const Run r = with_draft(target, draft, c.n, k);
          const double npu = (r.target_modeled_ns + r.draft_modeled_ns) / 1e6 / gen;
          const double stream = double(r.bytes_streamed) / gen * stream_ms_per_byte;
          j.begin_object();
          j.key("K").value(k);
          j.key("tokens_identical").value(r.tokens == base.tokens);
          j.key("n_gen").value(int64_t(r.tokens.size()));
          write_stats(j, r.stats);
          j.key("modeled_npu_ms_per_token").value(npu);
          j.key("modeled_target_npu_ms_per_token").value(r.target_modeled_ns / 1e6 / gen);
          j.key("modeled_draft_npu_ms_per_token").value(r.draft_modeled_ns / 1e6 / gen);
          j.key("bytes_streamed_per_token").value(double(r.bytes_streamed) / gen);
          j.key("stream_copy_ms_per_token_lower_bound").value(stream);
          j.key("modeled_tok_per_s").value(1e3 / npu);
          j.key("modeled_tok_per_s_with_stream_copy").value(1e3 / (npu + stream));
          j.key("modeled_speedup").value(base_npu / npu);
          j.key("modeled_speedup_with_stream_copy").value((base_npu + base_stream) / (npu + stream));
          j.end_object();
        }
        j.end_array();
        j.end_object();
      }
      if (c.cpu) {
        runtime::Engine target(engine_options(tpath, "cpu", c, false));
        runtime::Engine draft(engine_options(dpath, "cpu", c, false));
        // Interleaved (target-only, then each K, per repetition) so that load drift hits all alike.
        std::vector<double> base_ms;
        Run base;
        std::vector<std::vector<double>> ms(c.ks.size()), draft_ms(c.ks.size()), verify_ms(c.ks.size());
        std::vector<Run> runs(c.ks.size());
        for (int rep = 0; rep < c.reps; ++rep) {
          base = target_only(target, c.n);
          base_ms.push_back(base.decode_ms);
          for (size_t i = 0; i < c.ks.size(); ++i) {
            runs[i] = with_draft(target, draft, c.n, c.ks[i]);
            ms[i].push_back(runs[i].decode_ms);
            draft_ms[i].push_back(runs[i].stats.draft_ms);
            verify_ms[i].push_back(runs[i].stats.verify_ms);
          }
        }
        j.key("cpu").begin_object();
        j.key("measured").value(true);
        j.key("threads").value(target.threads());
        const double gen = double(std::max<size_t>(base.tokens.size(), 2) - 1);
        const double base_med = bench::median(base_ms);
        j.key("target_only").begin_object();
        j.key("n_gen").value(int64_t(base.tokens.size()));
        j.key("decode_ms_median").value(base_med);
        j.key("decode_ms_min").value(*std::min_element(base_ms.begin(), base_ms.end()));
        j.key("decode_ms_max").value(*std::max_element(base_ms.begin(), base_ms.end()));
        j.key("tok_per_s").value(1e3 * gen / base_med);
        j.end_object();
        j.key("with_draft").begin_array();
        for (size_t i = 0; i < c.ks.size(); ++i) {
          const Run& r = runs[i];
          const int64_t k = c.ks[i];
          const double med = bench::median(ms[i]);
          j.begin_object();
          j.key("K").value(k);
          j.key("tokens_identical").value(r.tokens == base.tokens);
          write_stats(j, r.stats);
          j.key("decode_ms_median").value(med);
          j.key("decode_ms_min").value(*std::min_element(ms[i].begin(), ms[i].end()));
          j.key("decode_ms_max").value(*std::max_element(ms[i].begin(), ms[i].end()));
          j.key("draft_ms_median").value(bench::median(draft_ms[i]));
          j.key("verify_ms_median").value(bench::median(verify_ms[i]));
          j.key("tok_per_s").value(1e3 * gen / med);
          j.key("speedup").value(base_med / med);
          j.end_object();
        }
        j.end_array();
        j.end_object();
      }
      j.end_object();
    }
    j.end_array();
    j.end_object();
    std::printf("%s\n", j.str().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "speculative: %s\n", e.what());
    return 1;
  }
  return 0;
}
