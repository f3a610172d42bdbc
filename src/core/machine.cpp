#include "core/machine.h"

#include <fstream>
#include <iterator>
#include <thread>

namespace ork {

std::string machine_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, cpu = "unknown cpu";
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  std::ifstream dt("/proc/device-tree/model", std::ios::binary);
  std::string board((std::istreambuf_iterator<char>(dt)), std::istreambuf_iterator<char>());
  while (!board.empty() && (board.back() == '\0' || board.back() == '\n')) board.pop_back();
  const std::string cores = " (" + std::to_string(std::thread::hardware_concurrency()) + " cores)";
  return (board.empty() || board == cpu ? cpu : board + ": " + cpu) + cores;
}

}  // namespace ork
