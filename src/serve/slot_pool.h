// serve::SlotPool — N sequences of one Engine for concurrent requests: each slot is a Context
// (duplicated from the first: shared weights and device tasks, its own KV cache) and the token ids
// its cache holds, which a later request that starts with them reuses (the prompt cache).
//
// acquire() blocks while every slot is busy (requests beyond N queue, first come first served) and
// picks the free slot whose cached tokens share the longest prefix with the prompt. A Lease releases
// its slot when destroyed. Thread-safety: acquire() and Lease destruction may run on any threads.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/context.h"
#include "runtime/engine.h"

namespace ork::serve {

struct Slot {
  std::unique_ptr<runtime::Context> ctx;
  std::vector<int32_t> cached;  // the tokens in ctx's KV cache (ctx->n_past() of them)
};

class SlotPool {
 public:
  // n_slots >= 1 contexts of n_ctx tokens each (0: the model's, at most 4096).
  SlotPool(runtime::Engine& engine, int n_slots, int64_t n_ctx);

  class Lease {
   public:
    Lease(SlotPool& pool, size_t index) : pool_(&pool), index_(index) {}
    Lease(Lease&& o) noexcept : pool_(o.pool_), index_(o.index_) { o.pool_ = nullptr; }
    Lease(const Lease&) = delete;
    ~Lease();
    Slot& slot() const { return pool_->slots_[index_]; }
    size_t index() const { return index_; }

   private:
    SlotPool* pool_;
    size_t index_;
  };

  Lease acquire(const std::vector<int32_t>& prompt);

  int size() const { return int(slots_.size()); }
  int64_t n_ctx() const { return slots_[0].ctx->n_ctx(); }
  // Slots in use and requests waiting for one, at this moment.
  int busy() const;
  int waiting() const;

 private:
  void release(size_t index);

  std::vector<Slot> slots_;
  std::vector<bool> busy_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<uint64_t> queue_;  // tickets of waiting requests, in arrival order
  uint64_t next_ticket_ = 0;
};

}  // namespace ork::serve
