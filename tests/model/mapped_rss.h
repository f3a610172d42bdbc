// Resident pages of a mapping, for tests that check what a mapped GGUF keeps in memory.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace ork::testing {

// Resident kB of the mapping that contains `addr` (/proc/self/smaps), -1 when none does. qemu-user
// emulates /proc/self/smaps without resident sizes: callers skip when this is <= 0.
inline int64_t mapped_rss_kb(const void* addr) {
  const auto a = reinterpret_cast<uintptr_t>(addr);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_mapping = false;
  while (std::getline(smaps, line)) {
    const size_t dash = line.find('-'), space = line.find(' ');
    if (dash != std::string::npos && space != std::string::npos && dash < space &&
        line.find(':') > space) {  // a header: "start-end perms offset dev inode path"
      const uintptr_t start = std::stoull(line.substr(0, dash), nullptr, 16);
      const uintptr_t end = std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16);
      in_mapping = start <= a && a < end;
      continue;
    }
    if (in_mapping && line.rfind("Rss:", 0) == 0) return std::stoll(line.substr(4));
  }
  return -1;
}

}  // namespace ork::testing
