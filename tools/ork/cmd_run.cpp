// ork run — generate text from a prompt.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "args.h"
#include "board_report.h"
#include "moe_report.h"
#include "runtime/hybrid_matmul.h"
#include "sampling_flags.h"
#include "speculative_flags.h"
#include "commands.h"
#include "device_flags.h"
#include "core/env.h"
#include "core/error.h"
#include "core/json.h"
#include "core/log.h"
#include "runtime/chat_session.h"
#include "runtime/context.h"
#include "runtime/engine.h"
#include "runtime/generator.h"
#include "runtime/sampler.h"
#include "runtime/speculative.h"

namespace ork::cli {
namespace {

const std::vector<OptionSpec> kRunOptions = {
    {{"-m", "--model"}, true, "GGUF model file (default: the embedded default model)"},
    {{"-p", "--prompt"}, true, "prompt text"},
    {{"--prompt-tokens"}, true, "prompt as token ids, e.g. 1,2,3 (no BOS added, no tokenizer)"},
    {{"--chat-template"}, true, "render -p as one user turn of this chat template family ('model': the model's own) and stop at its end of turn"},
    {{"-n", "--n-predict"}, true, "tokens to generate (default 128; -1: until end or full context)"},
    {{"--temp"}, true, "temperature (default 0.8; 0: greedy)"},
    {{"--top-k"}, true, "top-k sampling (default 40; 0: off)"},
    {{"--top-p"}, true, "top-p sampling (default 0.95; 1: off)"},
    {{"--min-p"}, true, "min-p sampling (default 0.05; 0: off)"},
    {{"--repeat-penalty"}, true, "repetition penalty (default 1.0: off)"},
    {{"--repeat-last-n"}, true, "tokens the repetition penalty looks back (default 64)"},
    {{"-s", "--seed"}, true, "sampling seed (default: random)"},
    {{"-t", "--threads"}, true, "threads (default: all cores)"},
    {{"--pin"}, false, "pin threads to CPUs, fastest cores first (the Cortex-A76 cores of an RK3588)"},
    {{"-c", "--ctx"}, true, "context size in tokens (default: the model's trained length, bounded by half the available memory)"},
    {{"--device"}, true, "cpu | npu | sim | auto (default: npu when present, else cpu)"},
    {{"--cpu-int8"}, false, "cpu: run matmuls as int8 w8a8, the NPU path's arithmetic"},
    {{"--cpu-int4"}, true, "cpu: run matmuls through int4 weights, the NPU int4 arithmetic: w4a8 | w4a4 [-gG]"},
    {{"--exact"}, false, "cpu: decode weights to f32 (the reference path) instead of the 8-bit kernels"},
    {{"--residency"}, true, "npu/sim weights: auto | resident | stream (default auto)"},
    {{"--wcache-budget-mb"}, true, "streaming budget of device weights in MiB (ORK_WCACHE_BUDGET_MB, 3072)"},
    {{"--wcache-host-mb"}, true,
     "streamed weights: host memory in MiB for packed weights kept between loads (ORK_WCACHE_HOST_MB; "
     "default: all of them, at most half of MemAvailable)"},
    {{"--expert-prefetch"}, true, "npu/sim, streamed MoE: predict (decode loads the guessed next-layer experts "
                                  "ahead, default) | none (only after each router)"},
    {{"--persist"}, true, ".orkpack cache of packed weights to load or build (ORK_PERSIST)"},
    {{"--evict-src"}, false, "drop each GGUF tensor's pages once packed (ORK_EVICT_SRC)"},
    {{"--stats"}, false, "print the residency (and speculative decoding) statistics on stderr"},
    {{"--print-tokens"}, false, "print the generated token ids instead of text"},
    {{"--tokenizer-pre"}, true, "pre-tokenizer to use instead of the file's tokenizer.ggml.pre (e.g. gpt2)"},
    {{"--json"}, false, "print one JSON object with the tokens, text and timings at the end"},
    {{"-v", "--verbose"}, false, "debug messages on stderr (ORK_VERBOSE=1)"},
    {{"-h", "--help"}, false, "this help"},
};

std::vector<int32_t> parse_token_list(const std::string& text) {
  std::vector<int32_t> ids;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    try {
      ids.push_back(int32_t(parse_int(item, "--prompt-tokens", 0, INT32_MAX)));
    } catch (const Error& e) {
      throw UsageError{e.what()};
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return ids;
}

}  // namespace

int cmd_run(const std::vector<std::string>& argv) {
  std::vector<OptionSpec> specs = kRunOptions;
  specs.insert(specs.end(), kSpeculativeOptions.begin(), kSpeculativeOptions.end());
  specs.insert(specs.end(), kSimOptions.begin(), kSimOptions.end());
  specs.insert(specs.end(), kKvOptions.begin(), kKvOptions.end());
  const Args args("run", specs, argv);
  if (args.has("--help")) {
    std::printf("usage: ork run [-m MODEL] (-p TEXT | --prompt-tokens IDS) [options]\n\n%s",
                format_options(specs).c_str());
    return 0;
  }
  if (args.has("--verbose")) log::set_verbose(true);
  if (args.has("--prompt") == args.has("--prompt-tokens")) {
    throw UsageError{"give exactly one of -p/--prompt and --prompt-tokens"};
  }
  if (args.has("--chat-template") && args.has("--prompt-tokens")) {
    throw UsageError{"--chat-template renders text: give -p, not --prompt-tokens"};
  }

  runtime::EngineOptions eo = engine_options(args, "auto");
  const int64_t n_ctx = args.get_int("--ctx", 0, 1, int64_t(1) << 24);
  int64_t n_predict = args.get_int("--n-predict", 128, -1, int64_t(1) << 24);

  const runtime::SamplerParams sp = sampler_params(args);
  const bool json = args.has("--json");
  const bool print_tokens = args.has("--print-tokens");

  // --draft: loaded first (on the target's device: planned first, the target beside it).
  const std::unique_ptr<runtime::Engine> draft = load_draft(args, eo);
  runtime::Engine engine(eo);
  const model::Tokenizer& tok = engine.model().tokenizer();
  std::vector<int32_t> prompt;
  std::string prompt_text;
  std::vector<int32_t> stop_ids;  // --chat-template: the tokens ending its turn
  if (auto ids = args.get("--prompt-tokens")) {
    prompt = parse_token_list(*ids);
    for (int32_t id : prompt) {
      ORK_CHECK(id < tok.n_vocab(), "--prompt-tokens: token id ", id,
                " is outside the vocabulary [0, ", tok.n_vocab(), ")");
    }
  } else {
    prompt_text = *args.get("--prompt");
    if (auto name = args.get("--chat-template")) {
      const model::ChatTemplate tmpl = runtime::chat_template_for(engine.model(), *name == "model" ? "" : *name);
      const std::string rendered = tmpl.render({{"user", prompt_text}}, true);
      prompt = tok.encode(rendered, tok.vocab().add_bos && !tmpl.renders_bos(), true);
      for (const std::string& st : tmpl.stop_strings()) {
        if (const int32_t id = tok.find_token(st); id >= 0) stop_ids.push_back(id);
      }
    } else {
      prompt = tok.encode(prompt_text, tok.vocab().add_bos, false);
    }
    ORK_CHECK(!prompt.empty(), "the prompt is empty: give some text with -p");
  }
  runtime::Context ctx(engine, n_ctx);
  if (n_predict < 0) n_predict = ctx.n_ctx();
  runtime::Sampler sampler(sp);
  SpeculativeSetup spec = speculative_setup(args, engine, draft.get(), ctx.n_ctx(), sp);

  if (!json && !print_tokens) {
    std::fputs(prompt_text.c_str(), stdout);
    std::fflush(stdout);
  }
  bool first = true;
  std::string text;
  // On the simulator (without a draft): the modeled board time of the prompt's and the decoded
  // tokens' NPU jobs; the first token comes from the prompt's pass.
  npu::sim::SimKernel* const sim = engine.device() != nullptr ? engine.device()->sim_kernel() : nullptr;
  std::optional<BoardReport> board;
  if (sim != nullptr && spec.source == nullptr) {
    board.emplace();
    board->profile = sim->options().board.name;
    board->cpu_priced = engine.hybrid() != nullptr;
    board->start = board_snapshot(engine);
  }
  bool prompt_done = false;
  const auto on_token = [&](int32_t id) {
    if (board && !prompt_done) board->after_prompt = board_snapshot(engine);
    prompt_done = true;
    if (std::find(stop_ids.begin(), stop_ids.end(), id) != stop_ids.end()) return false;  // end of turn
    const std::string piece = tok.decode_token(id);
    text += piece;
    if (json) return true;
    if (print_tokens) {
      std::printf(first ? "%d" : ",%d", id);
    } else {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
    }
    first = false;
    std::fflush(stdout);
    return true;
  };
  runtime::SpeculativeStats spec_stats;
  runtime::GenerateResult r;
  if (spec.source != nullptr) {
    runtime::SpeculativeResult sr =
        runtime::generate_speculative(ctx, *spec.source, sampler, prompt, n_predict, spec.options, on_token);
    r = std::move(sr.gen);
    spec_stats = sr.stats;
  } else {
    r = runtime::generate(ctx, sampler, prompt, n_predict, on_token);
  }

  if (board) {
    if (!prompt_done) board->after_prompt = board_snapshot(engine);
    board->end = board_snapshot(engine);
    board->prompt_tokens = r.n_prompt;
    board->decode_tokens = ctx.n_past() - r.n_prompt;
  }
  const double prompt_tps = r.prompt_ms > 0 ? 1000.0 * double(r.n_prompt) / r.prompt_ms : 0.0;
  const double gen_tps = r.gen_ms > 0 ? 1000.0 * double(r.tokens.size()) / r.gen_ms : 0.0;
  if (json) {
    JsonWriter j;
    j.begin_object();
    j.key("tokens").begin_array();
    for (int32_t id : r.tokens) j.value(int64_t(id));
    j.end_array();
    j.key("text").value(text);
    j.key("n_prompt").value(r.n_prompt);
    j.key("n_gen").value(int64_t(r.tokens.size()));
    j.key("prompt_ms").value(r.prompt_ms);
    j.key("gen_ms").value(r.gen_ms);
    j.key("prompt_tok_per_s").value(prompt_tps);
    j.key("gen_tok_per_s").value(gen_tps);
    j.key("device").value(engine.device_name());
    j.key("threads").value(engine.threads());
    j.key("seed").value(sp.seed);
    j.key("stop").value(r.hit_eog ? "eog" : r.hit_ctx ? "context" : "length");
    if (engine.plan() != nullptr) j.key("residency").raw(engine.residency_stats().to_json());
    if (spec.source != nullptr) j.key("draft").raw(spec_stats.to_json());
    if (board) j.key("board_model").raw(board->to_json());
    if (engine.hybrid() != nullptr) j.key("schedule").raw(engine.hybrid()->stats().to_json());
    j.end_object();
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("\n");
    std::fprintf(stderr,
                 "ork: prompt %lld tokens in %.1f ms (%.1f tok/s), generated %zu tokens in %.1f ms "
                 "(%.1f tok/s), device %s, %d threads%s\n",
                 (long long)r.n_prompt, r.prompt_ms, prompt_tps, r.tokens.size(), r.gen_ms, gen_tps,
                 engine.device_name(), engine.threads(),
                 r.hit_ctx ? ", stopped: context full" : "");
  }
  if (args.has("--stats") && board) std::fprintf(stderr, "%s\n", board->to_text().c_str());
  if (args.has("--stats") && engine.hybrid() != nullptr) {
    std::fprintf(stderr, "%s\n", engine.hybrid()->stats().to_text().c_str());
  }
  if (args.has("--stats") && spec.source != nullptr) {
    const runtime::SpeculativeStats& t = spec_stats;
    std::fprintf(stderr,
                 "ork: draft: %s, %lld drafted, %lld accepted (%.1f%%), %.2f accepted per verifying pass, "
                 "%lld target passes for %lld tokens (%.3f per token), draft %.1f ms, verify %.1f ms, "
                 "%.1f KB streamed per token\n",
                 t.source.c_str(), (long long)t.drafted, (long long)t.accepted, 100.0 * t.acceptance_rate(),
                 t.mean_accepted(), (long long)t.target_passes, (long long)t.generated, t.passes_per_token(),
                 t.draft_ms, t.verify_ms,
                 t.generated > 0 ? double(t.bytes_streamed) / double(t.generated) / 1e3 : 0.0);
  }
  if (args.has("--stats") && ctx.moe_stats() != nullptr) print_moe_stats(engine, *ctx.moe_stats());
  if (args.has("--stats")) {
    if (engine.plan() == nullptr) {
      std::fprintf(stderr, "ork: residency: none (the CPU computes from the GGUF mapping)\n");
    } else {
      const runtime::ResidencyStats s = engine.residency_stats();
      std::fprintf(stderr,
                   "ork: residency: %s (%s), %u domain(s), %.1f MB resident, %llu loads, %llu "
                   "evictions, %llu IOVA-wall hits, %.1f MB streamed after load, %llu domain "
                   "switches, load %.1f ms, stall %.1f ms, prefetch hid %.0f%%, packed %llu (%.1f ms), "
                   "loaded %llu (%.1f ms)\n",
                   s.mode.c_str(), engine.plan()->reason.c_str(), s.domains_used,
                   double(s.resident_bytes) / 1e6, (unsigned long long)s.loads,
                   (unsigned long long)s.evictions, (unsigned long long)s.iova_wall_hits,
                   double(s.bytes_streamed) / 1e6, (unsigned long long)s.domain_switches,
                   s.load_ms, s.stall_ms, 100.0 * s.prefetch_hidden_fraction,
                   (unsigned long long)s.packed, s.pack_ms, (unsigned long long)s.loaded,
                   s.pack_load_ms);
      if (s.mode == "stream") {
        std::fprintf(stderr,
                     "ork: residency: packed weights in host memory: %.1f MB held (peak %.1f MB) of a "
                     "%.1f MB budget, %llu hits, %llu evictions\n",
                     double(s.host_bytes) / 1e6, double(s.host_peak_bytes) / 1e6, double(s.host_budget_bytes) / 1e6,
                     (unsigned long long)s.host_hits, (unsigned long long)s.host_evictions);
      }
      if (s.modeled) {
        std::fprintf(stderr,
                     "ork: residency (MODELED board time, host wall clock above): load %.1f ms, stall %.1f ms, "
                     "prefetch hid %.0f%%\n",
                     s.modeled_load_ms, s.modeled_stall_ms, 100.0 * s.modeled_prefetch_hidden_fraction);
      }
    }
  }
  return 0;
}

}  // namespace ork::cli
