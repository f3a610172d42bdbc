#include <unistd.h>

#include <climits>
#include <string>

#include "commands.h"
#include "core/env.h"

namespace ork::cli {

std::string default_model_path() {
  if (auto env = env_string("ORK_MODEL")) return *env;
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string dir = ".";
  if (n > 0) {
    std::string exe(buf, size_t(n));
    const size_t slash = exe.rfind('/');
    if (slash != std::string::npos) dir = exe.substr(0, slash);
  }
  return dir + "/models/default.gguf";
}

}  // namespace ork::cli
