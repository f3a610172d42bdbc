// gguf::File — a GGUF (v2 or v3) file parsed over a read-only mmap, without copying tensor data.
//
// The file is untrusted: every count, length and offset is bounds- and overflow-checked; unknown
// value or tensor types, duplicate keys or tensor names, misaligned or out-of-file tensor data are
// reported as ork::Error naming the path and the field at fault.
// Ownership: File owns its mapping; string views, Values and tensor data pointers it hands out are
// valid while the File lives. Thread-safety: all const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/mapped_file.h"
#include "gguf/value.h"
#include "quant/types.h"

namespace ork::gguf {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr uint64_t kDefaultAlignment = 32;

struct TensorInfo {
  std::string_view name;
  quant::Type type = quant::Type::F32;
  // dims[0] is the innermost (row length, contiguous); a 2-D weight of N rows of K: dims = {K, N}.
  std::vector<uint64_t> dims;
  uint64_t n_elements = 0;
  uint64_t offset = 0;   // absolute byte offset of the data in the file
  uint64_t n_bytes = 0;  // bytes of data
  const uint8_t* data = nullptr;  // into the mapping

  uint64_t rows() const;       // product of dims[1..]
  uint64_t row_length() const { return dims.empty() ? 1 : dims[0]; }
};

class File {
 public:
  // Maps and parses `path`. Throws ork::Error naming the path and what is wrong.
  static File open(const std::string& path);

  File(File&&) noexcept;
  File& operator=(File&&) noexcept;
  ~File();

  const std::string& path() const;
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // start of the tensor data section
  const MappedFile& mapping() const { return *map_; }

  const std::vector<KeyValue>& metadata() const { return kv_; }
  // nullptr when the key is absent.
  const Value* find(std::string_view key) const;
  // Typed getters: throw ork::Error naming the path and key when absent or of the wrong type.
  std::string_view get_string(std::string_view key) const;
  uint64_t get_uint(std::string_view key) const;
  int64_t get_int(std::string_view key) const;
  double get_float(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  // Same, with a default when the key is absent (still an error when present with a bad type).
  std::string_view get_string_or(std::string_view key, std::string_view def) const;
  uint64_t get_uint_or(std::string_view key, uint64_t def) const;
  double get_float_or(std::string_view key, double def) const;
  bool get_bool_or(std::string_view key, bool def) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  // nullptr when absent.
  const TensorInfo* find_tensor(std::string_view name) const;
  // Throws ork::Error naming the path and tensor when absent.
  const TensorInfo& tensor(std::string_view name) const;

 private:
  File() = default;
  std::unique_ptr<MappedFile> map_;
  uint32_t version_ = 0;
  uint64_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<KeyValue> kv_;
  std::unordered_map<std::string_view, size_t> kv_index_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string_view, size_t> tensor_index_;
  friend class Parser;
};

}  // namespace ork::gguf
