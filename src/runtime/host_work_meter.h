// runtime::HostWorkMeter — the board model's time of the host work of every forward pass an Engine
// on the simulator runs (npu/sim/host_cost.h: norms, RoPE, the KV cache, attention, activations,
// quantizing and scaling around the matmuls, sampling). MODELED from each pass's shape and the
// board profile, never the host's wall clock; `ork run --json`'s board_model adds it to the NPU jobs'
// and the schedule's CPU matmuls' modeled time. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>

#include "model/config.h"
#include "model/kv_type.h"
#include "npu/sim/host_cost.h"

namespace ork::runtime {

// The host shape of `c` with a KV cache of type `kv`, on the int8 (NPU) path; norm_fold: int4
// device weights (HostShape::norm_fold). A MoE layer is priced as a dense one whose FFN width is the
// routed experts' and the shared expert's rows.
npu::sim::HostShape host_shape_of(const model::Config& c, model::KvType kv, bool norm_fold = false);

class HostWorkMeter {
 public:
  HostWorkMeter(const npu::sim::BoardProfile& profile, const npu::sim::HostShape& shape);

  // One pass of n tokens of one sequence at positions pos0 ..; out_rows of them reach the logits.
  void add_sequence_pass(int64_t pos0, int64_t n, int64_t out_rows);
  // One pass of a batch (Forward::eval_batch): `rows` tokens in `sequences` sequences.
  void add_pass(const npu::sim::HostPass& pass);

  double modeled_ns() const;  // the total so far

 private:
  npu::sim::BoardProfile profile_;
  npu::sim::HostShape shape_;
  mutable std::mutex mu_;
  double ns_ = 0;
};

}  // namespace ork::runtime
