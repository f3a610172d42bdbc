// Typed reads of environment variables. A malformed value is an ork::Error naming the variable;
// an unset or empty variable yields the default. Thread-safe as long as nobody calls setenv().
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ork {

std::optional<std::string> env_string(const char* name);
int64_t env_int(const char* name, int64_t def, int64_t min, int64_t max);
bool env_flag(const char* name, bool def);

// Parses a whole decimal integer in [min, max]; throws ork::Error naming `what` otherwise.
int64_t parse_int(const std::string& text, const char* what, int64_t min, int64_t max);
// Parses a whole finite floating-point number; throws ork::Error naming `what` otherwise.
double parse_double(const std::string& text, const char* what);

}  // namespace ork
