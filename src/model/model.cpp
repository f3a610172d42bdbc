#include "model/model.h"

#include "core/error.h"

namespace ork::model {

std::unique_ptr<Model> Model::load(const std::string& path, const LoadOptions& options) {
  std::unique_ptr<Model> m(new Model(gguf::File::open(path)));
  m->config_ = Config::from_gguf(m->file_);
  m->weights_ = Weights::bind(m->file_, m->config_);
  Vocab vocab = read_vocab(m->file_);
  if (!options.tokenizer_pre.empty()) vocab.pre = options.tokenizer_pre;
  try {
    m->tokenizer_ = std::make_unique<Tokenizer>(std::move(vocab));
  } catch (const Error& e) {
    fail(path, ": ", e.what());
  }
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
