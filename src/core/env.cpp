#include "core/env.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/error.h"
#include "core/quote.h"

namespace ork {

std::optional<std::string> env_string(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

int64_t parse_int(const std::string& text, const char* what, int64_t min, int64_t max) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE) {
    fail(what, ": ", quote(text), " is not an integer");
  }
  if (v < min || v > max) fail(what, ": ", v, " is out of range [", min, ", ", max, "]");
  return int64_t(v);
}

double parse_double(const std::string& text, const char* what) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) {
    fail(what, ": ", quote(text), " is not a number");
  }
  return v;
}

int64_t env_int(const char* name, int64_t def, int64_t min, int64_t max) {
  const auto v = env_string(name);
  return v ? parse_int(*v, name, min, max) : def;
}

bool env_flag(const char* name, bool def) {
  const auto v = env_string(name);
  if (!v) return def;
  if (*v == "1" || *v == "true" || *v == "yes" || *v == "on") return true;
  if (*v == "0" || *v == "false" || *v == "no" || *v == "off") return false;
  fail(name, ": '", *v, "' is not a boolean (use 1 or 0)");
}

}  // namespace ork
