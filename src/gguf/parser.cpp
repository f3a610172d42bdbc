#include "gguf/parser.h"

#include <bit>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>

#include "core/checked.h"
#include "core/error.h"
#include "core/quote.h"

namespace ork::gguf {

static_assert(std::endian::native == std::endian::little, "the GGUF reader assumes a little-endian host");

namespace {

// Smallest encoded size of one element of each value type (strings and arrays: their headers).
uint64_t min_value_bytes(ValueType t) {
  switch (t) {
    case ValueType::UINT8:
    case ValueType::INT8:
    case ValueType::BOOL: return 1;
    case ValueType::UINT16:
    case ValueType::INT16: return 2;
    case ValueType::UINT32:
    case ValueType::INT32:
    case ValueType::FLOAT32: return 4;
    case ValueType::UINT64:
    case ValueType::INT64:
    case ValueType::FLOAT64: return 8;
    case ValueType::STRING: return 8;   // u64 length
    case ValueType::ARRAY: return 12;   // u32 element type + u64 count
  }
  return 0;
}

bool known_value_type(uint32_t t) { return t <= uint32_t(ValueType::FLOAT64); }

// Minimum bytes of a metadata entry: key length (8) + value type (4) + a 1-byte value.
constexpr uint64_t kMinKvBytes = 13;
// Minimum bytes of a tensor info: name length (8) + n_dims (4) + one dim (8) + type (4) + offset (8).
constexpr uint64_t kMinTensorInfoBytes = 32;
constexpr uint32_t kMaxDims = 4;

class Reader {
 public:
  Reader(const std::string& path, const uint8_t* data, uint64_t size)
      : path_(path), data_(data), size_(size) {}

  template <typename... Args>
  [[noreturn]] void error(Args&&... args) const {
    fail(path_, ": ", std::forward<Args>(args)...);
  }

  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }

  // Fails naming `what` unless `n` more bytes are available.
  void need(uint64_t n, std::string_view what) const {
    if (n > remaining()) {
      error(what, ": needs ", n, " bytes at offset ", pos_, " but only ", remaining(),
            " remain (file is ", size_, " bytes)");
    }
  }

  template <typename T>
  T read(std::string_view what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string_view read_string(std::string_view what) {
    const uint64_t len = read<uint64_t>(what);
    if (len > remaining()) {
      error(what, ": string length ", len, " exceeds the ", remaining(), " bytes left in the file");
    }
    std::string_view s(reinterpret_cast<const char*>(data_ + pos_), size_t(len));
    pos_ += len;
    return s;
  }

  uint64_t mul(uint64_t a, uint64_t b, std::string_view what) const {
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r)) error(what, ": size overflows (", a, " * ", b, ")");
    return r;
  }
  uint64_t add(uint64_t a, uint64_t b, std::string_view what) const {
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r)) error(what, ": size overflows (", a, " + ", b, ")");
    return r;
  }

  Value read_value(ValueType type, const std::string& what, int depth) {
    Value v;
    v.type = type;
    switch (type) {
      case ValueType::UINT8: v.u = read<uint8_t>(what); break;
      case ValueType::INT8: v.i = read<int8_t>(what); break;
      case ValueType::UINT16: v.u = read<uint16_t>(what); break;
      case ValueType::INT16: v.i = read<int16_t>(what); break;
      case ValueType::UINT32: v.u = read<uint32_t>(what); break;
      case ValueType::INT32: v.i = read<int32_t>(what); break;
      case ValueType::UINT64: v.u = read<uint64_t>(what); break;
      case ValueType::INT64: v.i = read<int64_t>(what); break;
      case ValueType::FLOAT32: v.f = read<float>(what); break;
      case ValueType::FLOAT64: v.f = read<double>(what); break;
      case ValueType::BOOL: {
        const uint8_t b = read<uint8_t>(what);
        if (b > 1) error(what, ": bool value ", unsigned(b), " is neither 0 nor 1");
        v.u = b;
        break;
      }
      case ValueType::STRING: v.str = read_string(what); break;
      case ValueType::ARRAY: {
        if (depth >= Parser::kMaxArrayDepth) {
          error(what, ": arrays nested deeper than ", Parser::kMaxArrayDepth);
        }
        const uint32_t elem = read<uint32_t>(what + " (array element type)");
        if (!known_value_type(elem)) error(what, ": unknown array element type ", elem);
        v.elem_type = ValueType(elem);
        const uint64_t count = read<uint64_t>(what + " (array length)");
        const uint64_t min_elem = min_value_bytes(v.elem_type);
        if (count > remaining() / min_elem) {
          error(what, ": array of ", count, " ", value_type_name(v.elem_type),
                " elements cannot fit in the ", remaining(), " bytes left in the file");
        }
        // The elements stay in the file: validated here, decoded when read (gguf::ArrayView).
        const uint64_t start = pos_;
        const uint64_t fixed = fixed_value_bytes(v.elem_type);
        if (fixed > 0 && v.elem_type != ValueType::BOOL) {
          need(count * fixed, what);  // count * fixed <= remaining(): checked above
          pos_ += count * fixed;
        } else {
          for (uint64_t k = 0; k < count; ++k) read_value(v.elem_type, what, depth + 1);
        }
        v.count = count;
        v.bytes = std::span<const uint8_t>(data_ + start, size_t(pos_ - start));
        break;
      }
    }
    return v;
  }

 private:
  const std::string& path_;
  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

}  // namespace

