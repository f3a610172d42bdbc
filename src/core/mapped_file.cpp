#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "core/error.h"

namespace ork {

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, ": cannot open: ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    fail(path, ": cannot stat: ", std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(path, ": not a regular file");
  }
  size_ = uint64_t(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      fail(path, ": cannot mmap ", size_, " bytes: ", std::strerror(e));
    }
    data_ = static_cast<uint8_t*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)), data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::release() noexcept {
  if (data_ != nullptr) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

bool MappedFile::drop_pages(uint64_t offset, uint64_t length) const {
  if (data_ == nullptr || offset >= size_) return false;
  if (length > size_ - offset) length = size_ - offset;
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t begin = (offset + page - 1) / page * page;
  const uint64_t end = (offset + length) / page * page;
  if (end <= begin) return true;
  return ::madvise(data_ + begin, end - begin, MADV_DONTNEED) == 0;
}

bool MappedFile::map_pages(uint64_t offset, uint64_t length) const {
  if (data_ == nullptr || offset >= size_) return false;
  if (length > size_ - offset) length = size_ - offset;
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t begin = offset / page * page;
  const uint64_t end = std::min(size_, (offset + length + page - 1) / page * page);
  if (end <= begin) return true;
#ifndef MADV_POPULATE_READ
  constexpr int MADV_POPULATE_READ = 22;  // <linux/mman.h> of Linux 5.14; glibc headers may lack it
#endif
  if (::madvise(data_ + begin, end - begin, MADV_POPULATE_READ) == 0) return true;
  if (errno != EINVAL) return false;  // EINVAL: a kernel before 5.14
  uint8_t sum = 0;
  for (uint64_t p = begin; p < end; p += page) sum ^= *static_cast<volatile const uint8_t*>(data_ + p);
  static_cast<void>(sum);
  return true;
}

}  // namespace ork
