// Writing a whole file atomically: the bytes go to PATH.tmp.PID, then rename(2) puts it in place, so
// a reader sees the old file or the new one, never a part. On failure the temporary is removed and
// an ork::Error names the path and the system's reason. Thread-safe (distinct paths).
#pragma once

#include <string>
#include <string_view>

namespace ork {

void write_file_atomic(const std::string& path, std::string_view bytes);

}  // namespace ork
