#include "gguf/writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <unordered_map>

#include "core/checked.h"
#include "core/error.h"
#include "core/quote.h"
#include "gguf/file.h"

namespace ork::gguf {

namespace {

constexpr std::string_view kAlignmentKey = "general.alignment";
constexpr uint32_t kMaxDims = 4;

template <typename T>
void put(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

void put_string(std::vector<uint8_t>& out, std::string_view s) {
  put<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

void put_value(std::vector<uint8_t>& out, const Value& v, std::string_view key) {
  if (v.type == ValueType::ARRAY && v.count > 0 && v.bytes.empty()) {
    fail("gguf writer: key ", quote(key), ": array of ", v.count, " elements has no bytes");
  }
  encode_payload(out, v, key);
}

}  // namespace

struct Writer::Impl {
  struct Entry {
    std::string key;
    ValueType type;
    std::vector<uint8_t> payload;  // the encoded value, without its type id
  };
  struct Tensor {
    std::string name;
    quant::Type type;
    std::vector<uint64_t> dims;
    std::vector<uint8_t> data;
  };
  uint64_t alignment = kDefaultAlignment;
  std::vector<Entry> kv;
  std::unordered_map<std::string, size_t> kv_index;
  std::vector<Tensor> tensors;
  std::unordered_map<std::string, size_t> tensor_index;

  void add(std::string_view key, const Value& v) {
    if (key == kAlignmentKey) {
      if (v.type != ValueType::UINT32) {
        fail("gguf writer: key 'general.alignment' must be a uint32, got ",
             value_type_name(v.type));
      }
      const uint64_t a = v.u;
      if (!is_pow2(a)) fail("gguf writer: general.alignment ", a, " is not a power of two");
      alignment = a;
    }
    Entry e{std::string(key), v.type, {}};
    put_value(e.payload, v, key);
    if (!kv_index.emplace(e.key, kv.size()).second) {
      fail("gguf writer: duplicate metadata key ", quote(key));
    }
    kv.push_back(std::move(e));
  }

  // Writes the whole file through `sink` (called with consecutive byte ranges).
  void serialize(const std::function<void(const void*, size_t)>& sink) const {
    std::vector<uint8_t> head;
    put<uint32_t>(head, kMagic);
    put<uint32_t>(head, 3);
    put<uint64_t>(head, tensors.size());
    put<uint64_t>(head, kv.size());
    for (const Entry& e : kv) {
      put_string(head, e.key);
      put<uint32_t>(head, uint32_t(e.type));
      head.insert(head.end(), e.payload.begin(), e.payload.end());
    }
    uint64_t offset = 0;
    for (const Tensor& t : tensors) {
      put_string(head, t.name);
      put<uint32_t>(head, uint32_t(t.dims.size()));
      for (uint64_t d : t.dims) put<uint64_t>(head, d);
      put<uint32_t>(head, uint32_t(t.type));
      put<uint64_t>(head, offset);
      offset = align_up(offset + t.data.size(), alignment);
    }
    head.resize(align_up(head.size(), alignment), 0);
    sink(head.data(), head.size());
    const std::vector<uint8_t> zeros(alignment, 0);
    for (const Tensor& t : tensors) {
      sink(t.data.data(), t.data.size());
      const size_t pad = align_up(t.data.size(), alignment) - t.data.size();
      if (pad > 0) sink(zeros.data(), pad);
    }
  }
};

Writer::Writer() : impl_(new Impl) {}
Writer::~Writer() { delete impl_; }

void Writer::set_alignment(uint64_t alignment) {
  if (!is_pow2(alignment) || alignment > UINT32_MAX) {
    fail("gguf writer: alignment ", alignment, " is not a power of two below 2^32");
  }
  impl_->alignment = alignment;
  auto it = impl_->kv_index.find(std::string(kAlignmentKey));
  if (it != impl_->kv_index.end()) {
    Impl::Entry& e = impl_->kv[it->second];
    Value v;
    v.type = e.type;
    v.u = alignment;
    v.i = int64_t(alignment);
    e.payload.clear();
    put_value(e.payload, v, kAlignmentKey);
  } else if (alignment != kDefaultAlignment) {
    add_uint32(kAlignmentKey, uint32_t(alignment));
  }
}

namespace {
Value scalar(ValueType t) {
  Value v;
  v.type = t;
  return v;
}
}  // namespace

void Writer::add_uint8(std::string_view key, uint8_t x) {
  Value v = scalar(ValueType::UINT8);
  v.u = x;
  impl_->add(key, v);
}
void Writer::add_int8(std::string_view key, int8_t x) {
  Value v = scalar(ValueType::INT8);
  v.i = x;
  impl_->add(key, v);
}
void Writer::add_uint16(std::string_view key, uint16_t x) {
  Value v = scalar(ValueType::UINT16);
  v.u = x;
  impl_->add(key, v);
}
void Writer::add_int16(std::string_view key, int16_t x) {
  Value v = scalar(ValueType::INT16);
  v.i = x;
  impl_->add(key, v);
}
void Writer::add_uint32(std::string_view key, uint32_t x) {
  Value v = scalar(ValueType::UINT32);
  v.u = x;
  impl_->add(key, v);
}
void Writer::add_int32(std::string_view key, int32_t x) {
  Value v = scalar(ValueType::INT32);
  v.i = x;
  impl_->add(key, v);
}
void Writer::add_uint64(std::string_view key, uint64_t x) {
  Value v = scalar(ValueType::UINT64);
  v.u = x;
  impl_->add(key, v);
}
void Writer::add_int64(std::string_view key, int64_t x) {
  Value v = scalar(ValueType::INT64);
  v.i = x;
  impl_->add(key, v);
}
void Writer::add_float32(std::string_view key, float x) {
  Value v = scalar(ValueType::FLOAT32);
  v.f = x;
  impl_->add(key, v);
}
void Writer::add_float64(std::string_view key, double x) {
  Value v = scalar(ValueType::FLOAT64);
  v.f = x;
  impl_->add(key, v);
}
void Writer::add_bool(std::string_view key, bool x) {
  Value v = scalar(ValueType::BOOL);
  v.u = x ? 1 : 0;
  impl_->add(key, v);
}
void Writer::add_string(std::string_view key, std::string_view x) {
  Value v = scalar(ValueType::STRING);
  v.str = x;
  impl_->add(key, v);
}

namespace {
template <typename T, typename Set>
Value array_from(ValueType elem, const std::vector<T>& x, Set set) {
  std::vector<Value> elems(x.size(), scalar(elem));
  for (size_t k = 0; k < x.size(); ++k) set(elems[k], x[k]);
  return Value::array_of(elem, elems);
}
}  // namespace

void Writer::add_string_array(std::string_view key, const std::vector<std::string>& x) {
  impl_->add(key, array_from(ValueType::STRING, x, [](Value& e, const std::string& s) { e.str = s; }));
}
void Writer::add_float32_array(std::string_view key, const std::vector<float>& x) {
  impl_->add(key, array_from(ValueType::FLOAT32, x, [](Value& e, float f) { e.f = f; }));
}
void Writer::add_int32_array(std::string_view key, const std::vector<int32_t>& x) {
  impl_->add(key, array_from(ValueType::INT32, x, [](Value& e, int32_t i) { e.i = i; }));
}
void Writer::add_uint32_array(std::string_view key, const std::vector<uint32_t>& x) {
  impl_->add(key, array_from(ValueType::UINT32, x, [](Value& e, uint32_t u) { e.u = u; }));
}

void Writer::add_value(std::string_view key, const Value& v) { impl_->add(key, v); }

void Writer::add_tensor(std::string_view name, quant::Type type, const std::vector<uint64_t>& dims,
                        const void* data, size_t n_bytes) {
  const std::string what = str_cat("gguf writer: tensor ", quote(name));
  if (dims.empty() || dims.size() > kMaxDims) {
    fail(what, ": ", dims.size(), " dimensions (must be 1..", kMaxDims, ")");
  }
  if (!quant::is_supported(uint32_t(type))) {
    fail(what, ": unsupported type ", quant::type_name(uint32_t(type)));
  }
  const quant::TypeTraits& tr = quant::traits(type);
  uint64_t rows = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 0) fail(what, ": dimension ", d, " is 0");
    if (d > 0) rows = checked_mul(rows, dims[d], what.c_str());
  }
  if (dims[0] % uint64_t(tr.block_size) != 0) {
    fail(what, ": row length ", dims[0], " is not a multiple of the ", tr.name, " block size ",
         tr.block_size);
  }
  const uint64_t expected =
      checked_mul(dims[0] / uint64_t(tr.block_size) * uint64_t(tr.type_size), rows, what.c_str());
  if (expected != n_bytes) fail(what, ": ", n_bytes, " bytes given, the shape needs ", expected);
  if (!impl_->tensor_index.emplace(std::string(name), impl_->tensors.size()).second) {
    fail("gguf writer: duplicate tensor name ", quote(name));
  }
  const uint8_t* p = static_cast<const uint8_t*>(data);
  impl_->tensors.push_back({std::string(name), type, dims, std::vector<uint8_t>(p, p + n_bytes)});
}

std::vector<uint8_t> Writer::to_bytes() const {
  std::vector<uint8_t> out;
  impl_->serialize([&](const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  });
  return out;
}

void Writer::write(const std::string& path) const {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(tmp, ": cannot create: ", std::strerror(errno));
  try {
    impl_->serialize([&](const void* p, size_t n) {
      const uint8_t* b = static_cast<const uint8_t*>(p);
      while (n > 0) {
        const ssize_t w = ::write(fd, b, n);
        if (w < 0) {
          if (errno == EINTR) continue;
          fail(tmp, ": write failed: ", std::strerror(errno));
        }
        b += w;
        n -= size_t(w);
      }
    });
    if (::fsync(fd) != 0) fail(tmp, ": fsync failed: ", std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    fail(tmp, ": close failed: ", std::strerror(e));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    fail(path, ": cannot rename ", tmp, " to it: ", std::strerror(e));
  }
  // Make the rename durable: fsync the directory (best effort; some filesystems refuse).
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace ork::gguf
