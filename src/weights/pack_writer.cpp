#include "weights/pack_writer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/checked.h"
#include "core/error.h"
#include "core/quote.h"
#include "weights/hash64.h"
#include "weights/pack_reader.h"

namespace ork::weights {

PackWriter::PackWriter(const std::string& path, const Fingerprint& source, npu::Dtype dtype)
    : path_(path), dtype_(dtype) {
  const std::string tmp = tmp_path();
  fd_ = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(tmp, ": cannot create: ", std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    if (e == EWOULDBLOCK) fail(tmp, ": in use by another ork process");
    fail(tmp, ": cannot lock: ", std::strerror(e));
  }
  // Another process may have renamed the file we opened to PATH between our open() and flock():
  // only truncate when PATH.tmp still names the locked file.
  struct stat by_fd {}, by_name {};
  if (::fstat(fd_, &by_fd) != 0 || ::stat(tmp.c_str(), &by_name) != 0 ||
      by_fd.st_ino != by_name.st_ino || by_fd.st_dev != by_name.st_dev) {
    ::close(fd_);
    fd_ = -1;
    fail(tmp, ": in use by another ork process (renamed while opening)");
  }
  if (::ftruncate(fd_, 0) != 0) {
    const int e = errno;
    abandon();
    fail(tmp, ": cannot truncate: ", std::strerror(e));
  }
  uint8_t h[kPackHeaderBytes] = {};
  std::memcpy(h + hdr::kMagic, kPackMagic, 8);
  put_u32(h + hdr::kVersion, kPackFormatVersion);
  put_u32(h + hdr::kHeaderBytes, uint32_t(kPackHeaderBytes));
  put_u64(h + hdr::kSourceSize, source.size);
  put_u64(h + hdr::kMetaHash, source.meta_hash);
  put_u64(h + hdr::kDataHash, source.data_hash);
  put_u32(h + hdr::kLayout, kPackLayoutVersion);
  put_u32(h + hdr::kDtype, dtype_code(dtype));
  put_u32(h + hdr::kAlign, uint32_t(kPackAlign));
  put_u64(h + hdr::kChecksum, hash64(h, hdr::kChecksum));
  try {
    write_at(h, sizeof h, 0);
  } catch (...) {
    abandon();
    throw;
  }
  end_ = kPackDataStart;
}

PackWriter::~PackWriter() {
  if (!finalized_) abandon();
}

void PackWriter::abandon() noexcept {
  if (fd_ >= 0) {
    ::unlink(tmp_path().c_str());  // while still locked: no other process can be using it
    ::close(fd_);
    fd_ = -1;
  }
  broken_ = true;
}

void PackWriter::write_at(const void* data, uint64_t size, uint64_t offset) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    const size_t chunk = size > (uint64_t(1) << 30) ? size_t(1) << 30 : size_t(size);
    const ssize_t w = ::pwrite(fd_, p, chunk, off_t(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int e = w < 0 ? errno : ENOSPC;
      broken_ = true;
      fail(tmp_path(), ": write of ", size, " bytes at ", offset, " failed: ", std::strerror(e));
    }
    p += w;
    size -= uint64_t(w);
    offset += uint64_t(w);
  }
}

bool PackWriter::append(std::string_view name, const PackedView& w) {
  ORK_CHECK(w.dtype == dtype_, tmp_path(), ": entry ", quote(name), " is ", npu::dtype_name(w.dtype),
            ", the pack is ", npu::dtype_name(dtype_));
  ORK_CHECK(!name.empty() && name.size() <= kPackMaxName, tmp_path(), ": entry name of ",
            name.size(), " bytes (1..", kPackMaxName, ")");
  ORK_CHECK(w.dtype == npu::Dtype::kF16 || w.scales != nullptr, tmp_path(), ": entry ", quote(name),
            " has no scales");
  // Checksum outside the lock: it reads the whole blob.
  const uint64_t checksum = entry_checksum(w);
  std::lock_guard<std::mutex> lock(mutex_);
  ORK_CHECK(!broken_, tmp_path(), ": an earlier write failed");
  if (finalized_ || names_.count(std::string(name)) != 0) return false;
  Record r;
  r.name = std::string(name);
  r.k = w.k;
  r.n = w.n;
  r.dtype = w.dtype;
  r.blob_size = packed_bytes(w.n, w.k, w.dtype);
  r.blob_offset = align_up(end_, kPackAlign);
  uint64_t next = checked_add(r.blob_offset, r.blob_size, "orkpack blob");
  if (w.scale_count() > 0) {
    r.scale_offset = align_up(next, kPackScaleAlign);
    r.scale_size = uint64_t(w.scale_count()) * 4;
    next = checked_add(r.scale_offset, r.scale_size, "orkpack scales");
  } else {
    r.scale_offset = r.scale_size = 0;
  }
  r.checksum = checksum;
  write_at(w.bytes, r.blob_size, r.blob_offset);
  if (r.scale_size > 0) write_at(w.scales, r.scale_size, r.scale_offset);
  end_ = next;
  names_.insert(r.name);
  records_.push_back(std::move(r));
  return true;
}

bool PackWriter::contains(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return names_.count(std::string(name)) != 0;
}
uint64_t PackWriter::count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return records_.size();
}
uint64_t PackWriter::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return end_;
}
bool PackWriter::finalized() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return finalized_;
}

void PackWriter::finalize() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finalized_) return;
  ORK_CHECK(!broken_ && fd_ >= 0, tmp_path(), ": cannot finalize after a failed write");
  std::vector<uint8_t> index;
  for (const Record& r : records_) {
    const size_t at = index.size();
    const uint64_t padded = align_up(4 + r.name.size(), 8) - 4;
    index.resize(at + 4 + size_t(padded) + 64, 0);
    uint8_t* p = index.data() + at;
    put_u32(p, uint32_t(r.name.size()));
    std::memcpy(p + 4, r.name.data(), r.name.size());
    p += 4 + padded;
    put_u64(p, uint64_t(r.k));
    put_u64(p + 8, uint64_t(r.n));
    put_u32(p + 16, dtype_code(r.dtype));
    put_u32(p + 20, 0);
    put_u64(p + 24, r.blob_offset);
    put_u64(p + 32, r.blob_size);
    put_u64(p + 40, r.scale_offset);
    put_u64(p + 48, r.scale_size);
    put_u64(p + 56, r.checksum);
  }
  const uint64_t index_offset = align_up(end_, 64);
  uint8_t footer[kPackFooterBytes] = {};
  put_u64(footer, index_offset);
  put_u64(footer + 8, index.size());
  put_u64(footer + 16, records_.size());
  put_u64(footer + 24, hash64(index.data(), index.size()));
  put_u64(footer + 32, hash64(footer, 32));
  std::memcpy(footer + 40, kPackMagic, 8);
  const std::string tmp = tmp_path();
  write_at(index.data(), index.size(), index_offset);
  write_at(footer, sizeof footer, index_offset + index.size());
  if (::fsync(fd_) != 0) {
    broken_ = true;
    fail(tmp, ": fsync failed: ", std::strerror(errno));
  }
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    broken_ = true;
    fail(path_, ": cannot rename ", tmp, " to it: ", std::strerror(errno));
  }
  // Make the rename durable (best effort: some filesystems refuse to fsync a directory).
  const size_t slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path_.substr(0, slash);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  ::close(fd_);  // releases the lock
  fd_ = -1;
  finalized_ = true;
}

}  // namespace ork::weights
