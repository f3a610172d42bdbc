// ork::Error — the one exception type of ork, and helpers that build its message.
//
// Contract: every error names what is at fault (file, tensor, field, value). The C API and the CLI
// catch ork::Error and turn it into a status code and one line of text. Nothing in ork calls abort()
// on bad input.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace ork {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Concatenates its arguments with operator<< into one string.
template <typename... Args>
std::string str_cat(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}

// Throws ork::Error whose message is the concatenation of the arguments.
template <typename... Args>
[[noreturn]] void fail(Args&&... args) {
  throw Error(str_cat(std::forward<Args>(args)...));
}

}  // namespace ork

// Throws ork::Error(message...) when `cond` is false. For conditions that depend on input (files,
// flags, device replies); not for programming errors that tests should catch.
#define ORK_CHECK(cond, ...)            \
  do {                                  \
    if (!(cond)) ::ork::fail(__VA_ARGS__); \
  } while (0)
