// GGUF metadata values: the value type ids of the format and a parsed value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ork::gguf {

// Values are the GGUF metadata value type ids.
enum class ValueType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};

std::string_view value_type_name(ValueType t);

// One metadata value. Strings are views into the mapped file (or into the Writer's storage): they
// are valid while the File that produced them is alive. Arrays hold their elements (which may be
// arrays themselves).
struct Value {
  ValueType type = ValueType::UINT8;
  uint64_t u = 0;          // UINT8/16/32/64 and BOOL (0/1)
  int64_t i = 0;           // INT8/16/32/64
  double f = 0.0;          // FLOAT32/64
  std::string_view str;    // STRING
  ValueType elem_type = ValueType::UINT8;  // ARRAY: the type of the elements
  std::vector<Value> array;                // ARRAY: the elements

  bool is_integer() const;  // any of the 8 integer types
  bool is_float() const { return type == ValueType::FLOAT32 || type == ValueType::FLOAT64; }

  // Conversions that throw ork::Error (naming `what`, e.g. the key) when the value does not fit:
  uint64_t as_uint(std::string_view what) const;  // integer ≥ 0 (or BOOL)
  int64_t as_int(std::string_view what) const;    // integer within int64
  double as_float(std::string_view what) const;   // float or integer
  bool as_bool(std::string_view what) const;      // BOOL
  std::string_view as_string(std::string_view what) const;  // STRING
  // ARRAY whose elements have type `elem` (throws naming `what` otherwise).
  const std::vector<Value>& as_array(std::string_view what, ValueType elem) const;
};

struct KeyValue {
  std::string_view key;
  Value value;
};

}  // namespace ork::gguf
