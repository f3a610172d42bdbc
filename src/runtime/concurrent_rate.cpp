#include "runtime/concurrent_rate.h"

#include <atomic>
#include <exception>
#include <thread>

namespace ork::runtime {

ConcurrentRate concurrent_gbps(const RateUnit& a, const RateUnit& b, std::chrono::milliseconds window) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto end = start + window;
  struct Side {
    uint64_t bytes = 0, units = 0;
    std::exception_ptr error;
  };
  Side sa, sb;
  const auto loop = [end](const RateUnit& unit, Side& s) {
    try {
      do {
        s.bytes += unit();
        ++s.units;
      } while (clock::now() < end);
    } catch (...) {
      s.error = std::current_exception();
    }
  };
  std::thread other([&] { loop(b, sb); });
  loop(a, sa);
  other.join();
  if (sa.error) std::rethrow_exception(sa.error);
  if (sb.error) std::rethrow_exception(sb.error);
  ConcurrentRate r;
  r.seconds = std::chrono::duration<double>(clock::now() - start).count();
  r.units_a = sa.units, r.units_b = sb.units;
  r.gbps = double(sa.bytes + sb.bytes) / (r.seconds * 1e9);
  return r;
}

}  // namespace ork::runtime
