// ork chat — an interactive multi-turn conversation in a terminal (or through a pipe).
// One line of input is one user message; lines starting with '/' are commands (/help lists them).
// The KV cache is kept between turns (runtime::ChatSession); Ctrl-C stops a reply, keeping the
// session; Ctrl-C at the prompt or end of input ends the program.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "device_flags.h"
#include "sampling_flags.h"
#include "core/error.h"
#include "core/log.h"
#include "runtime/chat_session.h"
#include "runtime/context.h"
#include "runtime/engine.h"

namespace ork::cli {
namespace {

const std::vector<OptionSpec> kChatOptions = {
    {{"-m", "--model"}, true, "GGUF model file (default: the embedded default model)"},
    {{"--system"}, true, "system message that starts the conversation"},
    {{"--chat-template"}, true, "chat template family instead of the model's (chatml, llama3, llama2, "
                                "llama2-sys-bos, llama2-sys-strip, mistral-v1, mistral-v3, mistral-v3-tekken, "
                                "mistral-v7, gemma, phi3, deepseek, deepseek2, deepseek3, ork-fortunes)"},
    {{"-n", "--n-predict"}, true, "most tokens per reply (default -1: until the end of the turn)"},
    {{"-t", "--threads"}, true, "threads (default: all cores)"},
    {{"-c", "--ctx"}, true, "context size in tokens (default: the model's trained length, bounded by half the available memory)"},
    {{"--device"}, true, "cpu | npu | sim | auto (default: npu when present, else cpu)"},
    {{"--cpu-int8"}, false, "cpu: run matmuls as int8 w8a8, the NPU path's arithmetic"},
    {{"--exact"}, false, "cpu: decode weights to f32 (the reference path)"},
    {{"--stats"}, false, "after each reply, print on stderr the tokens evaluated and reused"},
    {{"-v", "--verbose"}, false, "debug messages on stderr (ORK_VERBOSE=1)"},
    {{"-h", "--help"}, false, "this help"},
};

const char* kHelp =
    "commands: /clear (new conversation), /save FILE, /load FILE (KV cache and messages), /exit\n";

std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) { g_interrupted = true; }

// Catches SIGINT while it lives (a reply is being generated); the default action otherwise.
struct SigintGuard {
  SigintGuard() {
    g_interrupted = false;
    struct sigaction sa = {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
  }
  ~SigintGuard() { sigaction(SIGINT, &old, nullptr); }
  struct sigaction old = {};
};

}  // namespace

int cmd_chat(const std::vector<std::string>& argv) {
  std::vector<OptionSpec> specs = kChatOptions;
  specs.insert(specs.end(), kSamplingOptions.begin(), kSamplingOptions.end());
  specs.insert(specs.end(), kSimOptions.begin(), kSimOptions.end());
  specs.insert(specs.end(), kKvOptions.begin(), kKvOptions.end());
  const Args args("chat", specs, argv);
  if (args.has("--help")) {
    std::printf("usage: ork chat [-m MODEL] [--system TEXT] [options]\n%s\n%s", kHelp,
                format_options(specs).c_str());
    return 0;
  }
  if (args.has("--verbose")) log::set_verbose(true);
  const runtime::EngineOptions eo = engine_options(args, "auto");
  const int64_t n_ctx = args.get_int("--ctx", 0, 1, int64_t(1) << 24);
  const int64_t n_predict = args.get_int("--n-predict", -1, -1, int64_t(1) << 24);
  runtime::Sampler sampler(sampler_params(args));
  const bool stats = args.has("--stats");
  const bool tty = isatty(STDIN_FILENO) != 0;

  runtime::Engine engine(eo);
  runtime::Context ctx(engine, n_ctx);
  runtime::ChatSession session(ctx, runtime::chat_template_for(engine.model(), args.get_or("--chat-template", "")));
  const std::string system = args.get_or("--system", "");
  session.clear(system);
  if (tty) {
    std::fprintf(stderr, "ork chat: %s, template %s, context %lld tokens. %s", engine.model().file().path().c_str(),
                 session.chat_template().name().c_str(), (long long)ctx.n_ctx(), kHelp);
  }

  std::string line;
  while (true) {
    if (tty) {
      std::fputs("> ", stdout);
      std::fflush(stdout);
    }
    if (!std::getline(std::cin, line)) break;
    if (line.empty()) continue;
    try {
      if (line[0] == '/') {
        const size_t sp = line.find(' ');
        const std::string cmd = line.substr(0, sp);
        const std::string arg = sp == std::string::npos ? "" : line.substr(sp + 1);
        if (cmd == "/exit" || cmd == "/quit") break;
        if (cmd == "/clear") {
          session.clear(system);
          std::fprintf(stderr, "ork: conversation cleared\n");
        } else if ((cmd == "/save" || cmd == "/load") && !arg.empty()) {
          if (cmd == "/save") {
            session.save(arg);
          } else {
            session.load(arg);
          }
          std::fprintf(stderr, "ork: %s %s: %zu messages, %zu tokens\n", cmd == "/save" ? "saved" : "loaded",
                       arg.c_str(), session.messages().size(), session.cached_tokens().size());
        } else {
          std::fprintf(stderr, "ork: unknown command '%s'. %s", line.c_str(), kHelp);
        }
        continue;
      }
      runtime::ChatReply r;
      {
        SigintGuard guard;
        r = session.reply(line, sampler, n_predict, [](const std::string& piece) {
          std::fwrite(piece.data(), 1, piece.size(), stdout);
          std::fflush(stdout);
          return !g_interrupted.load();
        });
      }
      std::fputs("\n", stdout);
      std::fflush(stdout);
      if (r.stop == "interrupted") std::fprintf(stderr, "ork: reply stopped\n");
      if (r.stop == "context") std::fprintf(stderr, "ork: the context is full (/clear starts anew)\n");
      if (stats) {
        std::fprintf(stderr, "ork: prompt %lld tokens (%lld reused from the cache, %lld evaluated), %lld generated, stop %s\n",
                     (long long)r.n_prompt, (long long)r.n_reused, (long long)(r.n_prompt - r.n_reused),
                     (long long)r.n_gen, r.stop.c_str());
      }
    } catch (const Error& e) {
      // Bad input in one turn (too long, a bad session file) leaves the session usable.
      std::fprintf(stderr, "ork: error: %s\n", e.what());
    }
  }
  return 0;
}

}  // namespace ork::cli
