// runtime::DecodeBatcher — continuous batching for threads that each generate on their own Context
// of one Engine (the server's slots): each thread's decode() of one token waits to be gathered with
// the other threads' into one BatchDecode step, which one of the waiting threads runs for all (no
// thread of its own: a lone stream pays no thread hand-over).
//
// A step runs as soon as every joined member has a token waiting, or `gather` after the first one
// arrived (a member busy elsewhere — writing to a slow client, say — delays the others by at most
// that); tokens that arrive while a step runs go into the next one. Members join() after their prefill (which runs as its own Context::eval, between steps:
// both hold the Engine's forward_mutex()) and leave when their generation ends, so the batch grows
// and shrinks between steps. Each context's logits are those it would get alone (batch_decode.h), so
// what a request generates does not depend on what else runs.
//
// Errors: when a batched step throws, its contexts are evaluated one by one, so the error reaches only
// the decode() whose context caused it.
// Ownership: borrows the Engine (must outlive it). Thread-safety: join(), decode() and Member
// destruction from any threads; a Context is in at most one decode() at a time. No decode() may be
// running when the batcher is destroyed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <vector>

#include "runtime/batch_decode.h"
#include "runtime/context.h"
#include "runtime/engine.h"

namespace ork::runtime {

class DecodeBatcher {
 public:
  explicit DecodeBatcher(Engine& engine, std::chrono::microseconds gather = std::chrono::microseconds(2000));
  DecodeBatcher(const DecodeBatcher&) = delete;
  DecodeBatcher& operator=(const DecodeBatcher&) = delete;

  // A generation in the decode phase, counted while it lives (a step waits for the tokens of every
  // member, up to `gather`).
  class Member {
   public:
    explicit Member(DecodeBatcher& b) : b_(&b) {}
    Member(Member&& o) noexcept : b_(o.b_) { o.b_ = nullptr; }
    Member(const Member&) = delete;
    ~Member();

   private:
    DecodeBatcher* b_;
  };
  Member join();

  // Evaluates `token` after ctx's n_past() tokens in the next step and writes its logits to
  // out[0..n_vocab). Blocks until that step ran. Throws what evaluating ctx alone would throw.
  void decode(Context& ctx, int32_t token, float* out);

  struct Stats {
    uint64_t steps = 0;  // batched steps run
    uint64_t rows = 0;   // tokens decoded in them (rows / steps: the mean batch)
    int max_rows = 0;
  };
  Stats stats() const;

 private:
  struct Pending {
    Context* ctx;
    int32_t token;
    float* out;
    bool done = false;
    std::exception_ptr error;
  };
  void run(const std::vector<Pending*>& batch);

  Engine& engine_;
  const std::chrono::microseconds gather_;
  BatchDecode step_;  // used by the thread running a step (running_) only
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Pending*> pending_;  // tokens waiting for the next step
  std::chrono::steady_clock::time_point first_arrival_;  // of pending_.front()
  int members_ = 0;
  bool running_ = false;  // a step is running
  Stats stats_;
};

}  // namespace ork::runtime
