#include "runtime/cpu_calibrate.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "ops/matmul_w8a8.h"

namespace ork::runtime {

namespace {

struct Shape {
  int64_t m, k, n;
};

// Median wall time (µs) of one w8a8 matmul of `s`, after a warm-up call.
double time_us(ThreadPool& pool, Shape s, int repeats) {
  std::vector<float> x(size_t(s.m * s.k), 0.5f), y(size_t(s.m * s.n)), scales(size_t(s.n), 1.0f);
  std::vector<int8_t> w(size_t(s.n * s.k), 3);
  ops::matmul_w8a8(pool, x.data(), s.m, s.k, w.data(), scales.data(), s.n, y.data());
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    ops::matmul_w8a8(pool, x.data(), s.m, s.k, w.data(), scales.data(), s.n, y.data());
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
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
  return steps;
}

}  // namespace ork::runtime
