// GGUF metadata values: the value type ids of the format and a parsed value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
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

struct Value;

// The elements of an ARRAY value, held as the bytes of their GGUF encoding: a span into the mapped
// file (parsed values, validated by the parser) or into bytes a Value built by Value::array_of owns.
// Nothing is decoded ahead: an element becomes a Value when it is read, so a parsed array of any
// length costs no memory. Fixed-size elements: operator[] is O(1). Strings and arrays: iterate (begin
// .. end decode in order, O(1) per step); operator[] walks from the start, O(i).
class ArrayView {
 public:
  ArrayView() = default;
  ArrayView(ValueType elem, uint64_t count, std::span<const uint8_t> bytes,
            std::shared_ptr<const std::vector<uint8_t>> owner)
      : elem_(elem), count_(count), bytes_(bytes), owner_(std::move(owner)) {}

  ValueType elem_type() const { return elem_; }
  uint64_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  Value operator[](uint64_t i) const;

  class iterator {
   public:
    using value_type = Value;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    Value operator*() const;
    iterator& operator++();
    iterator operator++(int) {
      iterator t = *this;
      ++*this;
      return t;
    }
    bool operator==(const iterator& o) const { return i_ == o.i_; }

   private:
    friend class ArrayView;
    iterator(const ArrayView* a, const uint8_t* p, uint64_t i) : a_(a), p_(p), i_(i) {}
    const ArrayView* a_ = nullptr;
    const uint8_t* p_ = nullptr;
    uint64_t i_ = 0;
  };
  iterator begin() const { return {this, bytes_.data(), 0}; }
  iterator end() const { return {this, nullptr, count_}; }

 private:
  ValueType elem_ = ValueType::UINT8;
  uint64_t count_ = 0;
  std::span<const uint8_t> bytes_;
  std::shared_ptr<const std::vector<uint8_t>> owner_;
};

// One metadata value. Strings and arrays are views into the mapped file (or into the Writer's
// storage, or into bytes `owner` keeps): valid while the File that produced them is alive.
struct Value {
  ValueType type = ValueType::UINT8;
  uint64_t u = 0;          // UINT8/16/32/64 and BOOL (0/1)
  int64_t i = 0;           // INT8/16/32/64
  double f = 0.0;          // FLOAT32/64
  std::string_view str;    // STRING
  ValueType elem_type = ValueType::UINT8;  // ARRAY: the type of the elements
  uint64_t count = 0;                      // ARRAY: the number of elements
  std::span<const uint8_t> bytes;          // ARRAY: the elements' GGUF encoding (see ArrayView)
  std::shared_ptr<const std::vector<uint8_t>> owner;  // holds `bytes` (and `str`) of built values

  // An ARRAY of `elems` (each of type `elem`, else ork::Error), encoded into bytes the value owns
  // (strings are copied). For writers and tests; parsed arrays never take this path.
  static Value array_of(ValueType elem, const std::vector<Value>& elems);

  bool is_integer() const;  // any of the 8 integer types
  bool is_float() const { return type == ValueType::FLOAT32 || type == ValueType::FLOAT64; }

  // Conversions that throw ork::Error (naming `what`, e.g. the key) when the value does not fit:
  uint64_t as_uint(std::string_view what) const;  // integer ≥ 0 (or BOOL)
  int64_t as_int(std::string_view what) const;    // integer within int64
  double as_float(std::string_view what) const;   // float or integer
  bool as_bool(std::string_view what) const;      // BOOL
  std::string_view as_string(std::string_view what) const;  // STRING
  // ARRAY whose elements have type `elem` (throws naming `what` otherwise).
  ArrayView as_array(std::string_view what, ValueType elem) const;
  // The elements of an ARRAY (empty for any other type).
  ArrayView elements() const {
    return type == ValueType::ARRAY ? ArrayView(elem_type, count, bytes, owner) : ArrayView();
  }
};

// Appends the GGUF encoding of v's payload (without its type id) to out. Throws ork::Error naming
// `key` for an unknown value type.
void encode_payload(std::vector<uint8_t>& out, const Value& v, std::string_view key);

// Size in bytes of the fixed-size encoding of type t; 0 for STRING and ARRAY.
uint64_t fixed_value_bytes(ValueType t);

struct KeyValue {
  std::string_view key;
  Value value;
};

}  // namespace ork::gguf
