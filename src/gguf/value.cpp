#include "gguf/value.h"

#include <cstdint>
#include <limits>

#include "core/error.h"

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

const std::vector<Value>& Value::as_array(std::string_view what, ValueType elem) const {
  if (type != ValueType::ARRAY) {
    fail(what, ": expected an array of ", value_type_name(elem), ", got ", value_type_name(type));
  }
  if (elem_type != elem) {
    fail(what, ": expected an array of ", value_type_name(elem), ", got an array of ",
         value_type_name(elem_type));
  }
  return array;
}

}  // namespace ork::gguf
