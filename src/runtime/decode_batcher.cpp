#include "runtime/decode_batcher.h"

#include <algorithm>

#include "core/error.h"

namespace ork::runtime {

DecodeBatcher::DecodeBatcher(Engine& engine, std::chrono::microseconds gather)
    : engine_(engine), gather_(gather), step_(engine) {}

DecodeBatcher::Member DecodeBatcher::join() {
  std::lock_guard lock(mu_);
  ++members_;
  return Member(*this);
}

DecodeBatcher::Member::~Member() {
  if (b_ == nullptr) return;
  {
    std::lock_guard lock(b_->mu_);
    --b_->members_;
  }
  b_->cv_.notify_all();  // a step waiting for this member's token may run now
}

void DecodeBatcher::decode(Context& ctx, int32_t token, float* out) {
  ORK_CHECK(out != nullptr, "decode: null logits buffer");
  Pending p{&ctx, token, out, false, nullptr};
  std::unique_lock lock(mu_);
  if (pending_.empty()) first_arrival_ = std::chrono::steady_clock::now();
  pending_.push_back(&p);
  cv_.notify_all();  // the last token a waiting thread needed may be this one
  while (!p.done) {
    if (running_) {  // p waits for this step to end (it may be in it)
      cv_.wait(lock);
      continue;
    }
    const auto deadline = first_arrival_ + gather_;
    if (int(pending_.size()) < members_ && std::chrono::steady_clock::now() < deadline) {
      cv_.wait_until(lock, deadline);
      continue;
    }
    // This thread runs the step for every pending token (its own among them unless an earlier step
    // took it).
    std::vector<Pending*> batch;
    batch.swap(pending_);
    running_ = true;
    ++stats_.steps;
    stats_.rows += batch.size();
    stats_.max_rows = std::max(stats_.max_rows, int(batch.size()));
    lock.unlock();
    try {
      run(batch);
    } catch (...) {  // e.g. bad_alloc building the step: every token of it gets the error
      for (Pending* q : batch) q->error = std::current_exception();
    }
    lock.lock();
    for (Pending* q : batch) q->done = true;
    running_ = false;
    // Tokens that came during the step wait from its end: the members it served need that long to
    // sample theirs.
    if (!pending_.empty()) first_arrival_ = std::max(first_arrival_, std::chrono::steady_clock::now());
    cv_.notify_all();
  }
  if (p.error) std::rethrow_exception(p.error);
}

DecodeBatcher::Stats DecodeBatcher::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void DecodeBatcher::run(const std::vector<Pending*>& batch) {
  const int64_t V = engine_.model().config().n_vocab;
  std::vector<Context*> ctxs;
  std::vector<int32_t> tokens;
  for (const Pending* p : batch) {
    ctxs.push_back(p->ctx);
    tokens.push_back(p->token);
  }
  try {
    const float* logits = step_.step(ctxs, tokens);
    for (size_t i = 0; i < batch.size(); ++i) std::copy(logits + int64_t(i) * V, logits + int64_t(i + 1) * V, batch[i]->out);
    return;
  } catch (...) {
    if (batch.size() == 1) {
      batch[0]->error = std::current_exception();
      return;
    }
  }
  // A step that failed advanced no context: each alone, so only the one at fault gets the error.
  for (Pending* p : batch) {
    try {
      const float* l = step_.step({&p->ctx, 1}, {&p->token, 1});
      std::copy(l, l + V, p->out);
    } catch (...) {
      p->error = std::current_exception();
    }
  }
}

}  // namespace ork::runtime
