// ork serve — an OpenAI- and Ollama-compatible HTTP server for one model (src/serve, docs/serve.md).
// Listens on 127.0.0.1 unless --host says otherwise; SIGINT/SIGTERM stop it.
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "args.h"
#include "commands.h"
#include "device_flags.h"
#include "sampling_flags.h"
#include "core/error.h"
#include "core/log.h"
#include "runtime/engine.h"
#ifdef ORK_HAVE_SERVE
#include "serve/server.h"
#endif

namespace ork::cli {
namespace {

const std::vector<OptionSpec> kServeOptions = {
    {{"-m", "--model"}, true, "GGUF model file (default: the embedded default model)"},
    {{"--host"}, true, "address to listen on (default 127.0.0.1: this machine only)"},
    {{"--port"}, true, "TCP port (default 8080; 0: any free port, printed at start)"},
    {{"--parallel"}, true, "requests generated at the same time, one slot each (default 1)"},
    {{"--no-cont-batching"}, false, "decode each slot's tokens in a pass of its own (default: all generating slots in one pass)"},
    {{"-c", "--ctx"}, true, "context size of each slot in tokens (default: the model's trained length, bounded by half the available memory)"},
    {{"--api-key"}, true, "require 'Authorization: Bearer KEY' (not for /health)"},
    {{"--alias"}, true, "model name in the API (default: the file name without .gguf)"},
    {{"--chat-template"}, true, "chat template family instead of the model's"},
    {{"-t", "--threads"}, true, "threads (default: all cores)"},
    {{"--device"}, true, "cpu | npu | sim | auto (default: npu when present, else cpu)"},
    {{"--cpu-int8"}, false, "cpu: run matmuls as int8 w8a8, the NPU path's arithmetic"},
    {{"--exact"}, false, "cpu: decode weights to f32 (the reference path)"},
    {{"-v", "--verbose"}, false, "debug messages on stderr (ORK_VERBOSE=1)"},
    {{"-h", "--help"}, false, "this help"},
};

}  // namespace

int cmd_serve(const std::vector<std::string>& argv) {
  std::vector<OptionSpec> specs = kServeOptions;
  specs.insert(specs.end(), kSamplingOptions.begin(), kSamplingOptions.end());
  specs.insert(specs.end(), kSimOptions.begin(), kSimOptions.end());
  specs.insert(specs.end(), kKvOptions.begin(), kKvOptions.end());
  const Args args("serve", specs, argv);
  if (args.has("--help")) {
    std::printf("usage: ork serve [-m MODEL] [--host H] [--port P] [--parallel N] [options]\n\n%s",
                format_options(specs).c_str());
    return 0;
  }
#ifndef ORK_HAVE_SERVE
  throw Error("this ork was built without cpp-httplib (libcpp-httplib-dev): ork serve is not available");
#else
  if (args.has("--verbose")) log::set_verbose(true);
  const runtime::EngineOptions eo = engine_options(args, "auto");
  serve::ServerOptions so;
  so.host = args.get_or("--host", "127.0.0.1");
  so.port = int(args.get_int("--port", 8080, 0, 65535));
  so.parallel = int(args.get_int("--parallel", 1, 1, 256));
  so.n_ctx = args.get_int("--ctx", 0, 1, int64_t(1) << 24);
  so.cont_batching = !args.has("--no-cont-batching");
  so.api_key = args.get_or("--api-key", "");
  so.chat_template = args.get_or("--chat-template", "");
  so.model_name = args.get_or("--alias", std::filesystem::path(eo.model_path).stem().string());
  // A seed given on the command line would make every request alike: it is the default of requests
  // that give none, which otherwise get a random one.
  so.defaults = sampler_params(args);
  if (!args.has("--seed")) so.defaults.seed = runtime::SamplerParams::kRandomSeed;

  // SIGINT/SIGTERM: blocked in every thread (set before any is created), a watcher thread waits for
  // them and stops the server.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  runtime::Engine engine(eo);
  serve::Server server(engine, so);
  const int port = server.bind();
  std::fprintf(stderr, "ork serve: %s as '%s' on http://%s:%d (%d slot%s)\n", eo.model_path.c_str(),
               so.model_name.c_str(), so.host.c_str(), port, so.parallel, so.parallel == 1 ? "" : "s");
  std::printf("%d\n", port);  // the port, for scripts (--port 0)
  std::fflush(stdout);

  std::thread watcher([&] {
    int sig = 0;
    sigwait(&set, &sig);
    if (sig != 0) server.stop();
  });
  server.run();
  // run() also returns when stop() came from elsewhere: wake the watcher.
  pthread_kill(watcher.native_handle(), SIGTERM);
  watcher.join();
  std::fprintf(stderr, "ork serve: stopped\n");
  return 0;
#endif
}

}  // namespace ork::cli
