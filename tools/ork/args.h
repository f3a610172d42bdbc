// Command-line parsing for the `ork` subcommands: a table of options per command, strict values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ork::cli {

// A usage error: the CLI prints it as one line and exits with status 2.
struct UsageError {
  std::string message;
};

struct OptionSpec {
  std::vector<std::string> names;  // e.g. {"-m", "--model"}; the last one is the canonical name
  bool takes_value;
  std::string help;
};

class Args {
 public:
  // Parses argv (after the subcommand name) against `specs`. Throws UsageError for an unknown
  // option, a missing value or a stray argument.
  Args(const std::string& command, const std::vector<OptionSpec>& specs,
       const std::vector<std::string>& argv);

  bool has(const std::string& canonical) const { return values_.count(canonical) != 0; }
  std::optional<std::string> get(const std::string& canonical) const;
  std::string get_or(const std::string& canonical, const std::string& def) const;
  // Integer in [min, max] / finite number; UsageError naming the option otherwise.
  int64_t get_int(const std::string& canonical, int64_t def, int64_t min, int64_t max) const;
  double get_double(const std::string& canonical, double def, double min, double max) const;

 private:
  std::string command_;
  std::map<std::string, std::string> values_;
};

// "usage" text for a command's options.
std::string format_options(const std::vector<OptionSpec>& specs);

}  // namespace ork::cli
