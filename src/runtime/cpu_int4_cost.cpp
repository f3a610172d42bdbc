#include "runtime/cpu_int4_cost.h"

#include <algorithm>

namespace ork::runtime {

double cpu_int4_matmul_bytes(int64_t k, int64_t n) { return double(n) * double((k + 1) / 2) + 4.0 * double(n); }

double cost_cpu_int4_matmul_ns(const npu::sim::BoardProfile& p, int64_t m, int64_t k, int64_t n) {
  const double bytes = cpu_int4_matmul_bytes(k, n);
  const double macs = double(m) * double(k) * double(n);
  return p.cpu_call_us * 1e3 + std::max(bytes / p.cpu_read_gbps, macs / p.cpu_int8_gmacs);  // GB/s = bytes/ns
}

}  // namespace ork::runtime
