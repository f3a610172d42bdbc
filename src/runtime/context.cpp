#include "runtime/context.h"

#include <algorithm>

#include "core/error.h"
#include "runtime/context_size.h"

namespace ork::runtime {
namespace {

int64_t resolve_ctx(const model::Config& c, int64_t n_ctx) {
  return resolve_context(c, n_ctx, available_memory_bytes());
}

}  // namespace

Context::Context(Engine& engine, int64_t n_ctx)
    : engine_(engine),
      cache_(engine.model().config().n_layer, resolve_ctx(engine.model().config(), n_ctx),
             engine.model().config().kv_dim()),
      forward_(engine.model().config(), engine.model().weights(), engine.backend(), engine.pool()) {}

void Context::run(const int32_t* tokens, const float* embd, int64_t n, bool all, float* out) {
  ORK_CHECK((tokens != nullptr || embd != nullptr) && n > 0, "eval: no tokens");
  ORK_CHECK(n <= n_ctx() - n_past_, "context full: ", n_past_, " + ", n, " tokens exceed the context of ",
            n_ctx(), " tokens");
  {
    std::lock_guard lock(engine_.forward_mutex());
    if (tokens != nullptr) {
      forward_.eval(cache_, tokens, n, n_past_, all, out);
    } else {
      forward_.eval_embd(cache_, embd, n, n_past_, all, out);
    }
  }
  max_batch_ = std::max(max_batch_, n);
  n_past_ += n;
}

const float* Context::eval(const std::vector<int32_t>& tokens) {
  ORK_CHECK(!tokens.empty(), "eval: no tokens");
  logits_.resize(size_t(n_vocab()));
  run(tokens.data(), nullptr, int64_t(tokens.size()), false, logits_.data());
  return logits_.data();
}

const std::vector<float>& Context::eval_all(const std::vector<int32_t>& tokens) {
  ORK_CHECK(!tokens.empty(), "eval: no tokens");
  ORK_CHECK(tokens.size() <= size_t(n_ctx()), "eval: ", tokens.size(), " tokens exceed the context of ",
            n_ctx(), " tokens");
  logits_.resize(tokens.size() * size_t(n_vocab()));
  run(tokens.data(), nullptr, int64_t(tokens.size()), true, logits_.data());
  return logits_;
}

void Context::check_out(int64_t n, bool all, const float* out, uint64_t capacity) const {
  ORK_CHECK(out != nullptr, "eval: null logits buffer");
  ORK_CHECK(n > 0, "eval: no tokens");
  ORK_CHECK(n <= n_ctx(), "eval: ", n, " tokens exceed the context of ", n_ctx(), " tokens");
  const uint64_t need = uint64_t(all ? n : 1) * uint64_t(n_vocab());
  ORK_CHECK(capacity >= need, "eval: the logits buffer holds ", capacity, " floats, ", need, " are needed");
}

void Context::eval_into(const int32_t* tokens, int64_t n, bool all, float* out, uint64_t capacity) {
  ORK_CHECK(tokens != nullptr, "eval: no tokens");
  check_out(n, all, out, capacity);
  run(tokens, nullptr, n, all, out);
}

const float* Context::eval_embd(const float* embd, int64_t n, bool all, float* out, uint64_t capacity) {
  ORK_CHECK(embd != nullptr, "eval: null input embeddings");
  if (out == nullptr) {
    ORK_CHECK(!all, "eval_embd: all logits need a caller buffer");
    ORK_CHECK(n > 0, "eval: no tokens");
    logits_.resize(size_t(n_vocab()));
    out = logits_.data();
  } else {
    check_out(n, all, out, capacity);
  }
  run(nullptr, embd, n, all, out);
  return out;
}

std::unique_ptr<Context> Context::dup(bool copy_state) const {
  auto c = std::make_unique<Context>(engine_, n_ctx());
  if (copy_state) {
    c->cache_ = cache_;
    c->n_past_ = n_past_;
  }
  return c;
}

void Context::truncate(int64_t n) {
  ORK_CHECK(n >= 0 && n <= n_past_, "truncate: ", n, " is outside [0, ", n_past_, "]");
  n_past_ = n;
}

std::vector<float> Context::state() const {
  const int64_t n_layer = engine_.model().config().n_layer, dim = cache_.kv_dim();
  std::vector<float> s;
  s.reserve(size_t(2 * n_layer * n_past_ * dim));
  for (int64_t l = 0; l < n_layer; ++l) s.insert(s.end(), cache_.k(l), cache_.k(l) + n_past_ * dim);
  for (int64_t l = 0; l < n_layer; ++l) s.insert(s.end(), cache_.v(l), cache_.v(l) + n_past_ * dim);
  return s;
}

void Context::set_state(const std::vector<float>& s, int64_t n) {
  const int64_t n_layer = engine_.model().config().n_layer, dim = cache_.kv_dim();
  ORK_CHECK(n >= 0 && n <= n_ctx(), "KV state of ", n, " positions does not fit the context of ",
            n_ctx(), " tokens");
  ORK_CHECK(s.size() == size_t(2 * n_layer * n * dim), "KV state holds ", s.size(), " floats, ",
            2 * n_layer * n * dim, " expected for ", n, " positions");
  const float* p = s.data();
  for (int64_t l = 0; l < n_layer; ++l, p += n * dim) std::copy(p, p + n * dim, cache_.k(l));
  for (int64_t l = 0; l < n_layer; ++l, p += n * dim) std::copy(p, p + n * dim, cache_.v(l));
  n_past_ = n;
}

Context::Memory Context::memory() const {
  Memory m;
  m.kv_bytes = cache_.bytes();
  m.scratch_bytes = forward_.scratch_bytes(max_batch_);
  m.logits_bytes = uint64_t(logits_.capacity()) * sizeof(float);
  return m;
}

}  // namespace ork::runtime
