// JsonWriter — builds compact JSON text for the CLI's --json outputs and the benchmarks.
//
// Usage: JsonWriter j; j.begin_object(); j.key("n").value(3); j.key("xs").begin_array();
// j.value(1.5); j.end_array(); j.end_object(); j.str() == R"({"n":3,"xs":[1.5]})".
// Commas are inserted automatically. Non-finite doubles are written as null. Not thread-safe.
// The output is always valid UTF-8 JSON: strings keep valid UTF-8 as it is and write each byte that
// does not start a valid sequence (a stray continuation byte, a truncated or overlong sequence, a
// surrogate) as \ufffd, the replacement character; control characters are escaped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ork {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(double d);
  JsonWriter& value(float d) { return value(double(d)); }
  JsonWriter& value(int64_t i);
  JsonWriter& value(uint64_t u);
  JsonWriter& value(int i) { return value(int64_t(i)); }
  JsonWriter& value(unsigned u) { return value(uint64_t(u)); }
  JsonWriter& value(long long i) { return value(int64_t(i)); }
  JsonWriter& value(unsigned long long u) { return value(uint64_t(u)); }
  JsonWriter& value(bool b);
  JsonWriter& null();
  // Inserts already-formatted JSON (e.g. another writer's str()) as one value.
  JsonWriter& raw(std::string_view json);

  const std::string& str() const { return out_; }

  // s with JSON string escaping (without the quotes).
  static std::string escape(std::string_view s);

 private:
  void before_value();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace ork
