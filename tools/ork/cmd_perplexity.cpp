// ork perplexity — perplexity of a model over a text file, by llama.cpp's perplexity convention.
//
// The text is tokenized once, with BOS when the model adds one (llama.cpp's add_special = true,
// special-token text not parsed). It is cut into n_chunk = n_tokens / n_ctx non-overlapping windows
// of n_ctx tokens (the tail that does not fill a window is not scored); each window is evaluated
// from an empty context, with its first token replaced by BOS when the model adds BOS. Only the
// second half of each window is scored: the logits at positions first = n_ctx/2 .. n_ctx-2 against
// the tokens at first+1 .. n_ctx-1 (n_ctx - 1 - n_ctx/2 tokens per window), so every scored token
// has at least n_ctx/2 tokens of context. PPL = exp(mean NLL), NLL from a log-softmax in double.
// The ± is llama.cpp's: the standard error of the mean NLL, times PPL.
// Source: llama.cpp examples/perplexity/perplexity.cpp, perplexity() (ggml-org/llama.cpp, read 2025).
// Difference: llama.cpp refuses texts shorter than 2·n_ctx tokens; ork needs one window (n_ctx).
//
// --kl-divergence-base FILE saves the scored positions' log-probabilities (and the tokens) in
// llama.cpp's file format (runtime/logprob_file.h); --kl-divergence FILE evaluates the windows of
// FILE's tokens (-f, when given, must tokenize to them) and compares each distribution with the
// saved one (runtime/kl_divergence.h), so a base from one device or path (`--device cpu --exact`)
// measures another (`--device sim`). llama.cpp spells the second `--kl-divergence-base FILE
// --kl-divergence`; the file is the same either way.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "core/error.h"
#include "core/json.h"
#include "core/log.h"
#include "core/timer.h"
#include "device_flags.h"
#include "kld_report.h"
#include "runtime/context.h"
#include "runtime/engine.h"
#include "runtime/kl_divergence.h"
#include "runtime/logprob_file.h"

