// Monotonic wall-clock timing in milliseconds.
#pragma once

#include <chrono>

namespace ork {

inline double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// Measures elapsed time since construction or the last reset(). Not thread-safe.
class Stopwatch {
 public:
  Stopwatch() : start_(now_ms()) {}
  void reset() { start_ = now_ms(); }
  double elapsed_ms() const { return now_ms() - start_; }

 private:
  double start_;
};

}  // namespace ork
