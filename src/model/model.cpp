#include "model/model.h"

#include "core/error.h"

namespace ork::model {

namespace {

std::unique_ptr<Tokenizer> tokenizer_of(const gguf::File& f, const std::string& path, const LoadOptions& options) {
  Vocab vocab = read_vocab(f);
  if (!options.tokenizer_pre.empty()) vocab.pre = options.tokenizer_pre;
  try {
    return std::make_unique<Tokenizer>(std::move(vocab));
  } catch (const Error& e) {
    fail(path, ": ", e.what());
  }
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path, const LoadOptions& options) {
  const gguf::File f = gguf::File::open(path);
  return tokenizer_of(f, path, options);
}

std::unique_ptr<Model> Model::load(const std::string& path, const LoadOptions& options) {
  std::unique_ptr<Model> m(new Model(gguf::File::open(path)));
  m->config_ = Config::from_gguf(m->file_);
  m->weights_ = Weights::bind(m->file_, m->config_);
  m->tokenizer_ = tokenizer_of(m->file_, path, options);
  ORK_CHECK(m->tokenizer_->n_vocab() == m->config_.n_vocab, path, ": tokenizer has ",
            m->tokenizer_->n_vocab(), " tokens but token_embd.weight has ", m->config_.n_vocab,
            " rows");
  return m;
}

uint64_t Model::tensor_bytes() const {
  uint64_t total = 0;
  for (const auto& t : file_.tensors()) total += t.n_bytes;
  return total;
}

}  // namespace ork::model
