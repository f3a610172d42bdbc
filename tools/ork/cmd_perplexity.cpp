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
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
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
#include "runtime/context.h"
#include "runtime/engine.h"

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

}  // namespace

int cmd_perplexity(const std::vector<std::string>& argv) {
  std::vector<OptionSpec> specs = kPerplexityOptions;
  specs.insert(specs.end(), kSimOptions.begin(), kSimOptions.end());
  const Args args("perplexity", specs, argv);
  if (args.has("--help")) {
    std::printf("usage: ork perplexity [-m MODEL] -f TEXT [options]\n\n"
                "Scores the second half of each non-overlapping window of --ctx tokens, as\n"
                "llama.cpp's perplexity tool does.\n\n%s",
                format_options(specs).c_str());
    return 0;
  }
  if (args.has("--verbose")) log::set_verbose(true);
  if (!args.has("--file")) throw UsageError{"give the text to score with -f/--file"};
  const int64_t ctx_arg = args.get_int("--ctx", 0, 3, int64_t(1) << 20);
  const int64_t max_chunks = args.get_int("--chunks", -1, 1, int64_t(1) << 40);
  const bool json = args.has("--json");

  runtime::EngineOptions eo = engine_options(args, "cpu");
  const std::string path = *args.get("--file");
  const std::string text = read_text_file(path);

  runtime::Engine engine(eo);
  const model::Tokenizer& tok = engine.model().tokenizer();
  const bool add_bos = tok.vocab().add_bos;
  const int64_t n_ctx =
      ctx_arg > 0 ? ctx_arg : std::min<int64_t>(engine.model().config().n_ctx_train, 512);
  ORK_CHECK(n_ctx >= 3, "the model's context (", n_ctx, " tokens) is too small: give --ctx 3 or more");

  const Stopwatch total;
  const std::vector<int32_t> tokens = tok.encode(text, add_bos, false);
  const int64_t n_tokens = int64_t(tokens.size());
  ORK_CHECK(n_tokens >= n_ctx, path, ": the text is ", n_tokens, " tokens, shorter than one window of ",
            n_ctx, " tokens (--ctx)");
  int64_t n_chunk = n_tokens / n_ctx;
  if (max_chunks > 0) n_chunk = std::min(n_chunk, max_chunks);

  runtime::Context ctx(engine, n_ctx);
  const int64_t n_vocab = ctx.n_vocab();
  const int64_t first = n_ctx / 2;
  const bool progress = !json && ::isatty(STDERR_FILENO) != 0;
  double nll = 0, nll2 = 0;
  int64_t count = 0;
  std::vector<int32_t> window(static_cast<size_t>(n_ctx));
  const Stopwatch eval_clock;
  for (int64_t c = 0; c < n_chunk; ++c) {
    std::copy(tokens.begin() + c * n_ctx, tokens.begin() + (c + 1) * n_ctx, window.begin());
    if (add_bos) window[0] = tok.bos();
    ctx.reset();
    const std::vector<float>& logits = ctx.eval_all(window);
    for (int64_t j = first; j < n_ctx - 1; ++j) {
      const double v = token_nll(logits.data() + j * n_vocab, n_vocab, window[size_t(j + 1)]);
      nll += v;
      nll2 += v * v;
      ++count;
    }
    if (progress) draw_progress(c + 1, n_chunk, std::exp(nll / double(count)), eval_clock.elapsed_ms());
  }
  if (progress) std::fputs("\n", stderr);
  const double ms = total.elapsed_ms();

  const double mean = nll / double(count);
  const double ppl = std::exp(mean);
  const double var = nll2 / double(count) - mean * mean;
  const double err = count > 1 && var > 0 ? ppl * std::sqrt(var / double(count - 1)) : 0.0;
  if (json) {
    JsonWriter j;
    j.begin_object();
    j.key("ppl").value(ppl);
    j.key("ppl_err").value(err);
    j.key("nll").value(mean);
    j.key("tokens").value(count);
    j.key("chunks").value(n_chunk);
    j.key("ctx").value(n_ctx);
    j.key("text_tokens").value(n_tokens);
    j.key("ms").value(ms);
    j.key("device").value(engine.device_name());
    j.key("threads").value(engine.threads());
    j.end_object();
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("PPL = %.4f +/- %.4f over %lld tokens (%lld windows of %lld, second halves scored)\n",
                ppl, err, (long long)count, (long long)n_chunk, (long long)n_ctx);
    std::fprintf(stderr, "ork: perplexity of %s in %.1f ms, device %s, %d threads\n", path.c_str(), ms,
                 engine.device_name(), engine.threads());
  }
  return 0;
}

}  // namespace ork::cli
