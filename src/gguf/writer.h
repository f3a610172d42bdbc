// gguf::Writer — builds a GGUF v3 file in memory order and writes it atomically (PATH.tmp, fsync,
// rename). Used by the model generator, tests and tools. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/value.h"
#include "quant/types.h"

namespace ork::gguf {

class Writer {
 public:
  Writer();
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Tensor data alignment; also written as general.alignment when not the default 32.
  void set_alignment(uint64_t alignment);

  void add_uint8(std::string_view key, uint8_t v);
  void add_int8(std::string_view key, int8_t v);
  void add_uint16(std::string_view key, uint16_t v);
  void add_int16(std::string_view key, int16_t v);
  void add_uint32(std::string_view key, uint32_t v);
  void add_int32(std::string_view key, int32_t v);
  void add_uint64(std::string_view key, uint64_t v);
  void add_int64(std::string_view key, int64_t v);
  void add_float32(std::string_view key, float v);
  void add_float64(std::string_view key, double v);
  void add_bool(std::string_view key, bool v);
  void add_string(std::string_view key, std::string_view v);
  void add_string_array(std::string_view key, const std::vector<std::string>& v);
  void add_float32_array(std::string_view key, const std::vector<float>& v);
  void add_int32_array(std::string_view key, const std::vector<int32_t>& v);
  void add_uint32_array(std::string_view key, const std::vector<uint32_t>& v);
  // Any value, including nested arrays (the Value's strings are copied).
  void add_value(std::string_view key, const Value& v);

  // dims[0] innermost (see TensorInfo). `data` must hold exactly the tensor's bytes (copied).
  void add_tensor(std::string_view name, quant::Type type, const std::vector<uint64_t>& dims,
                  const void* data, size_t n_bytes);

  // The serialized file.
  std::vector<uint8_t> to_bytes() const;
  // Writes to path + ".tmp", fsyncs and renames to `path`. Throws ork::Error on I/O failure.
  void write(const std::string& path) const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace ork::gguf
