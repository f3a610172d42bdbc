#include "serve/slot_pool.h"

#include <algorithm>

#include "core/error.h"

namespace ork::serve {

SlotPool::SlotPool(runtime::Engine& engine, int n_slots, int64_t n_ctx) {
  ORK_CHECK(n_slots >= 1, "--parallel ", n_slots, " must be at least 1");
  slots_.resize(size_t(n_slots));
  slots_[0].ctx = std::make_unique<runtime::Context>(engine, n_ctx);
  for (size_t i = 1; i < slots_.size(); ++i) slots_[i].ctx = slots_[0].ctx->dup(false);
  busy_.assign(slots_.size(), false);
}

SlotPool::Lease::~Lease() {
  if (pool_ != nullptr) pool_->release(index_);
}

SlotPool::Lease SlotPool::acquire(const std::vector<int32_t>& prompt) {
  std::unique_lock lock(mu_);
  const uint64_t ticket = next_ticket_++;
  queue_.push_back(ticket);
  cv_.wait(lock, [&] {
    return queue_.front() == ticket && std::find(busy_.begin(), busy_.end(), false) != busy_.end();
  });
  queue_.pop_front();
  size_t best = slots_.size();
  size_t best_len = 0;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (busy_[i]) continue;
    const std::vector<int32_t>& c = slots_[i].cached;
    size_t n = 0;
    while (n < c.size() && n < prompt.size() && c[n] == prompt[n]) ++n;
    if (best == slots_.size() || n > best_len) {
      best = i;
      best_len = n;
    }
  }
  busy_[best] = true;
  lock.unlock();
  cv_.notify_all();  // the next ticket may take another free slot
  return Lease(*this, best);
}

void SlotPool::release(size_t index) {
  {
    std::lock_guard lock(mu_);
    busy_[index] = false;
  }
  cv_.notify_all();
}

int SlotPool::busy() const {
  std::lock_guard lock(mu_);
  return int(std::count(busy_.begin(), busy_.end(), true));
}

int SlotPool::waiting() const {
  std::lock_guard lock(mu_);
  return int(queue_.size());
}

}  // namespace ork::serve
