#include "core/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.h"

namespace ork {

void write_file_atomic(const std::string& path, std::string_view bytes) {
  const std::string tmp = str_cat(path, ".tmp.", ::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  ORK_CHECK(f != nullptr, tmp, ": cannot create: ", std::strerror(errno));
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail(path, ": cannot write: ", std::strerror(err));
  }
}

}  // namespace ork
