#include "runtime/context.h"

#include <algorithm>

#include "core/error.h"

namespace ork::runtime {
namespace {

int64_t resolve_ctx(const model::Config& c, int64_t n_ctx) {
  ORK_CHECK(n_ctx >= 0 && n_ctx <= (int64_t(1) << 24), "context size ", n_ctx, " is out of range");
  return n_ctx > 0 ? n_ctx : std::min<int64_t>(c.n_ctx_train, 4096);
}

}  // namespace

Context::Context(Engine& engine, int64_t n_ctx)
    : engine_(engine),
      cache_(engine.model().config().n_layer, resolve_ctx(engine.model().config(), n_ctx),
             engine.model().config().kv_dim()),
      forward_(engine.model().config(), engine.model().weights(), engine.backend(), engine.pool()) {}

const float* Context::eval(const std::vector<int32_t>& tokens) {
  ORK_CHECK(!tokens.empty(), "eval: no tokens");
  ORK_CHECK(n_past_ + int64_t(tokens.size()) <= n_ctx(), "context full: ", n_past_, " + ",
            tokens.size(), " tokens exceed the context of ", n_ctx(), " tokens");
  logits_.resize(size_t(n_vocab()));
  forward_.eval(cache_, tokens.data(), int64_t(tokens.size()), n_past_, false, logits_.data());
  n_past_ += int64_t(tokens.size());
  return logits_.data();
}

const std::vector<float>& Context::eval_all(const std::vector<int32_t>& tokens) {
  ORK_CHECK(!tokens.empty(), "eval: no tokens");
  ORK_CHECK(n_past_ + int64_t(tokens.size()) <= n_ctx(), "context full: ", n_past_, " + ",
            tokens.size(), " tokens exceed the context of ", n_ctx(), " tokens");
  logits_.resize(tokens.size() * size_t(n_vocab()));
  forward_.eval(cache_, tokens.data(), int64_t(tokens.size()), n_past_, true, logits_.data());
  n_past_ += int64_t(tokens.size());
  return logits_;
}

}  // namespace ork::runtime
