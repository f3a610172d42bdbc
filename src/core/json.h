// JsonWriter — builds a JSON document for the CLI's --json outputs and the benchmarks, as a thin
// builder over nlohmann::ordered_json (keys keep the order they were written in).
//
// Usage: JsonWriter j; j.begin_object(); j.key("n").value(3); j.key("xs").begin_array();
// j.value(1.5); j.end_array(); j.end_object(); j.str() == R"({"n":3,"xs":[1.5]})".
//
// Output rules (docs/design-notes.md, "JSON output"):
// - Compact strict JSON, valid UTF-8: string bytes that are not valid UTF-8 (a token's partial
//   character, a stray continuation byte, an overlong form, a surrogate) become U+FFFD (nlohmann's
//   error_handler_t::replace: one per maximal invalid subsequence); control characters are escaped.
// - Numbers: integers exactly; a double in its shortest round-trip form (nlohmann's dtoa: 0.1, 1e-07,
//   2.0); a float in the shortest form that round-trips the float (0.1f is 0.1, not
//   0.10000000149011612); NaN and ±Inf as null.
// Misuse (a value in an object without a key, a key twice in one object, end_* not matching,
// str() with a container still open, two top-level values, raw() text that is not JSON) throws
// ork::Error. Not thread-safe. Movable, not copyable.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace ork {

class JsonWriter {
 public:
  JsonWriter();
  ~JsonWriter();
  JsonWriter(JsonWriter&&) noexcept;
  JsonWriter& operator=(JsonWriter&&) noexcept;

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(double d);
  JsonWriter& value(float f);
  JsonWriter& value(int64_t i);
  JsonWriter& value(uint64_t u);
  JsonWriter& value(int i) { return value(int64_t(i)); }
  JsonWriter& value(unsigned u) { return value(uint64_t(u)); }
  JsonWriter& value(long long i) { return value(int64_t(i)); }
  JsonWriter& value(unsigned long long u) { return value(uint64_t(u)); }
  JsonWriter& value(bool b);
  JsonWriter& null();
  // Inserts a JSON text (e.g. another writer's str()) as one value: parsed, so it must be JSON.
  JsonWriter& raw(std::string_view json);

  // The document as compact JSON text (see the output rules above).
  std::string str() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ork
