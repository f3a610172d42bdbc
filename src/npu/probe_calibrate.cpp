#include "npu/probe_calibrate.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "npu/matmul.h"
#include "npu/job_estimate.h"
#include "npu/matmul_job.h"

namespace ork::npu {

namespace {

// Weights of one job (never packed: their contents do not change the time), the int8 input and the
// outputs, and the clock that times it.
class TimedJob {
 public:
  TimedJob(Device& dev, int64_t m, int64_t k, std::vector<int64_t> ns, uint32_t domain)
      : dev_(dev), m_(m), k_(k), a_(size_t(m * k), 1) {
    for (int64_t n : ns) {
      PackedWeight w;
      w.n = n, w.k = k, w.dtype = Dtype::kI8;
      w.buf = dev.alloc(packed_weight_bytes(n, k, Dtype::kI8), domain);
      ws_.push_back(std::move(w));
      c_.emplace_back(size_t(m * n));
    }
    for (auto& w : ws_) wp_.push_back(&w);
    for (auto& c : c_) cp_.push_back(c.data());
  }
  void run(MatmulScratch& scratch) { run_matmul_group(dev_, scratch, wp_, a_.data(), m_, cp_); }
  // Bytes this job's tasks move, summed (as the simulated core accounts them).
  uint64_t bytes() const {
    std::vector<int64_t> ns;
    for (const auto& w : ws_) ns.push_back(w.n);
    uint64_t b = 0;
    for (const auto& core : job_task_work(plan_job(m_, k_, ns, Dtype::kI8, dev_.caps().cores))) {
      for (const sim::TaskWork& w : core) b += w.bytes;
    }
    return b;
  }
  uint64_t macs() const {
    uint64_t x = 0;
    for (const auto& w : ws_) x += uint64_t(m_ * k_ * w.n);
    return x;
  }

 private:
  Device& dev_;
  int64_t m_, k_;
  std::vector<int8_t> a_;
  std::vector<PackedWeight> ws_;
  std::vector<const PackedWeight*> wp_;
  std::vector<std::vector<int32_t>> c_;
  std::vector<void*> cp_;
};

// Time of one job in µs: the median of `repeats` (after one warm-up run, which builds the job).
class Clock {
 public:
  Clock(Device& dev, int repeats) : dev_(dev), repeats_(dev.sim_kernel() != nullptr ? 1 : repeats) {}
  bool modeled() const { return dev_.sim_kernel() != nullptr; }
  template <class Run>
  double us(Run&& run) {
    run();
    std::vector<double> t;
    for (int i = 0; i < repeats_; ++i) {
      if (modeled()) {
        const double before = dev_.sim_kernel()->stats().modeled_ns;
        run();
        t.push_back((dev_.sim_kernel()->stats().modeled_ns - before) / 1e3);
      } else {
        const auto start = std::chrono::steady_clock::now();
        run();
        t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
      }
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }

 private:
  Device& dev_;
  int repeats_;
};

}  // namespace

NpuCalibration calibrate_npu(Device& dev, const sim::BoardProfile& base, int repeats) {
  ORK_CHECK(repeats >= 1, "calibrate: repeats = ", repeats);
  NpuCalibration cal;
  Clock clock(dev, repeats);
  cal.clock = clock.modeled() ? "modeled" : "wall";
  cal.profile = base;
  sim::BoardProfile& p = cal.profile;
  MatmulScratch scratch(dev);
  const uint32_t cores = dev.caps().cores;

  // Submit and per-task cost: one 32 × 32 task against sixteen chained on one core. Each tiny task
  // also moves ≈ 1.2 KB, subtracted once the bandwidth is known.
  TimedJob one(dev, 1, 32, {32}, 0);
  TimedJob sixteen(dev, 1, 32, std::vector<int64_t>(16, 32), 0);
  const double t1 = clock.us([&] { one.run(scratch); });
  const double t16 = clock.us([&] { sixteen.run(scratch); });
  const double per_task = (t16 - t1) / 15;  // task_us + the tiny task's transfer
  const double tiny_bytes = double(one.bytes());

  // Bandwidth: M = 1 over a 4096 × 4096 weight per core (memory-bound: one MAC per byte).
  TimedJob stream(dev, 1, 4096, std::vector<int64_t>{int64_t(4096) * cores}, 0);
  const double ts = clock.us([&] { stream.run(scratch); });
  const double stream_tasks = double(matmul_tasks(1, 4096, int64_t(4096) * cores, Dtype::kI8, cores));
  double task = per_task, gbps = 0, submit = 0;
  for (int iter = 0; iter < 3; ++iter) {  // the tiny transfer depends on the bandwidth, and back
    submit = t1 - per_task;
    const double per_core_bytes = double(stream.bytes()) / cores;
    gbps = per_core_bytes * cores / ((ts - submit - task * stream_tasks / cores) * 1e3);  // bytes/ns
    task = per_task - tiny_bytes / gbps / 1e3;
  }
  p.submit_us = submit;
  p.task_us = task;
  p.ddr_gbps = gbps;
  cal.steps.push_back({"submit_us", submit, "one 1×32×32 task per job"});
  cal.steps.push_back({"task_us", task, "16 chained 1×32×32 tasks on one core against one"});
  cal.steps.push_back({"ddr_gbps", gbps, "M = 1 over a 4096 × 4096 int8 weight per core"});

  // MAC efficiency: M = 128 over K = 2048 (128 MACs per weight byte: compute-bound at the cited rates).
  TimedJob compute(dev, 128, 2048, std::vector<int64_t>{int64_t(4096) * cores}, 0);
  const double tc = clock.us([&] { compute.run(scratch); });
  const double compute_tasks = double(matmul_tasks(128, 2048, int64_t(4096) * cores, Dtype::kI8, cores));
  const double busy_ns = (tc - submit - task * compute_tasks / cores) * 1e3;
  const double macs_per_ns = double(compute.macs()) / cores / busy_ns;
  p.mac_efficiency = std::min(1.0, macs_per_ns / (p.int8_macs_per_cycle * p.npu_clock_ghz));
  cal.steps.push_back({"mac_efficiency", p.mac_efficiency, "M = 128 over a 2048-column weight, 4096 rows per core"});
  const double mem_ns = double(compute.bytes()) / cores / (gbps / cores);
  if (mem_ns >= busy_ns) {
    cal.notes.push_back("mac_efficiency: the compute job was bound by memory at the measured bandwidth, so the "
                        "value is a lower bound");
  }

  // Domain switch: jobs alternating between weights in domains 0 and 1, against the same domain.
  if (dev.caps().domains >= 2) {
    TimedJob other(dev, 1, 32, {32}, 1);
    const double same = clock.us([&] { one.run(scratch); one.run(scratch); });
    const double alternating = clock.us([&] { one.run(scratch); other.run(scratch); });
    p.domain_switch_us = std::max(0.0, (alternating - same) / 2);
    cal.steps.push_back({"domain_switch_us", p.domain_switch_us, "jobs alternating between two domains"});
  } else {
    cal.notes.push_back("domain_switch_us: one IOMMU domain only; kept from the base profile");
  }
  cal.notes.push_back("npu_clock_ghz, int8_macs_per_cycle, fp16_macs_per_cycle: the chip's specification, not "
                      "measured");
  return cal;
}

}  // namespace ork::npu
