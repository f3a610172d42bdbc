// weights::PackWriter — builds an .orkpack in PATH.tmp and publishes it atomically as PATH.
//
// The constructor opens PATH.tmp (created, exclusively flock'ed, truncated: a .tmp left by a killed
// process is simply rewritten) and writes the header. append() writes one entry's blob and scales at
// the next aligned offsets. finalize() writes the index and the footer, fsyncs the file, renames it
// to PATH and fsyncs the directory: until then nothing exists under PATH (or an older PATH stays
// untouched), so a crash or kill at any point leaves no partial file under the final name.
// Destroying an unfinalized writer removes PATH.tmp.
// Errors (open, write, fsync, rename) throw ork::Error naming the path and errno text; a writer that
// threw from append() or finalize() is unusable (further calls throw).
// Thread-safety: append(), contains(), count(), bytes() and finalize() may be called concurrently
// (one internal mutex; an append holds it while writing its bytes).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "npu/layout.h"
#include "weights/orkpack_format.h"
#include "weights/packed.h"

namespace ork::weights {

class PackWriter {
 public:
  // Throws ork::Error when PATH.tmp cannot be created, or is locked by another process (message
  // contains "in use").
  PackWriter(const std::string& path, const Fingerprint& source, npu::Dtype dtype);
  ~PackWriter();
  PackWriter(const PackWriter&) = delete;
  PackWriter& operator=(const PackWriter&) = delete;

  const std::string& path() const { return path_; }
  std::string tmp_path() const { return path_ + ".tmp"; }

  // Appends the entry `name` (w.dtype must be the pack's dtype). Returns false, writing nothing,
  // when `name` is already in the pack or the pack is finalized.
  bool append(std::string_view name, const PackedView& w);
  bool contains(std::string_view name) const;
  uint64_t count() const;
  uint64_t bytes() const;  // file bytes written so far (the entry data end)
  bool finalized() const;

  // Writes index and footer, fsyncs, renames PATH.tmp → PATH. Idempotent.
  void finalize();

 private:
  struct Record {
    std::string name;
    int64_t k, n;
    npu::Dtype dtype;
    uint64_t blob_offset, blob_size, scale_offset, scale_size, checksum;
  };
  void write_at(const void* data, uint64_t size, uint64_t offset);
  void abandon() noexcept;

  std::string path_;
  npu::Dtype dtype_;
  int fd_ = -1;
  mutable std::mutex mutex_;
  uint64_t end_ = 0;  // end of the written entry data
  std::vector<Record> records_;
  std::unordered_set<std::string> names_;
  bool finalized_ = false;
  bool broken_ = false;
};

}  // namespace ork::weights
