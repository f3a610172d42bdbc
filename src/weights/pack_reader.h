// weights::PackReader — an .orkpack opened read-only over mmap, structurally validated.
//
// open() checks everything but the entry checksums (docs/orkpack.md, "Reading"): any damage —
// truncation, a flipped byte in the header, index or footer, an index pointing outside the file,
// an unknown format version — is an ork::Error naming the path, the field and the value. verify()
// checks one entry's checksum (reads its whole blob and scales).
// Ownership: views point into the mapping owned by the reader and stay valid while it lives.
// Thread-safety: all const methods may be called concurrently.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/mapped_file.h"
#include "npu/layout.h"
#include "weights/orkpack_format.h"
#include "weights/packed.h"

namespace ork::weights {

struct PackHeader {
  uint32_t format_version = 0;
  Fingerprint source;
  uint32_t layout_version = 0;
  npu::Dtype dtype = npu::Dtype::kI8;
};

struct PackEntry {
  std::string name;
  int64_t k = 0, n = 0;
  npu::Dtype dtype = npu::Dtype::kI8;
  uint64_t blob_offset = 0, blob_size = 0;
  uint64_t scale_offset = 0, scale_size = 0;  // 0, 0 for f16
  uint64_t checksum = 0;
};

class PackReader {
 public:
  // Maps and validates `path`. Throws ork::Error (path, field, value) on any problem.
  static std::unique_ptr<PackReader> open(const std::string& path);

  const std::string& path() const { return map_.path(); }
  const PackHeader& header() const { return header_; }
  const std::vector<PackEntry>& entries() const { return entries_; }
  const PackEntry* find(std::string_view name) const;  // nullptr when absent
  const MappedFile& mapping() const { return map_; }

  // A view of the entry's bytes and scales, into the mapping.
  PackedView view(const PackEntry& e) const;
  // Whether the entry's bytes and scales match its checksum.
  bool verify(const PackEntry& e) const;

 private:
  explicit PackReader(MappedFile map) : map_(std::move(map)) {}
  void parse();
  MappedFile map_;
  PackHeader header_;
  std::vector<PackEntry> entries_;
  std::unordered_map<std::string_view, size_t> index_;
};

// The checksum of a packed weight as the format defines it: hash64(scales, hash64(bytes)).
uint64_t entry_checksum(const PackedView& w);

// Checks that the pack was made from the model whose fingerprint is `source` with the layout and
// dtype `dtype`; throws ork::Error naming the path and the difference otherwise.
void check_pack_source(const PackReader& pack, const Fingerprint& source, npu::Dtype dtype);

}  // namespace ork::weights