File Parser::open(const std::string& path) {
  File f;
  f.map_ = std::make_unique<MappedFile>(path);
  const uint8_t* base = f.map_->data();
  const uint64_t size = f.map_->size();
  const std::string& p = f.map_->path();
  Reader r(p, base, size);

  // Header.
  const uint32_t magic = r.read<uint32_t>("magic");
  if (magic != kMagic) {
    r.error("bad magic 0x", std::hex, magic, std::dec, " (expected 0x", std::hex, kMagic,
            std::dec, " \"GGUF\"): not a GGUF file");
  }
  f.version_ = r.read<uint32_t>("version");
  if (f.version_ != 2 && f.version_ != 3) {
    r.error("version ", f.version_, " is not supported (only GGUF versions 2 and 3)");
  }
  const uint64_t n_tensors = r.read<uint64_t>("tensor_count");
  const uint64_t n_kv = r.read<uint64_t>("metadata_kv_count");
  if (n_kv > r.remaining() / kMinKvBytes) {
    r.error("metadata_kv_count ", n_kv, " cannot fit in the ", r.remaining(),
            " bytes left in the file");
  }
  if (n_tensors > r.remaining() / kMinTensorInfoBytes) {
    r.error("tensor_count ", n_tensors, " cannot fit in the ", r.remaining(),
            " bytes left in the file");
  }

  // Metadata.
  reserve_or_fail(f.kv_, n_kv, str_cat(p, ": metadata_kv_count ", n_kv));
  for (uint64_t k = 0; k < n_kv; ++k) {
    KeyValue kv;
    kv.key = r.read_string(str_cat("key of metadata entry ", k));
    const std::string what = str_cat("metadata key ", quote(kv.key));
    const uint32_t type = r.read<uint32_t>(what + " (value type)");
    if (!known_value_type(type)) r.error(what, ": unknown value type ", type);
    kv.value = r.read_value(ValueType(type), what, 0);
    if (!f.kv_index_.emplace(kv.key, f.kv_.size()).second) {
      r.error("duplicate metadata key ", quote(kv.key));
    }
    f.kv_.push_back(std::move(kv));
  }

  if (const Value* a = f.find("general.alignment")) {
    if (!a->is_integer()) {
      r.error("metadata key 'general.alignment': expected an unsigned integer, got ",
              value_type_name(a->type));
    }
    const uint64_t align = a->as_uint(str_cat(p, ": metadata key 'general.alignment'"));
    if (!is_pow2(align)) {
      r.error("metadata key 'general.alignment': ", align, " is not a power of two");
    }
    f.alignment_ = align;
  }

  // Tensor infos.
  struct Pending {
    uint64_t rel_offset;
  };
  std::vector<Pending> pending;
  reserve_or_fail(f.tensors_, n_tensors, str_cat(p, ": tensor_count ", n_tensors));
  reserve_or_fail(pending, n_tensors, str_cat(p, ": tensor_count ", n_tensors));
  for (uint64_t k = 0; k < n_tensors; ++k) {
    TensorInfo t;
    t.name = r.read_string(str_cat("name of tensor ", k));
    const std::string what = str_cat("tensor ", quote(t.name));
    const uint32_t n_dims = r.read<uint32_t>(what + " n_dims");
    if (n_dims < 1 || n_dims > kMaxDims) {
      r.error(what, ": n_dims ", n_dims, " is out of range (1..", kMaxDims, ")");
    }
    t.dims.resize(n_dims);
    uint64_t n_elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      t.dims[d] = r.read<uint64_t>(str_cat(what, " dims[", d, "]"));
      if (t.dims[d] == 0) r.error(what, ": dimension ", d, " is 0");
      if (t.dims[d] > uint64_t(std::numeric_limits<int64_t>::max())) {
        r.error(what, ": dimension ", d, " = ", t.dims[d], " is too large");
      }
      n_elements = r.mul(n_elements, t.dims[d], what + " element count");
    }
    if (n_elements > uint64_t(std::numeric_limits<int64_t>::max())) {
      r.error(what, ": element count ", n_elements, " is too large");
    }
    t.n_elements = n_elements;
    const uint32_t type = r.read<uint32_t>(what + " type");
    if (!quant::is_supported(type)) {
      r.error(what, ": unknown or unsupported tensor type ", type, " (",
              quant::type_name(type), ")");
    }
    t.type = quant::Type(type);
    const quant::TypeTraits& tr = quant::traits(t.type);
    if (t.dims[0] % uint64_t(tr.block_size) != 0) {
      r.error(what, ": row length dims[0] = ", t.dims[0], " is not a multiple of the ", tr.name,
              " block size ", tr.block_size);
    }
    const uint64_t row = r.mul(t.dims[0] / uint64_t(tr.block_size), uint64_t(tr.type_size),
                               what + " row bytes");
    t.n_bytes = r.mul(row, t.rows(), what + " data size");
    const uint64_t rel = r.read<uint64_t>(what + " offset");
    if (rel % f.alignment_ != 0) {
      r.error(what, ": data offset ", rel, " is not a multiple of the alignment ", f.alignment_);
    }
    if (!f.tensor_index_.emplace(t.name, f.tensors_.size()).second) {
      r.error("duplicate tensor name ", quote(t.name));
    }
    pending.push_back({rel});
    f.tensors_.push_back(std::move(t));
  }

  // Data section: starts at the end of the infos rounded up to the alignment.
  const uint64_t end_infos = r.pos();
  f.data_offset_ = r.add(end_infos, f.alignment_ - 1, "data section offset") & ~(f.alignment_ - 1);
  for (size_t k = 0; k < f.tensors_.size(); ++k) {
    TensorInfo& t = f.tensors_[k];
    const std::string what = str_cat("tensor ", quote(t.name));
    t.offset = r.add(f.data_offset_, pending[k].rel_offset, what + " data offset");
    const uint64_t end = r.add(t.offset, t.n_bytes, what + " data end");
    if (end > size) {
      r.error(what, ": data [offset ", t.offset, ", ", t.n_bytes,
              " bytes] extends past end of file (", size, " bytes)");
    }
    t.data = base + t.offset;
  }
  return f;
}

}  // namespace ork::gguf
