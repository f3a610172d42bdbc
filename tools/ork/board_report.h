// The `board_model` object of `ork run --json` (and the "modeled" line of --stats) on --device sim:
// the simulator's modeled RK3588 time (src/npu/sim/board_model.h, docs/board-model.md) of the NPU jobs
// of the prompt and of the decoded tokens, per token, plus — with --schedule auto|cpu — the modeled
// time of the matmuls the schedule ran on the CPU, the waits for streamed weights and the host work
// between the matmuls (norms, RoPE, the KV cache, attention, sampling, quantizing activations;
// npu/sim/host_cost.h). MODELED: every term is the board profile's price of what ran, never the
// host's wall clock.
#pragma once

#include <cstdint>
#include <string>

#include "npu/sim/sim_kernel.h"
#include "runtime/engine.h"

namespace ork::cli {

// The modeled time so far: the simulator's NPU jobs, the schedule's CPU matmuls, the waits for
// streamed weights and the host work.
struct BoardSnapshot {
  npu::sim::SimStats npu;
  double cpu_ns = 0;
  double stall_ns = 0;  // compute waiting for streamed weights (weights/modeled_loads.h)
  double host_ns = 0;   // host work between the matmuls (runtime/host_work_meter.h)
};
// engine's device must be the simulator.
BoardSnapshot board_snapshot(const runtime::Engine& engine);

struct BoardReport {
  std::string profile;           // the board profile's name
  bool cpu_priced = false;       // the schedule runs matmuls on the CPU (their modeled time included)
  BoardSnapshot start, after_prompt, end;
  int64_t prompt_tokens = 0;     // evaluated in the prompt's passes
  int64_t decode_tokens = 0;     // evaluated one per pass after the prompt

  std::string to_json() const;
  std::string to_text() const;   // one line for --stats
};

}  // namespace ork::cli
