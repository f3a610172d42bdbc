#include "runtime/context.h"

#include <algorithm>

#include "core/error.h"
#include "runtime/context_size.h"
#include "runtime/swa_ring.h"

namespace ork::runtime {
namespace {

int64_t resolve_ctx(const model::Config& c, int64_t n_ctx, model::KvType type) {
  return resolve_context(c, n_ctx, available_memory_bytes(), type);
}

// Its KV cache: sliding-window layers as rings when the engine asks for them (runtime/swa_ring.h).
model::KvCache make_cache(const Engine& e, int64_t n_ctx) {
  const model::Config& c = e.model().config();
  const model::KvType type = kv_type_of(e.options());
  const int64_t n = resolve_ctx(c, n_ctx, type);
  return model::KvCache(c.n_layer, n, c.kv_dim(), type,
                        e.options().swa_ring ? swa_ring_rows(c, n, e.options().m_max) : std::vector<int64_t>{});
}

}  // namespace

Context::Context(Engine& engine, int64_t n_ctx)
    : engine_(engine),
      cache_(make_cache(engine, n_ctx)),
      forward_(engine.model().config(), engine.model().weights(), engine.backend(), engine.pool()) {}

void Context::run(const int32_t* tokens, const float* embd, int64_t n, bool all, float* out) {
  ORK_CHECK((tokens != nullptr || embd != nullptr) && n > 0, "eval: no tokens");
  ORK_CHECK(n <= n_ctx() - n_past_, "context full: ", n_past_, " + ", n, " tokens exceed the context of ",
            n_ctx(), " tokens");
  // In chunks of at most m_max tokens (llama.cpp's ubatch), so the activations are those of m_max
  // rows whatever the prompt's length (the memory plan's host scratch). Without `all`, each chunk's
  // last logits land in out and the final chunk's stay.
  const int64_t chunk = std::max<int64_t>(1, engine_.options().m_max);
  const int64_t n_embd = engine_.model().config().n_embd;
  const int64_t n0 = n_past_;
  try {
    for (int64_t i = 0; i < n; i += chunk) {
      const int64_t m = std::min(chunk, n - i);
      float* o = all ? out + i * n_vocab() : out;
      std::lock_guard lock(engine_.forward_mutex());
      if (tokens != nullptr) {
        forward_.eval(cache_, tokens + i, m, n_past_, all, o);
      } else {
        forward_.eval_embd(cache_, embd + i * n_embd, m, n_past_, all, o);
      }
      if (HostWorkMeter* h = engine_.host_meter()) h->add_sequence_pass(n_past_, m, all ? m : 1);
      max_batch_ = std::max(max_batch_, m);
      n_past_ += m;
    }
  } catch (...) {
    n_past_ = n0;  // a failed eval leaves the sequence as it was
    throw;
  }
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

int64_t Context::keepable(int64_t n) const {
  ORK_CHECK(n >= 0 && n <= n_past_, "keepable: ", n, " is outside [0, ", n_past_, "]");
  const model::Config& c = engine_.model().config();
  for (int64_t l = 0; l < cache_.n_layer() && n > 0; ++l) {
    if (cache_.ring(l) && std::max<int64_t>(0, n - c.window(l) + 1) < cache_.valid_from(l)) return 0;
  }
  return n;
}

void Context::truncate(int64_t n) {
  ORK_CHECK(n >= 0 && n <= n_past_, "truncate: ", n, " is outside [0, ", n_past_, "]");
  // A ring layer must still hold the keys the next position reads.
  const model::Config& c = engine_.model().config();
  for (int64_t l = 0; l < cache_.n_layer() && n > 0; ++l) {
    if (!cache_.ring(l)) continue;
    const int64_t first = std::max<int64_t>(0, n - c.window(l) + 1);
    ORK_CHECK(first >= cache_.valid_from(l), "truncate: cannot roll back to ", n, " tokens: layer ", l,
              "'s sliding-window ring holds positions from ", cache_.valid_from(l), " (", first, " needed)");
  }
  cache_.forget_from(n);
  n_past_ = n;
}

std::vector<int64_t> Context::state_from() const {
  std::vector<int64_t> from(size_t(cache_.n_layer()));
  for (int64_t l = 0; l < cache_.n_layer(); ++l) from[size_t(l)] = std::min(cache_.valid_from(l), n_past_);
  return from;
}

std::vector<uint8_t> Context::state() const {
  const int64_t n_layer = cache_.n_layer();
  const std::vector<int64_t> from = state_from();
  const size_t row = cache_.row_bytes();
  std::vector<uint8_t> s;
  s.reserve(size_t(state_bytes(n_past_, from)));
  // Position by position: a ring layer's positions wrap around its rows.
  for (int64_t l = 0; l < n_layer; ++l) {
    for (int64_t p = from[size_t(l)]; p < n_past_; ++p) s.insert(s.end(), cache_.k_bytes(l, p), cache_.k_bytes(l, p) + row);
  }
  for (int64_t l = 0; l < n_layer; ++l) {
    for (int64_t p = from[size_t(l)]; p < n_past_; ++p) s.insert(s.end(), cache_.v_bytes(l, p), cache_.v_bytes(l, p) + row);
  }
  return s;
}

uint64_t Context::state_bytes(int64_t n, const std::vector<int64_t>& from) const {
  uint64_t rows = 0;
  for (int64_t l = 0; l < cache_.n_layer(); ++l) {
    const int64_t f = size_t(l) < from.size() ? std::clamp<int64_t>(from[size_t(l)], 0, std::max<int64_t>(n, 0)) : 0;
    rows += uint64_t(std::max<int64_t>(n - f, 0));
  }
  return 2 * rows * cache_.row_bytes();
}

void Context::set_state(const std::vector<uint8_t>& s, int64_t n, const std::vector<int64_t>& from_in) {
  const int64_t n_layer = cache_.n_layer();
  ORK_CHECK(n >= 0 && n <= n_ctx(), "KV state of ", n, " positions does not fit the context of ",
            n_ctx(), " tokens");
  ORK_CHECK(from_in.empty() || from_in.size() == size_t(n_layer), "KV state: first positions of ", from_in.size(),
            " layers for a cache of ", n_layer);
  std::vector<int64_t> from = from_in.empty() ? std::vector<int64_t>(size_t(n_layer), 0) : from_in;
  for (int64_t l = 0; l < n_layer; ++l) {
    const int64_t f = from[size_t(l)];
    if (!cache_.ring(l)) {
      ORK_CHECK(f == 0, "KV state: layer ", l, " holds positions from ", f, ", this context's layer ", l,
                " is a full cache (from 0)");
    } else {
      ORK_CHECK(f >= 0 && f <= n && n - f <= cache_.rows(l), "KV state: layer ", l, " holds positions ", f, "..",
                n - 1, ", more than this context's ring of ", cache_.rows(l), " rows");
    }
  }
  ORK_CHECK(s.size() == state_bytes(n, from), "KV state holds ", s.size(), " bytes, ", state_bytes(n, from),
            " expected for ", n, " positions of a ", model::kv_type_name(cache_.type()), " cache");
  const size_t row = cache_.row_bytes();
  const uint8_t* p = s.data();
  for (int64_t l = 0; l < n_layer; ++l) {
    for (int64_t q = from[size_t(l)]; q < n; ++q, p += row) std::copy(p, p + row, cache_.k_bytes(l, q));
  }
  for (int64_t l = 0; l < n_layer; ++l) {
    for (int64_t q = from[size_t(l)]; q < n; ++q, p += row) std::copy(p, p + row, cache_.v_bytes(l, q));
  }
  for (int64_t l = 0; l < n_layer; ++l) cache_.set_valid_from(l, from[size_t(l)]);
  n_past_ = n;
}

Context::Memory Context::memory() const {
  Memory m;
  m.kv_bytes = cache_.bytes();
  m.scratch_bytes = forward_.scratch_bytes(max_batch_) + forward_.kv_staging_bytes();
  m.logits_bytes = uint64_t(logits_.capacity()) * sizeof(float);
  return m;
}

}  // namespace ork::runtime
