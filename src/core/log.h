// Diagnostics on stderr. Silent by default; ORK_VERBOSE=1 (or --verbose) turns on debug messages.
// Thread-safe: each message is written with one call.
#pragma once

#include <string>

#include "core/error.h"

namespace ork::log {

// Whether debug messages are printed. Initialized from ORK_VERBOSE; set_verbose() overrides.
bool verbose();
void set_verbose(bool on);

// Writes "ork: <message>\n" to stderr.
void write(const std::string& message);

template <typename... Args>
void debug(Args&&... args) {
  if (verbose()) write(str_cat(std::forward<Args>(args)...));
}

template <typename... Args>
void warn(Args&&... args) {
  write(str_cat("warning: ", std::forward<Args>(args)...));
}

}  // namespace ork::log
