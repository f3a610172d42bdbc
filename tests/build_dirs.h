// Where the tests find the checkout's files (fixtures, golden streams, models/) and the build's
// programs (ork, ork-gen-model, models/default.gguf).
//
// The two paths are compiled into build_dirs.cpp alone, so that every other test object is the same
// for every checkout and build directory: ccache (scripts/build.sh) then reuses a test object compiled
// in another clone of the same sources (docs/design-notes.md, CI time).
#pragma once

#include <string>

namespace ork::testing {

// The checkout's root directory (absolute, no trailing slash).
const std::string& source_dir();

// The directory holding the build's `ork` and `ork-gen-model` and its models/ (absolute, no trailing
// slash). In a cross build these are wrapper scripts that run each tool under the emulator
// (tests/CMakeLists.txt).
const std::string& binary_dir();

}  // namespace ork::testing
