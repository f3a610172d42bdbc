// ork — run GGUF language models on the RK3588 NPU (or its simulator) and on the CPU.
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "core/error.h"
#include "core/quote.h"

namespace {

const char* kUsage =
    "usage: ork <command> [options]\n"
    "\n"
    "commands:\n"
    "  run        generate text from a prompt\n"
    "  chat       interactive multi-turn chat (the model's chat template)\n"
    "  serve      OpenAI- and Ollama-compatible HTTP server\n"
    "  tokenize   print the token ids of a text\n"
    "  mem        memory a model takes: the plan before loading, then the device's counts\n"
    "  perplexity perplexity of a model over a text file (llama.cpp's convention)\n"
    "  probe      device probes: dma, stream, matmul, persist\n"
    "  convert    pack a model's weights once into an .orkpack\n"
    "  bench      prompt and generation speed, decode bandwidth (like llama-bench)\n"
    "\n"
    "'ork <command> --help' lists a command's options.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (command == "run") return ork::cli::cmd_run(args);
    if (command == "chat") return ork::cli::cmd_chat(args);
    if (command == "serve") return ork::cli::cmd_serve(args);
    if (command == "tokenize") return ork::cli::cmd_tokenize(args);
    if (command == "mem") return ork::cli::cmd_mem(args);
    if (command == "perplexity") return ork::cli::cmd_perplexity(args);
    if (command == "probe") return ork::cli::cmd_probe(args);
    if (command == "convert") return ork::cli::cmd_convert(args);
    if (command == "bench") return ork::cli::cmd_bench(args);
    if (command == "--help" || command == "-h" || command == "help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::fprintf(stderr, "ork: unknown command %s\n%s", ork::quote(command).c_str(), kUsage);
    return 2;
  } catch (const ork::cli::UsageError& e) {
    std::fprintf(stderr, "ork: %s (see 'ork %s --help')\n", ork::one_line(e.message).c_str(),
                 ork::one_line(command).c_str());
    return 2;
  } catch (const ork::Error& e) {
    // Names from files are quoted where they enter a message (core/quote.h); one_line() is the last
    // line of defence: whatever the message holds, it prints as one line of at most ~1000 bytes.
    std::fprintf(stderr, "ork: error: %s\n", ork::one_line(e.what()).c_str());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "ork: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ork: error: %s\n", ork::one_line(e.what()).c_str());
    return 1;
  }
}
