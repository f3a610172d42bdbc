// read_vocab: tokenizer.ggml.* metadata → Vocab (defaults as llama.cpp's llama_vocab::impl::load).
// Only this file of the tokenizer depends on the GGUF reader.
#include "model/tokenizer_vocab.h"

#include <limits>
#include <new>
#include <string>
#include <vector>

#include "core/checked.h"
#include "core/error.h"
#include "gguf/file.h"

namespace ork::model {
namespace {

const gguf::Value& require(const gguf::File& f, const char* key) {
  const gguf::Value* v = f.find(key);
  ORK_CHECK(v != nullptr, f.path(), ": missing ", key);
  return *v;
}

// An optional token id key: -1 when absent; must fit int32.
int32_t read_id(const gguf::File& f, const char* key, int32_t def) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr) return def;
  const uint64_t id = v->as_uint(key);
  ORK_CHECK(id <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max()), f.path(), ": ", key,
            " = ", id, " does not fit a token id");
  return static_cast<int32_t>(id);
}

// Appends the strings of `arr` to `out` (reserved), or ork::Error naming the key and the bytes when
// the machine cannot hold them.
void copy_strings(const gguf::File& f, const char* key, const gguf::ArrayView& arr, std::vector<std::string>& out) {
  uint64_t bytes = 0;
  try {
    for (const gguf::Value& e : arr) {
      bytes += e.str.size();
      out.emplace_back(e.str);
    }
  } catch (const std::bad_alloc&) {
    fail(f.path(), ": ", key, ": cannot allocate its ", arr.size(), " strings (", bytes,
         " bytes copied when memory ran out)");
  }
}

}  // namespace

Vocab read_vocab(const gguf::File& f) {
  Vocab v;
  v.model = std::string(f.get_string("tokenizer.ggml.model"));
  v.pre = std::string(f.get_string_or("tokenizer.ggml.pre", ""));

  {
    const char* key = "tokenizer.ggml.tokens";
    const auto& arr = require(f, key).as_array(key, gguf::ValueType::STRING);
    reserve_or_fail(v.tokens, arr.size(), str_cat(f.path(), ": ", key));
    copy_strings(f, key, arr, v.tokens);
  }
  const size_t n = v.tokens.size();

  if (const gguf::Value* s = f.find("tokenizer.ggml.scores")) {
    const char* key = "tokenizer.ggml.scores";
    const gguf::ValueType et = s->elem_type;
    ORK_CHECK(s->type == gguf::ValueType::ARRAY &&
                  (et == gguf::ValueType::FLOAT32 || et == gguf::ValueType::INT32),
              f.path(), ": ", key, " must be an array of float32 or int32");
    const auto& arr = s->as_array(key, et);
    reserve_or_fail(v.scores, arr.size(), str_cat(f.path(), ": ", key));
    for (const gguf::Value& e : arr) v.scores.push_back(static_cast<float>(e.as_float(key)));
  }
  if (const gguf::Value* t = f.find("tokenizer.ggml.token_type")) {
    const char* key = "tokenizer.ggml.token_type";
    ORK_CHECK(t->type == gguf::ValueType::ARRAY && t->elem_type == gguf::ValueType::INT32, f.path(),
              ": ", key, " must be an array of int32");
    const auto& arr = t->as_array(key, gguf::ValueType::INT32);
    reserve_or_fail(v.types, arr.size(), str_cat(f.path(), ": ", key));
    for (const gguf::Value& e : arr) v.types.push_back(static_cast<int32_t>(e.as_int(key)));
  }
  if (v.model == "gpt2") {
    const char* key = "tokenizer.ggml.merges";
    const auto& arr = require(f, key).as_array(key, gguf::ValueType::STRING);
    reserve_or_fail(v.merges, arr.size(), str_cat(f.path(), ": ", key));
    copy_strings(f, key, arr, v.merges);
  }

  // llama.cpp's default special ids for SPM, kept only when inside the vocabulary.
  const bool spm = v.model == "llama";
  const auto spm_default = [&](int32_t id) {
    return spm && static_cast<size_t>(id) < n ? id : -1;
  };
  v.bos = read_id(f, "tokenizer.ggml.bos_token_id", spm_default(1));
  v.eos = read_id(f, "tokenizer.ggml.eos_token_id", spm_default(2));
  v.unk = read_id(f, "tokenizer.ggml.unknown_token_id", spm_default(0));
  v.pad = read_id(f, "tokenizer.ggml.padding_token_id", -1);
  v.eot = read_id(f, "tokenizer.ggml.eot_token_id", -1);
  v.eom = read_id(f, "tokenizer.ggml.eom_token_id", -1);

  v.add_bos = f.get_bool_or("tokenizer.ggml.add_bos_token", default_add_bos(v.model, v.pre));
  v.add_eos = f.get_bool_or("tokenizer.ggml.add_eos_token", false);
  v.add_space_prefix = f.get_bool_or("tokenizer.ggml.add_space_prefix", spm);
  return v;
}

}  // namespace ork::model
