// The `ork` subcommands. Each takes the arguments after its name and returns the exit status;
// errors are thrown (ork::Error → status 1, cli::UsageError → status 2) and printed by main().
#pragma once

#include <string>
#include <vector>

namespace ork::cli {

int cmd_run(const std::vector<std::string>& args);
int cmd_chat(const std::vector<std::string>& args);
int cmd_serve(const std::vector<std::string>& args);
int cmd_tokenize(const std::vector<std::string>& args);
int cmd_mem(const std::vector<std::string>& args);
int cmd_probe(const std::vector<std::string>& args);
int cmd_perplexity(const std::vector<std::string>& args);
int cmd_convert(const std::vector<std::string>& args);
int cmd_bench(const std::vector<std::string>& args);

// The model used when -m is not given: $ORK_MODEL, else models/default.gguf next to the binary.
std::string default_model_path();

}  // namespace ork::cli
