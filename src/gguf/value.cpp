#include "gguf/value.h"

#include <cstdint>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "core/quote.h"

namespace ork::gguf {

std::string_view value_type_name(ValueType t) {
  switch (t) {
    case ValueType::UINT8: return "uint8";
    case ValueType::INT8: return "int8";
    case ValueType::UINT16: return "uint16";
    case ValueType::INT16: return "int16";
    case ValueType::UINT32: return "uint32";
    case ValueType::INT32: return "int32";
    case ValueType::FLOAT32: return "float32";
    case ValueType::BOOL: return "bool";
    case ValueType::STRING: return "string";
    case ValueType::ARRAY: return "array";
    case ValueType::UINT64: return "uint64";
    case ValueType::INT64: return "int64";
    case ValueType::FLOAT64: return "float64";
  }
  return "unknown";
}

namespace {

bool is_unsigned(ValueType t) {
  return t == ValueType::UINT8 || t == ValueType::UINT16 || t == ValueType::UINT32 ||
         t == ValueType::UINT64;
}

bool is_signed(ValueType t) {
  return t == ValueType::INT8 || t == ValueType::INT16 || t == ValueType::INT32 ||
         t == ValueType::INT64;
}

}  // namespace

bool Value::is_integer() const { return is_unsigned(type) || is_signed(type); }

uint64_t Value::as_uint(std::string_view what) const {
  if (is_unsigned(type) || type == ValueType::BOOL) return u;
  if (is_signed(type)) {
    if (i < 0) fail(what, ": expected a non-negative integer, got ", i);
    return uint64_t(i);
  }
  fail(what, ": expected an unsigned integer, got ", value_type_name(type));
}

int64_t Value::as_int(std::string_view what) const {
  if (is_signed(type)) return i;
  if (is_unsigned(type)) {
    if (u > uint64_t(std::numeric_limits<int64_t>::max())) {
      fail(what, ": integer ", u, " does not fit int64");
    }
    return int64_t(u);
  }
  fail(what, ": expected an integer, got ", value_type_name(type));
}

double Value::as_float(std::string_view what) const {
  if (is_float()) return f;
  if (is_unsigned(type)) return double(u);
  if (is_signed(type)) return double(i);
  fail(what, ": expected a number, got ", value_type_name(type));
}

bool Value::as_bool(std::string_view what) const {
  if (type != ValueType::BOOL) fail(what, ": expected a bool, got ", value_type_name(type));
  return u != 0;
}

std::string_view Value::as_string(std::string_view what) const {
  if (type != ValueType::STRING) fail(what, ": expected a string, got ", value_type_name(type));
  return str;
}

ArrayView Value::as_array(std::string_view what, ValueType elem) const {
  if (type != ValueType::ARRAY) {
    fail(what, ": expected an array of ", value_type_name(elem), ", got ", value_type_name(type));
  }
  if (elem_type != elem) {
    fail(what, ": expected an array of ", value_type_name(elem), ", got an array of ",
         value_type_name(elem_type));
  }
  return elements();
}

uint64_t fixed_value_bytes(ValueType t) {
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
    case ValueType::STRING:
    case ValueType::ARRAY: return 0;
  }
  return 0;
}

