#include "args.h"

#include "core/env.h"
#include "core/error.h"

namespace ork::cli {

Args::Args(const std::string& command, const std::vector<OptionSpec>& specs,
           const std::vector<std::string>& argv)
    : command_(command) {
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string arg = argv[i];
    std::optional<std::string> inline_value;
    if (arg.rfind("--", 0) == 0) {
      const size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        inline_value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
      }
    }
    const OptionSpec* spec = nullptr;
    for (const auto& s : specs) {
      for (const auto& n : s.names) {
        if (n == arg) spec = &s;
      }
    }
    if (spec == nullptr) {
      throw UsageError{arg.rfind("-", 0) == 0
                           ? "unknown option '" + arg + "' for 'ork " + command + "'"
                           : "unexpected argument '" + arg + "' for 'ork " + command + "'"};
    }
    const std::string& canonical = spec->names.back();
    if (spec->takes_value) {
      if (inline_value) {
        values_[canonical] = *inline_value;
      } else {
        if (i + 1 >= argv.size()) throw UsageError{"option '" + arg + "' needs a value"};
        values_[canonical] = argv[++i];
      }
    } else {
      if (inline_value) throw UsageError{"option '" + arg + "' takes no value"};
      values_[canonical] = "1";
    }
  }
}

std::optional<std::string> Args::get(const std::string& canonical) const {
  auto it = values_.find(canonical);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Args::get_or(const std::string& canonical, const std::string& def) const {
  return get(canonical).value_or(def);
}

int64_t Args::get_int(const std::string& canonical, int64_t def, int64_t min, int64_t max) const {
  const auto v = get(canonical);
  if (!v) return def;
  try {
    return parse_int(*v, canonical.c_str(), min, max);
  } catch (const Error& e) {
    throw UsageError{e.what()};
  }
}

double Args::get_double(const std::string& canonical, double def, double min, double max) const {
  const auto v = get(canonical);
  if (!v) return def;
  double d;
  try {
    d = parse_double(*v, canonical.c_str());
  } catch (const Error& e) {
    throw UsageError{e.what()};
  }
  if (d < min || d > max) {
    throw UsageError{canonical + ": " + *v + " is out of range [" + std::to_string(min) + ", " +
                     std::to_string(max) + "]"};
  }
  return d;
}

std::string format_options(const std::vector<OptionSpec>& specs) {
  std::string out;
  for (const auto& s : specs) {
    std::string names;
    for (const auto& n : s.names) names += (names.empty() ? "" : ", ") + n;
    if (s.takes_value) names += " X";
    out += "  " + names;
    out += std::string(names.size() < 26 ? 28 - names.size() : 2, ' ');
    out += s.help + "\n";
  }
  return out;
}

}  // namespace ork::cli
