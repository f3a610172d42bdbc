// MappedFile — a read-only memory mapping of a whole file (RAII).
//
// Ownership: owns the mapping and unmaps it on destruction; movable, not copyable. The bytes stay
// valid for the object's lifetime. Thread-safety: const methods may be called concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ork {

class MappedFile {
 public:
  // Maps `path` read-only. Throws ork::Error naming the path and errno text when it cannot be opened
  // or mapped. An empty file maps to size() == 0 and data() == nullptr.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Drops the pages of [offset, offset + length) from this process (madvise MADV_DONTNEED); they are
  // re-read from the file on next access. Rounds inward to whole pages. Returns false on failure.
  bool drop_pages(uint64_t offset, uint64_t length) const;
  // Maps the pages of [offset, offset + length) into this process now (reading them from the file
  // if they are not in the page cache), so later reads of them take no page fault: madvise
  // MADV_POPULATE_READ (Linux 5.14+), on older kernels a read of one byte per page. Rounds outward
  // to whole pages. Returns false on failure (the bytes stay readable, faulting in as before).
  bool map_pages(uint64_t offset, uint64_t length) const;

 private:
  void release() noexcept;
  std::string path_;
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace ork
