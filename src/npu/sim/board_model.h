// The board cost model: how long a job of the simulated NPU would take on an RK3588, stated as a
// model — every parameter named, with its source, overridable from a JSON profile
// (`--board-profile FILE`, `ORK_BOARD_PROFILE`), to be calibrated on a board (`ork probe calibrate`
// is not written yet). The simulator's wall clock is never used for board speed.
//
// Per task on a core:  t = task_overhead + max(compute, memory)
//   compute = MACs / (MACs per cycle · clock · mac_efficiency)      (int8, int4 or fp16 rate)
//   memory  = (A + B + C bytes) / (DDR bandwidth / cores active in the job)
// Per job:  submit_overhead + (domain_switch when the job switched domains) + the slowest core.
// Thread-safe: pure functions of their arguments.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ork::npu::sim {

struct BoardProfile {
  std::string name = "rk3588-public-v1";
  // NPU: 3 cores × 1024 int8 MACs/cycle at 1 GHz = 6 TOPS int8, 3 TOPS fp16 (RK3588 TRM via the
  // jas-hacks blog 2024-02; docs/board-model.md).
  double npu_clock_ghz = 1.0;
  double int8_macs_per_cycle = 1024;
  double fp16_macs_per_cycle = 512;
  // int4 × int4 tasks: "2048x3 integer 4 MAC operation per cycle" (RK3588 TRM Part 1 §36.1, beside
  // "1024x3 integer 8"): twice the int8 rate.
  double int4_macs_per_cycle = 2048;
  // Fraction of the MAC peak a task sustains once its fixed cost is paid: 0.73 measured for fp16
  // 1024×3840×4096 on one core (device time 42.91 ms); 0.18 for int8 end to end, overheads included
  // (docs/board-model.md). Calibratable.
  double mac_efficiency = 0.6;
  // DDR bandwidth the NPU's DMA reaches, shared by the cores of a job: a "~28 GB/s budget",
  // saturating near 30 GB/s (oRKLLM/ork-driver wiki); RKLLM's Qwen2.5-1.5B decode implies ≈ 26 GB/s of
  // weights (LPDDR4X, ≈ 33.8 GB/s theoretical).
  double ddr_gbps = 26.0;
  // One submit: ioctl, interrupt and wake-up, "the ~134 µs round-trip floor" (ork-driver wiki
  // Exp-2026-06-13).
  double submit_us = 134.0;
  // One chained task: 8.66 µs fixed cost per task measured, of which PC chaining "removes 72–80%"
  // (ork-driver wiki Exp-2026-09-05).
  double task_us = 2.0;
  // One IOMMU domain switch: not measured publicly; a guess to be calibrated.
  double domain_switch_us = 100.0;

  // CPU (4 × Cortex-A76 at 2.4 GHz), for the hybrid schedule (runtime/schedule.h): an int8 matmul
  // on the CPU takes  cpu_call_us + max(weight bytes / cpu_read_gbps, MACs / cpu_int8_gmacs).
  // Sequential read bandwidth "17–22 GB/s" sustained on an RK3588 (Turing Pi RK1 benchmarks); the
  // low end, as ork's kernels are not measured there (docs/board-model.md).
  double cpu_read_gbps = 17.0;
  // 4 cores × 2.4 GHz × 32 int8 MACs/cycle (two 128-bit SDOT per cycle, Arm Cortex-A76 Software
  // Optimization Guide) = 307 GMAC/s peak; 0.4 of it is a guess, to be calibrated.
  double cpu_int8_gmacs = 120.0;
  // Waking the thread pool and joining it once per matmul: a guess, to be calibrated.
  double cpu_call_us = 10.0;
  // Streaming a packed weight into the NPU's buffers: a CPU copy reads and writes every byte, so half
  // of cpu_read_gbps (derived, not measured; weights/modeled_loads.h).
  double load_gbps = 8.5;
  // DDR bandwidth the NPU and the CPU reach together when both read at once (a matmul split along N
  // between them, runtime/hybrid_matmul.h): LPDDR4X-4224 on 64 bits is 33.8 GB/s theoretical
  // (rknpu-facts.md), readers saturate "near 30 GB/s" (oRKLLM/ork-driver wiki). Not measured for
  // NPU + CPU at once: a guess to be calibrated.
  double ddr_total_gbps = 30.0;

  // Host work between the matmuls (sim/host_cost.h): norms, RoPE, activations, residuals, quantizing
  // the NPU's inputs and scaling its results, the KV cache, attention and sampling, on the CPU.
  // Fixed cost of one such step (a loop over the rows of one vector op, e.g. one rmsnorm of the
  // pass): a guess, to be calibrated (`ork probe calibrate` times ops::rmsnorm on one row).
  double host_op_us = 1.0;
  // f32 arithmetic rate of ork's host kernels (attention's dot products and sums): 4 Cortex-A76 at
  // 2.4 GHz × 16 f32 flops/cycle (two 128-bit FMA pipes, Arm Cortex-A76 Software Optimization Guide)
  // = 154 GFLOP/s peak; a quarter of it is a guess, to be calibrated (`ork probe calibrate` times
  // ops::attention over a 1024-token cache).
  double cpu_f32_gflops = 38.0;
};

// The built-in profile, or `path`'s fields over it (a JSON object of the names above; an unknown
// name, a non-number or a non-positive value is an ork::Error naming it).
BoardProfile load_board_profile(const std::string& path);
std::string board_profile_json(const BoardProfile& p);

// The work of one task, as the simulated core saw it.
struct TaskWork {
  bool fp16 = false;
  uint64_t macs = 0;
  uint64_t bytes = 0;  // A read + B read + C written
  bool int4 = false;   // an int4 × int4 → int16 task (its precision field; fp16 false)
};

struct JobCost {
  double total_ns = 0;
  std::array<double, 3> core_busy_ns{};  // time each core ran tasks (overheads included)
  uint64_t ddr_bytes = 0;
};

// per_core[c]: the tasks core c ran, in order (empty: core idle). `switched`: the job changed domain.
JobCost cost_job(const BoardProfile& p, const std::array<std::vector<TaskWork>, 3>& per_core, bool switched);

// The modeled time (ns) of an (m × k) · (n × k)ᵀ int8 matmul on the board's CPU (the w8a8 path:
// n × k int8 weights plus n f32 scales read once).
double cost_cpu_matmul_ns(const BoardProfile& p, int64_t m, int64_t k, int64_t n);
// Bytes that CPU matmul reads (n × k int8 weights and n f32 scales).
double cpu_matmul_bytes(int64_t k, int64_t n);

// One side of a call run on the NPU and the CPU at once: its modeled time alone (ns), the part of it
// that moves no data (submit, call overhead), and the DDR bytes it moves.
struct OverlapSide {
  double ns = 0, fixed_ns = 0, bytes = 0;
};
// The modeled time of both sides run at once. Each side starts moving data after its fixed part, at
// the rate it reaches alone (bytes over the rest of its time); while both move data they share the
// DDR, and when their rates add up to more than ddr_total_gbps both are slowed in proportion.
// A side with no bytes takes its own time. Pure.
double cost_overlapped_ns(const BoardProfile& p, const OverlapSide& npu, const OverlapSide& cpu);

}  // namespace ork::npu::sim