namespace ork::cli {
namespace {

const std::vector<OptionSpec> kPerplexityOptions = {
    {{"-m", "--model"}, true, "GGUF model file (default: the embedded default model)"},
    {{"-f", "--file"}, true, "text file to score"},
    {{"-c", "--ctx"}, true, "window size in tokens (default: the model's context, at most 512)"},
    {{"--chunks"}, true, "score at most this many windows (default: all)"},
    {{"-t", "--threads"}, true, "threads (default: all cores)"},
    {{"--pin"}, false, "pin threads to CPUs, fastest cores first (the Cortex-A76 cores of an RK3588)"},
    {{"--device"}, true, "cpu | npu | sim | auto (default cpu)"},
    {{"--cpu-int8"}, false, "cpu: run matmuls as int8 w8a8, the NPU path's arithmetic"},
    {{"--cpu-int4"}, true, "cpu: run matmuls through int4 weights, the NPU int4 arithmetic: w4a8 | w4a4 [-gG]"},
    {{"--exact"}, false, "cpu: decode weights to f32 (the reference path) instead of the 8-bit kernels"},
    {{"--kl-divergence-base"}, true, "save the log-probabilities of this run to FILE (llama.cpp's format)"},
    {{"--kl-divergence"}, true,
     "compare with the base saved in FILE (its tokens; -f optional): KLD, same top token, PPL change"},
    {{"--tokenizer-pre"}, true, "pre-tokenizer to use instead of the file's tokenizer.ggml.pre (e.g. gpt2)"},
    {{"--json"}, false, "print one JSON object (ppl, ppl_err, tokens, chunks, ctx, ms, ...)"},
    {{"-v", "--verbose"}, false, "debug messages on stderr (ORK_VERBOSE=1)"},
    {{"-h", "--help"}, false, "this help"},
};

// −log softmax(logits)[target], in double.
double token_nll(const float* logits, int64_t n_vocab, int32_t target) {
  const float mx = *std::max_element(logits, logits + n_vocab);
  double sum = 0;
  for (int64_t i = 0; i < n_vocab; ++i) sum += std::exp(double(logits[i]) - double(mx));
  return std::log(sum) - (double(logits[target]) - double(mx));
}

// One line on stderr, redrawn in place: "[#####.....] 12/230 windows, PPL 45.12, ETA 31 s".
void draw_progress(int64_t done, int64_t total, double ppl, double elapsed_ms) {
  constexpr int kWidth = 30;
  const int filled = int(kWidth * done / total);
  const double eta_s = done > 0 ? elapsed_ms * double(total - done) / double(done) / 1000.0 : 0.0;
  std::fprintf(stderr, "\rperplexity: [%s%s] %lld/%lld windows, PPL %.4f, ETA %.0f s ",
               std::string(size_t(filled), '#').c_str(), std::string(size_t(kWidth - filled), '.').c_str(),
               (long long)done, (long long)total, ppl, eta_s);
  std::fflush(stderr);
}

// The tokens to evaluate: those saved in `base` (cut to max_chunks windows), checked against the
// text's tokenization when -f was given too; else the text's, cut to whole windows.
struct Windows {
  std::vector<int32_t> tokens;
  int64_t n_ctx = 0, n_chunk = 0, text_tokens = 0;
};

Windows windows_from_base(const runtime::LogProbReader& base, const std::optional<std::string>& text_path,
                          const model::Tokenizer& tok, int64_t max_chunks) {
  Windows w;
  w.n_ctx = base.n_ctx();
  w.n_chunk = max_chunks > 0 ? std::min(base.n_chunk(), max_chunks) : base.n_chunk();
  w.tokens.assign(base.tokens().begin(), base.tokens().begin() + w.n_chunk * w.n_ctx);
  w.text_tokens = int64_t(base.tokens().size());
  if (!text_path) return w;
  const std::vector<int32_t> t = tok.encode(read_text_file(*text_path), tok.vocab().add_bos, false);
  ORK_CHECK(int64_t(t.size()) >= int64_t(w.tokens.size()), *text_path, " is ", t.size(),
            " tokens, fewer than the ", w.tokens.size(), " saved in ", base.path());
  const auto diff = std::mismatch(w.tokens.begin(), w.tokens.end(), t.begin());
  ORK_CHECK(diff.first == w.tokens.end(), *text_path, " does not tokenize to the tokens saved in ", base.path(),
            " (first difference at token ", diff.first - w.tokens.begin(), ")");
  return w;
}

Windows windows_from_text(const std::string& path, const model::Tokenizer& tok, int64_t n_ctx,
                          int64_t max_chunks) {
  Windows w;
  w.n_ctx = n_ctx;
  w.tokens = tok.encode(read_text_file(path), tok.vocab().add_bos, false);
  w.text_tokens = int64_t(w.tokens.size());
  ORK_CHECK(w.text_tokens >= n_ctx, path, ": the text is ", w.text_tokens,
            " tokens, shorter than one window of ", n_ctx, " tokens (--ctx)");
  w.n_chunk = w.text_tokens / n_ctx;
  if (max_chunks > 0) w.n_chunk = std::min(w.n_chunk, max_chunks);
  return w;
}

}  // namespace

int cmd_perplexity(const std::vector<std::string>& argv) {
  std::vector<OptionSpec> specs = kPerplexityOptions;
  specs.insert(specs.end(), kSimOptions.begin(), kSimOptions.end());
  specs.insert(specs.end(), kKvOptions.begin(), kKvOptions.end());
  const Args args("perplexity", specs, argv);
  if (args.has("--help")) {
    std::printf("usage: ork perplexity [-m MODEL] -f TEXT [options]\n"
                "       ork perplexity [-m MODEL] -f TEXT --kl-divergence-base BASE [options]\n"
                "       ork perplexity [-m MODEL] --kl-divergence BASE [-f TEXT] [options]\n\n"
                "Scores the second half of each non-overlapping window of --ctx tokens, as\n"
                "llama.cpp's perplexity tool does; saves or compares against a base run's\n"
                "log-probabilities (KL divergence) in llama.cpp's file format.\n\n%s",
                format_options(specs).c_str());
    return 0;
  }
  if (args.has("--verbose")) log::set_verbose(true);
  const std::optional<std::string> save_path = args.get("--kl-divergence-base");
  const std::optional<std::string> base_path = args.get("--kl-divergence");
  if (save_path && base_path)
    throw UsageError{"give --kl-divergence-base (save a base) or --kl-divergence (compare with one), not both"};
  if (!base_path && !args.has("--file")) throw UsageError{"give the text to score with -f/--file"};
  const int64_t ctx_arg = args.get_int("--ctx", 0, 3, int64_t(1) << 20);
  const int64_t max_chunks = args.get_int("--chunks", -1, 1, int64_t(1) << 40);
  const bool json = args.has("--json");
  const std::optional<std::string> text_path = args.get("--file");

  // A bad base file fails before the model loads.
  std::unique_ptr<runtime::LogProbReader> base;
  if (base_path) {
    base = std::make_unique<runtime::LogProbReader>(*base_path);
    ORK_CHECK(ctx_arg == 0 || ctx_arg == base->n_ctx(), *base_path, " was saved with windows of ",
              base->n_ctx(), " tokens, not --ctx ", ctx_arg);
  }

  runtime::EngineOptions eo = engine_options(args, "cpu");
  runtime::Engine engine(eo);
  const model::Tokenizer& tok = engine.model().tokenizer();
  const bool add_bos = tok.vocab().add_bos;
  const Stopwatch total;
  Windows w;
  if (base) {
    ORK_CHECK(base->n_vocab() == engine.model().config().n_vocab, *base_path, " was saved with a vocabulary of ",
              base->n_vocab(), " tokens, but ", eo.model_path, " has ", engine.model().config().n_vocab);
    w = windows_from_base(*base, text_path, tok, max_chunks);
  } else {
    const int64_t n_ctx =
        ctx_arg > 0 ? ctx_arg : std::min<int64_t>(engine.model().config().n_ctx_train, 512);
    ORK_CHECK(n_ctx >= 3, "the model's context (", n_ctx, " tokens) is too small: give --ctx 3 or more");
    w = windows_from_text(*text_path, tok, n_ctx, max_chunks);
  }
  const int64_t n_ctx = w.n_ctx, n_chunk = w.n_chunk;

  runtime::Context ctx(engine, n_ctx);
  const int64_t n_vocab = ctx.n_vocab();
  std::unique_ptr<runtime::LogProbWriter> saver;
  if (save_path) saver = std::make_unique<runtime::LogProbWriter>(*save_path, n_ctx, n_vocab, n_chunk, w.tokens);
  runtime::KldAccumulator kld;
  std::vector<uint16_t> base_rows;
  const int64_t row_elems = runtime::logprob_row_elems(n_vocab);
  const int64_t first = n_ctx / 2;
  const bool progress = !json && ::isatty(STDERR_FILENO) != 0;
  double nll = 0, nll2 = 0;
  int64_t count = 0;
  std::vector<int32_t> window(static_cast<size_t>(n_ctx));
  const Stopwatch eval_clock;
  for (int64_t c = 0; c < n_chunk; ++c) {
    std::copy(w.tokens.begin() + c * n_ctx, w.tokens.begin() + (c + 1) * n_ctx, window.begin());
    if (add_bos) window[0] = tok.bos();
    ctx.reset();
    const std::vector<float>& logits = ctx.eval_all(window);
    if (saver) saver->write_window(logits.data());
    if (base) base->read_window(c, base_rows);
    for (int64_t j = first; j < n_ctx - 1; ++j) {
      // j + 1 >= 2: the target is never the BOS-substituted first token.
      const int32_t target = window[size_t(j + 1)];
      const double v = token_nll(logits.data() + j * n_vocab, n_vocab, target);
      nll += v;
      nll2 += v * v;
      ++count;
      if (base) kld.add(logits.data() + j * n_vocab, base_rows.data() + (j - first) * row_elems, n_vocab, target);
    }
    if (progress) draw_progress(c + 1, n_chunk, std::exp(nll / double(count)), eval_clock.elapsed_ms());
  }
  if (progress) std::fputs("\n", stderr);
  if (saver) saver->commit();
  const double ms = total.elapsed_ms();

  const double mean = nll / double(count);
  const double ppl = std::exp(mean);
  const double var = nll2 / double(count) - mean * mean;
  const double err = count > 1 && var > 0 ? ppl * std::sqrt(var / double(count - 1)) : 0.0;
  const std::string what = base_path ? *base_path : *text_path;
  if (json) {
    JsonWriter j;
    j.begin_object();
    if (base) {
      add_kld_json(j, kld.summary());
    } else {
      j.key("ppl").value(ppl);
      j.key("ppl_err").value(err);
    }
    j.key("nll").value(mean);
    j.key("tokens").value(count);
    j.key("chunks").value(n_chunk);
    j.key("ctx").value(n_ctx);
    j.key("text_tokens").value(w.text_tokens);
    j.key("ms").value(ms);
    j.key("device").value(engine.device_name());
    j.key("threads").value(engine.threads());
    if (save_path) j.key("saved").value(*save_path);
    j.end_object();
    std::printf("%s\n", j.str().c_str());
  } else {
    if (base) {
      print_kld_text(kld.summary(), n_chunk, n_ctx);
    } else {
      std::printf("PPL = %.4f +/- %.4f over %lld tokens (%lld windows of %lld, second halves scored)\n",
                  ppl, err, (long long)count, (long long)n_chunk, (long long)n_ctx);
    }
    if (save_path)
      std::fprintf(stderr, "ork: saved the log-probabilities of %lld positions to %s\n", (long long)count,
                   save_path->c_str());
    std::fprintf(stderr, "ork: perplexity of %s in %.1f ms, device %s, %d threads\n", what.c_str(), ms,
                 engine.device_name(), engine.threads());
  }
  return 0;
}

}  // namespace ork::cli