namespace {

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// The end of the element of type t encoded at p. The bytes are trusted: validated by the parser or
// written by encode_payload.
const uint8_t* skip(ValueType t, const uint8_t* p) {
  if (const uint64_t n = fixed_value_bytes(t)) return p + n;
  if (t == ValueType::STRING) return p + 8 + load<uint64_t>(p);
  const ValueType elem = ValueType(load<uint32_t>(p));
  const uint64_t count = load<uint64_t>(p + 4);
  p += 12;
  if (const uint64_t n = fixed_value_bytes(elem)) return p + n * count;
  for (uint64_t k = 0; k < count; ++k) p = skip(elem, p);
  return p;
}

// The element of type t encoded at p (trusted, as for skip).
Value decode(ValueType t, const uint8_t* p, const std::shared_ptr<const std::vector<uint8_t>>& owner) {
  Value v;
  v.type = t;
  switch (t) {
    case ValueType::UINT8: v.u = load<uint8_t>(p); break;
    case ValueType::INT8: v.i = load<int8_t>(p); break;
    case ValueType::UINT16: v.u = load<uint16_t>(p); break;
    case ValueType::INT16: v.i = load<int16_t>(p); break;
    case ValueType::UINT32: v.u = load<uint32_t>(p); break;
    case ValueType::INT32: v.i = load<int32_t>(p); break;
    case ValueType::UINT64: v.u = load<uint64_t>(p); break;
    case ValueType::INT64: v.i = load<int64_t>(p); break;
    case ValueType::FLOAT32: v.f = load<float>(p); break;
    case ValueType::FLOAT64: v.f = load<double>(p); break;
    case ValueType::BOOL: v.u = load<uint8_t>(p) != 0; break;
    case ValueType::STRING:
      v.str = std::string_view(reinterpret_cast<const char*>(p + 8), size_t(load<uint64_t>(p)));
      break;
    case ValueType::ARRAY: {
      v.elem_type = ValueType(load<uint32_t>(p));
      v.count = load<uint64_t>(p + 4);
      const uint8_t* end = skip(t, p);
      v.bytes = std::span<const uint8_t>(p + 12, size_t(end - (p + 12)));
      break;
    }
  }
  v.owner = owner;
  return v;
}

template <typename T>
void put(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

}  // namespace

Value ArrayView::operator[](uint64_t i) const {
  if (const uint64_t n = fixed_value_bytes(elem_)) return decode(elem_, bytes_.data() + i * n, owner_);
  iterator it = begin();
  for (uint64_t k = 0; k < i; ++k) ++it;
  return *it;
}

Value ArrayView::iterator::operator*() const { return decode(a_->elem_, p_, a_->owner_); }

ArrayView::iterator& ArrayView::iterator::operator++() {
  p_ = skip(a_->elem_, p_);
  ++i_;
  return *this;
}

void encode_payload(std::vector<uint8_t>& out, const Value& v, std::string_view key) {
  switch (v.type) {
    case ValueType::UINT8: put<uint8_t>(out, uint8_t(v.u)); break;
    case ValueType::INT8: put<int8_t>(out, int8_t(v.i)); break;
    case ValueType::UINT16: put<uint16_t>(out, uint16_t(v.u)); break;
    case ValueType::INT16: put<int16_t>(out, int16_t(v.i)); break;
    case ValueType::UINT32: put<uint32_t>(out, uint32_t(v.u)); break;
    case ValueType::INT32: put<int32_t>(out, int32_t(v.i)); break;
    case ValueType::UINT64: put<uint64_t>(out, v.u); break;
    case ValueType::INT64: put<int64_t>(out, v.i); break;
    case ValueType::FLOAT32: put<float>(out, float(v.f)); break;
    case ValueType::FLOAT64: put<double>(out, v.f); break;
    case ValueType::BOOL: put<uint8_t>(out, v.u != 0 ? 1 : 0); break;
    case ValueType::STRING:
      put<uint64_t>(out, v.str.size());
      out.insert(out.end(), v.str.begin(), v.str.end());
      break;
    case ValueType::ARRAY:
      put<uint32_t>(out, uint32_t(v.elem_type));
      put<uint64_t>(out, v.count);
      out.insert(out.end(), v.bytes.begin(), v.bytes.end());
      break;
    default:
      fail("gguf: key ", quote(key), ": unknown value type ", uint32_t(v.type));
  }
}

Value Value::array_of(ValueType elem, const std::vector<Value>& elems) {
  auto bytes = std::make_shared<std::vector<uint8_t>>();
  for (const Value& e : elems) {
    if (e.type != elem) {
      fail("gguf: array of ", value_type_name(elem), " given an element of type ", value_type_name(e.type));
    }
    encode_payload(*bytes, e, "array element");
  }
  Value v;
  v.type = ValueType::ARRAY;
  v.elem_type = elem;
  v.count = elems.size();
  v.bytes = std::span<const uint8_t>(bytes->data(), bytes->size());
  v.owner = std::move(bytes);
  return v;
}

}  // namespace ork::gguf
