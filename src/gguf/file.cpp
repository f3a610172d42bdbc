#include "gguf/file.h"

#include "core/error.h"
#include "core/quote.h"
#include "gguf/parser.h"

namespace ork::gguf {

uint64_t TensorInfo::rows() const {
  uint64_t r = 1;
  for (size_t d = 1; d < dims.size(); ++d) r *= dims[d];  // the parser checked the product fits
  return r;
}

File File::open(const std::string& path) { return Parser::open(path); }

File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;

const std::string& File::path() const { return map_->path(); }

const Value* File::find(std::string_view key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].value;
}

namespace {

// The Value for `key`, or an error naming the path and key when absent.
const Value& require(const File& f, std::string_view key) {
  const Value* v = f.find(key);
  if (v == nullptr) fail(f.path(), ": missing metadata key ", quote(key));
  return *v;
}

std::string what(const File& f, std::string_view key) {
  return str_cat(f.path(), ": metadata key ", quote(key));
}

}  // namespace

std::string_view File::get_string(std::string_view key) const {
  return require(*this, key).as_string(what(*this, key));
}
uint64_t File::get_uint(std::string_view key) const {
  return require(*this, key).as_uint(what(*this, key));
}
int64_t File::get_int(std::string_view key) const {
  return require(*this, key).as_int(what(*this, key));
}
double File::get_float(std::string_view key) const {
  return require(*this, key).as_float(what(*this, key));
}
bool File::get_bool(std::string_view key) const {
  return require(*this, key).as_bool(what(*this, key));
}

std::string_view File::get_string_or(std::string_view key, std::string_view def) const {
  const Value* v = find(key);
  return v == nullptr ? def : v->as_string(what(*this, key));
}
uint64_t File::get_uint_or(std::string_view key, uint64_t def) const {
  const Value* v = find(key);
  return v == nullptr ? def : v->as_uint(what(*this, key));
}
double File::get_float_or(std::string_view key, double def) const {
  const Value* v = find(key);
  return v == nullptr ? def : v->as_float(what(*this, key));
}
bool File::get_bool_or(std::string_view key, bool def) const {
  const Value* v = find(key);
  return v == nullptr ? def : v->as_bool(what(*this, key));
}

const TensorInfo* File::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const TensorInfo& File::tensor(std::string_view name) const {
  const TensorInfo* t = find_tensor(name);
  if (t == nullptr) fail(path(), ": no tensor named ", quote(name));
  return *t;
}

}  // namespace ork::gguf
