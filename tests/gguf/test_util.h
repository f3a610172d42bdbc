// Helpers for the gguf tests: a per-test temporary directory and raw file writes.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace ork::gguf::testing {

// A fresh directory under /dev/shm when it is writable (the corruption tests write thousands of
// small files), else under the system temp dir; removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    const std::filesystem::path base =
        ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : std::filesystem::temp_directory_path();
    std::string tmpl = (base / "ork-gguf-XXXXXX").string();
    char* p = ::mkdtemp(tmpl.data());
    if (p == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = p;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes, size_t n) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(n));
  if (!out) throw std::runtime_error("cannot write " + path);
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  write_bytes(path, bytes, bytes.size());
}

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Little-endian byte builder for hand-made (and deliberately broken) GGUF files.
struct Bytes {
  std::vector<uint8_t> b;
  template <typename T>
  Bytes& put(T v) {
    const size_t at = b.size();
    b.resize(at + sizeof(T));
    std::memcpy(b.data() + at, &v, sizeof(T));
    return *this;
  }
  Bytes& u8(uint8_t v) { return put(v); }
  Bytes& u32(uint32_t v) { return put(v); }
  Bytes& u64(uint64_t v) { return put(v); }
  Bytes& f32(float v) { return put(v); }
  Bytes& str(std::string_view s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& pad_to(size_t align) {
    while (b.size() % align != 0) b.push_back(0);
    return *this;
  }
  Bytes& zeros(size_t n) {
    b.resize(b.size() + n, 0);
    return *this;
  }
  // Header: magic, version, tensor_count, metadata_kv_count.
  Bytes& header(uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
    return u32(0x46554747).u32(version).u64(n_tensors).u64(n_kv);
  }
  // A tensor info: name, n_dims, dims, type, offset.
  Bytes& tensor(std::string_view name, const std::vector<uint64_t>& dims, uint32_t type,
                uint64_t offset) {
    str(name).u32(uint32_t(dims.size()));
    for (uint64_t d : dims) u64(d);
    return u32(type).u64(offset);
  }
};

}  // namespace ork::gguf::testing
