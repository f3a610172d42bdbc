#include "core/log.h"

#include <unistd.h>

#include <atomic>

#include "core/env.h"

namespace ork::log {
namespace {
std::atomic<int> g_verbose{-1};  // -1: not read from the environment yet
}

bool verbose() {
  int v = g_verbose.load(std::memory_order_relaxed);
  if (v < 0) {
    v = env_flag("ORK_VERBOSE", false) ? 1 : 0;
    g_verbose.store(v, std::memory_order_relaxed);
  }
  return v == 1;
}

void set_verbose(bool on) { g_verbose.store(on ? 1 : 0, std::memory_order_relaxed); }

void write(const std::string& message) {
  const std::string line = "ork: " + message + "\n";
  ssize_t unused = ::write(2, line.data(), line.size());
  (void)unused;
}

}  // namespace ork::log
