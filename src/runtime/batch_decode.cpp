#include "runtime/batch_decode.h"

#include <algorithm>
#include <mutex>

#include "core/error.h"

namespace ork::runtime {

BatchDecode::BatchDecode(Engine& engine)
    : engine_(engine),
      forward_(engine.model().config(), engine.model().weights(), engine.backend(), engine.pool()) {}

const float* BatchDecode::step(std::span<Context* const> ctxs, std::span<const int32_t> tokens) {
  ORK_CHECK(!ctxs.empty(), "batch decode: no contexts");
  ORK_CHECK(ctxs.size() == tokens.size(), "batch decode: ", ctxs.size(), " contexts, ", tokens.size(),
            " tokens");
  seqs_.clear();
  for (size_t i = 0; i < ctxs.size(); ++i) {
    Context* c = ctxs[i];
    ORK_CHECK(c != nullptr, "batch decode: context ", i, " is null");
    ORK_CHECK(&c->engine_ == &engine_, "batch decode: context ", i, " belongs to another engine");
    ORK_CHECK(c->n_past_ < c->n_ctx(), "batch decode: context ", i, " is full (", c->n_ctx(), " tokens)");
    for (size_t j = 0; j < i; ++j) ORK_CHECK(ctxs[j] != c, "batch decode: context ", i, " is also context ", j);
    seqs_.push_back({&c->cache_, c->n_past_, 1});
  }
  const int64_t n = int64_t(ctxs.size());
  logits_.resize(size_t(n * engine_.model().config().n_vocab));
  {
    std::lock_guard lock(engine_.forward_mutex());
    forward_.eval_batch(seqs_, tokens.data(), logits_.data());
  }
  if (HostWorkMeter* h = engine_.host_meter()) {
    npu::sim::HostPass pass;
    pass.rows = pass.out_rows = pass.sequences = n;
    for (Context* c : ctxs) pass.key_rows += double(c->n_past_ + 1), pass.loaded_rows += double(c->n_past_ + 1);
    h->add_pass(pass);
  }
  for (Context* c : ctxs) ++c->n_past_;
  max_batch_ = std::max(max_batch_, n);
  return logits_.data();
}

}  // namespace ork::runtime
