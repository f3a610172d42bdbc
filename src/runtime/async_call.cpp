#include "runtime/async_call.h"

#include "core/error.h"

namespace ork::runtime {

AsyncCall::~AsyncCall() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void AsyncCall::start(std::function<void()> fn) {
  {
    std::lock_guard lock(mutex_);
    ORK_CHECK(!pending_, "async call: started again before the previous call was waited for");
    fn_ = std::move(fn);
    pending_ = true;
    error_ = nullptr;
  }
  if (!thread_.joinable()) thread_ = std::thread([this] { main(); });
  cv_.notify_all();
}

void AsyncCall::wait() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] { return !pending_; });
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void AsyncCall::main() {
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || (pending_ && fn_); });
    if (stop_) return;
    std::function<void()> fn = std::move(fn_);
    fn_ = nullptr;
    lock.unlock();
    std::exception_ptr error;
    try {
      fn();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    error_ = error;
    pending_ = false;
    cv_.notify_all();
  }
}

}  // namespace ork::runtime
