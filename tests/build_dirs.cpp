// The only test object that holds the checkout's and the build's paths (tests/CMakeLists.txt defines
// ORK_SOURCE_DIR and ORK_BINARY_DIR for this file only).
#include "build_dirs.h"

namespace ork::testing {

const std::string& source_dir() {
  static const std::string dir = ORK_SOURCE_DIR;
  return dir;
}

const std::string& binary_dir() {
  static const std::string dir = ORK_BINARY_DIR;
  return dir;
}

}  // namespace ork::testing
