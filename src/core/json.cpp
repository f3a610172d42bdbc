#include "core/json.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/quote.h"

namespace ork {

using Json = nlohmann::ordered_json;

struct JsonWriter::Impl {
  struct Open {
    Json value;       // the container being filled
    std::string key;  // its key in the enclosing object (unused in an array or at the top)
  };
  std::vector<Open> open;          // containers not closed yet, outermost first
  std::optional<std::string> key;  // a key written whose value is not yet
  std::optional<Json> root;        // the finished top-level value

  // Checks that a value may go where the writer stands now.
  void check_place() const {
    if (open.empty()) {
      if (root) throw Error("JsonWriter: a second top-level value");
      return;
    }
    if (open.back().value.is_object()) {
      if (!key) throw Error("JsonWriter: a value in an object without a key");
      if (open.back().value.contains(*key)) throw Error("JsonWriter: key " + quote(*key) + " written twice");
    }
  }

  void add(Json v) {
    check_place();
    if (open.empty()) {
      root = std::move(v);
      return;
    }
    Json& top = open.back().value;
    if (top.is_object()) {
      top.emplace(std::move(*key), std::move(v));
      key.reset();
    } else {
      top.push_back(std::move(v));
    }
  }

  void begin(Json container) {
    check_place();
    std::string k = key ? std::move(*key) : std::string();
    key.reset();
    open.push_back({std::move(container), std::move(k)});
  }

  void end(bool object) {
    if (open.empty() || open.back().value.is_object() != object || key) {
      throw Error(std::string("JsonWriter: end_") + (object ? "object" : "array") +
                  (key ? " after a key without a value" : " without a matching begin"));
    }
    Open done = std::move(open.back());
    open.pop_back();
    if (!open.empty() && open.back().value.is_object()) key = std::move(done.key);
    add(std::move(done.value));
  }
};

JsonWriter::JsonWriter() : impl_(std::make_unique<Impl>()) {}
JsonWriter::~JsonWriter() = default;
JsonWriter::JsonWriter(JsonWriter&&) noexcept = default;
JsonWriter& JsonWriter::operator=(JsonWriter&&) noexcept = default;

JsonWriter& JsonWriter::begin_object() {
  impl_->begin(Json::object());
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  impl_->end(true);
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  impl_->begin(Json::array());
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  impl_->end(false);
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
  if (impl_->open.empty() || !impl_->open.back().value.is_object() || impl_->key) {
    throw Error("JsonWriter: key " + quote(k) + " outside an object or after a key");
  }
  impl_->key = std::string(k);
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  impl_->add(Json(std::string(s)));
  return *this;
}

JsonWriter& JsonWriter::value(double d) {
  // nlohmann would dump a non-finite number as null too; writing null here states the rule.
  impl_->add(std::isfinite(d) ? Json(d) : Json(nullptr));
  return *this;
}

JsonWriter& JsonWriter::value(float f) {
  if (!std::isfinite(f)) return null();
  // The float's shortest round-trip digits, read back as the double nearest to them, so the text is
  // those digits rather than the float's exact binary value.
  char buf[32];
  const auto w = std::to_chars(buf, buf + sizeof buf, f);
  double d = 0;
  std::from_chars(buf, w.ptr, d);
  impl_->add(Json(d));
  return *this;
}

JsonWriter& JsonWriter::value(int64_t i) {
  impl_->add(Json(i));
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t u) {
  impl_->add(Json(u));
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  impl_->add(Json(b));
  return *this;
}

JsonWriter& JsonWriter::null() {
  impl_->add(Json(nullptr));
  return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json) {
  Json v = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (v.is_discarded()) {
    throw Error("JsonWriter::raw: not JSON: " + quote(json, 80));
  }
  impl_->add(std::move(v));
  return *this;
}

std::string JsonWriter::str() const {
  if (!impl_->open.empty()) {
    throw Error("JsonWriter::str: " + std::to_string(impl_->open.size()) + " container(s) still open");
  }
  if (!impl_->root) throw Error("JsonWriter::str: nothing written");
  return impl_->root->dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace ork
