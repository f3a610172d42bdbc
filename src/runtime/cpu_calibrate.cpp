#include "runtime/cpu_calibrate.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "npu/job_estimate.h"
#include "npu/matmul.h"
#include "npu/matmul_job.h"
#include "ops/attention.h"
#include "ops/matmul_w8a8.h"
#include "ops/norm.h"
#include "runtime/concurrent_rate.h"

namespace ork::runtime {

namespace {

struct Shape {
  int64_t m, k, n;
};

// Median wall time (µs) of run(), after a warm-up call.
template <class Run>
double median_us(Run&& run, int repeats) {
  run();
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Median wall time (µs) of one w8a8 matmul of `s`, after a warm-up call.
double time_us(ThreadPool& pool, Shape s, int repeats) {
  std::vector<float> x(size_t(s.m * s.k), 0.5f), y(size_t(s.m * s.n)), scales(size_t(s.n), 1.0f);
  std::vector<int8_t> w(size_t(s.n * s.k), 3);
  return median_us([&] { ops::matmul_w8a8(pool, x.data(), s.m, s.k, w.data(), scales.data(), s.n, y.data()); }, repeats);
}

}  // namespace

std::vector<npu::CalibrationStep> calibrate_cpu(ThreadPool& pool, npu::sim::BoardProfile& p, int repeats) {
  ORK_CHECK(repeats >= 1, "calibrate: repeats = ", repeats);
  std::vector<npu::CalibrationStep> steps;
  const double call = time_us(pool, {1, 32, 32}, repeats);
  p.cpu_call_us = call;
  steps.push_back({"cpu_call_us", call, "one 1 × 32 × 32 w8a8 matmul (ops::matmul_w8a8)"});
  // 32 MiB of int8 weight at M = 1: one MAC per byte, bound by reading the weight.
  const Shape read{1, 4096, 8192};
  const double tr = time_us(pool, read, repeats);
  p.cpu_read_gbps = double(read.n * read.k + 4 * read.n) / (std::max(tr - call, 1e-3) * 1e3);  // bytes/ns
  steps.push_back({"cpu_read_gbps", p.cpu_read_gbps, "M = 1 over a 8192 × 4096 int8 weight"});
  // M = 128 over a 1 MiB weight: 128 MACs per weight byte, bound by the arithmetic.
  const Shape compute{128, 1024, 1024};
  const double tc = time_us(pool, compute, repeats);
  p.cpu_int8_gmacs = double(compute.m * compute.k * compute.n) / (std::max(tc - call, 1e-3) * 1e3);  // MACs/ns
  steps.push_back({"cpu_int8_gmacs", p.cpu_int8_gmacs, "M = 128 over a 1024 × 1024 int8 weight"});

  // One host op: an rmsnorm of one 2048-wide row, the size of a decode step's vector ops (averaged
  // over 64 calls per timing: one call is about a microsecond).
  constexpr int64_t kRow = 2048;
  constexpr int kCalls = 64;
  std::vector<float> x(kRow, 0.25f), w(kRow, 1.0f), y(kRow);
  const double op = median_us([&] { for (int i = 0; i < kCalls; ++i) ops::rmsnorm(x.data(), w.data(), kRow, 1e-6f, y.data()); },
                              repeats) / kCalls;
  p.host_op_us = std::max(op, 1e-3);
  steps.push_back({"host_op_us", p.host_op_us, "ops::rmsnorm of one 2048-wide row"});

  // Host arithmetic: one decode step of attention over 1024 cached positions, 16 query heads on 2 KV
  // heads of 128 (4 · head_dim + 5 flops per head and key, as sim/host_cost.h counts them): 2 MiB of
  // K and V, cache-resident after the warm-up on an RK3588 (3 MiB L3), so the arithmetic is timed.
  constexpr int64_t kKeys = 1024, kHeads = 16, kKvHeads = 2, kDim = 128;
  std::vector<float> q(size_t(kHeads * kDim), 0.01f), out(size_t(kHeads * kDim));
  std::vector<float> kc(size_t(kKeys * kKvHeads * kDim), 0.02f), vc(kc.size(), 0.03f);
  const double ta = median_us([&] {
    ops::attention(pool, q.data(), 1, kKeys - 1, kHeads, kKvHeads, kDim, kc.data(), vc.data(), out.data());
  }, repeats);
  const double flops = double(kKeys) * kHeads * (4.0 * kDim + 5);
  p.cpu_f32_gflops = flops / (std::max(ta - call, 1e-3) * 1e3);  // flops/ns
  steps.push_back({"cpu_f32_gflops", p.cpu_f32_gflops, "ops::attention, one query over 1024 keys, 16 heads on 2 KV heads of 128"});
  return steps;
}

std::vector<npu::CalibrationStep> calibrate_ddr_total(npu::Device& dev, ThreadPool& pool, npu::sim::BoardProfile& p,
                                                      std::chrono::milliseconds window) {
  if (dev.sim_kernel() != nullptr) return {};
  const int64_t cores = dev.caps().cores;
  // The NPU side: M = 1 over 4096 rows of 4096 columns per core (weights never packed: their
  // contents do not change the time).
  npu::MatmulScratch scratch(dev);
  npu::PackedWeight wn;
  wn.n = 4096 * cores, wn.k = 4096, wn.dtype = npu::Dtype::kI8;
  wn.buf = dev.alloc(npu::packed_weight_bytes(wn.n, wn.k, npu::Dtype::kI8), 0);
  std::vector<int8_t> a(size_t(wn.k), 1);
  std::vector<int32_t> c(size_t(wn.n));
  const std::vector<const npu::PackedWeight*> ws{&wn};
  const std::vector<void*> cs{c.data()};
  uint64_t npu_bytes = 0;  // what the job's tasks move, as the simulated cores account them
  const std::vector<int64_t> ns{wn.n};
  for (const auto& core : npu::job_task_work(npu::plan_job(1, wn.k, ns, npu::Dtype::kI8, dev.caps().cores))) {
    for (const npu::sim::TaskWork& t : core) npu_bytes += t.bytes;
  }
  // The CPU side: the cpu_read_gbps matmul.
  const Shape s{1, 4096, 8192};
  std::vector<float> x(size_t(s.k), 0.5f), y(size_t(s.n)), scales(size_t(s.n), 1.0f);
  std::vector<int8_t> w(size_t(s.n * s.k), 3);
  const uint64_t cpu_bytes = uint64_t(npu::sim::cpu_matmul_bytes(s.k, s.n));
  npu::run_matmul_group(dev, scratch, ws, a.data(), 1, cs);  // builds the job once
  const ConcurrentRate r = concurrent_gbps(
      [&] {
        npu::run_matmul_group(dev, scratch, ws, a.data(), 1, cs);
        return npu_bytes;
      },
      [&] {
        ops::matmul_w8a8(pool, x.data(), s.m, s.k, w.data(), scales.data(), s.n, y.data());
        return cpu_bytes;
      },
      window);
  p.ddr_total_gbps = r.gbps;
  return {{"ddr_total_gbps", r.gbps,
           "an M = 1 NPU job over a 4096 × 4096-per-core weight and an M = 1 CPU matmul over a 8192 × 4096 weight, "
           "repeated at once for " + std::to_string(window.count()) + " ms (" + std::to_string(r.units_a) + " and " +
               std::to_string(r.units_b) + " runs)"}};
}

}  // namespace ork::runtime
