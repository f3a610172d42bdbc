// model::Model — a loaded GGUF model: the mapped file, its Config, its bound Weights and its
// Tokenizer. Immutable after load; thread-safe to share between contexts.
#pragma once

#include <memory>
#include <string>

#include "gguf/file.h"
#include "model/config.h"
#include "model/tokenizer.h"
#include "model/weights.h"

namespace ork::model {

// What Model::load may override in the file.
struct LoadOptions {
  std::string tokenizer_pre;  // non-empty: the pre-tokenizer to use instead of tokenizer.ggml.pre
};

// The tokenizer of `path` alone: its tokenizer.* metadata, no tensors needed (a vocabulary-only file
// such as llama.cpp's models/ggml-vocab-*.gguf, which llama.cpp loads with vocab_only). Throws
// ork::Error naming the path.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path, const LoadOptions& options = {});

class Model {
 public:
  // Maps and validates `path` (metadata, tensor shapes and types, tokenizer). Throws ork::Error
  // naming the path and what is wrong.
  static std::unique_ptr<Model> load(const std::string& path, const LoadOptions& options = {});

  const gguf::File& file() const { return file_; }
  const Config& config() const { return config_; }
  const Weights& weights() const { return *weights_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }

  // Bytes of all tensor data in the file.
  uint64_t tensor_bytes() const;

 private:
  explicit Model(gguf::File file) : file_(std::move(file)) {}
  gguf::File file_;
  Config config_;
  std::unique_ptr<Weights> weights_;
  std::unique_ptr<Tokenizer> tokenizer_;
};

}  // namespace ork::model
