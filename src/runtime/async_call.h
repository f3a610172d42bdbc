// runtime::AsyncCall — one persistent thread that runs one function at a time for its owner, so the
// owner can work meanwhile (the NPU part of a matmul split along N runs there while the calling
// thread runs the CPU part, runtime/hybrid_matmul.h). The thread starts with the first start().
// Thread-safety: start() and wait() are called by one owner thread, alternately (start, wait, start,
// …); the function runs on the AsyncCall's thread and must not call back into it.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace ork::runtime {

class AsyncCall {
 public:
  AsyncCall() = default;
  ~AsyncCall();
  AsyncCall(const AsyncCall&) = delete;
  AsyncCall& operator=(const AsyncCall&) = delete;

  // Runs fn on the thread; returns at once. ork::Error when the previous call was not waited for.
  void start(std::function<void()> fn);
  // Returns when the started function has returned; rethrows what it threw.
  void wait();

 private:
  void main();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::function<void()> fn_;
  bool pending_ = false;  // fn_ set, not finished
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace ork::runtime
