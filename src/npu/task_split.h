// Splitting a matmul C (M×N) = A (M×K) · Bᵀ into NPU tasks that fit one core's CBUF, and across cores.
//
// Rules (docs/hardware.md "Registers and layouts"):
//  - K: the packed weight's K segments (k_segment_width columns, layout.h); one task reads one segment. The
//    partial sums of the segments are written to separate output blocks and added on the CPU (no
//    public source documents a DPU mode that accumulates into an existing output).
//  - M: tiles of mt rows (a multiple of 4, or 1) inside the board-verified CBUF envelope
//    (cbuf_budget.h: ≤ 8 int8 / ≤ 10 fp16 data banks, the weight banks holding a 32-kernel atom).
//  - N: split into one contiguous range per core (aligned to the kernel group), then tiles of at most
//    kMaxTaskN kernels.
// Every task's operands are dense native-layout blocks: A block (m-tile, segment) in the A scratch,
// the weight slice (segment, n-tile) — contiguous in the packed weight — and its own C block in the
// C scratch. When the plan has one M tile and one K segment, the C scratch is exactly the native
// (Np/4, Mp, 4) layout of the whole C. Pure, thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "npu/cbuf_budget.h"
#include "npu/layout.h"
#include "npu/regcmd_gen.h"

namespace ork::npu {

struct TaskTile {
  uint32_t core = 0;
  int64_t m0 = 0, mt = 0;   // rows [m0, m0 + mt) of the padded A/C (mt padded)
  int64_t n0 = 0, nt = 0;   // kernels [n0, n0 + nt) of the padded B
  int64_t seg = 0;          // K segment; columns [seg·8192, seg·8192 + ks)
  int64_t ks = 0;
  uint64_t a_off = 0;       // byte offsets: A block in A scratch, B slice in the weight,
  uint64_t b_off = 0;       //   C block in C scratch
  uint64_t c_off = 0;
};

struct SplitPlan {
  Dtype dtype = Dtype::kI8;
  int64_t m = 0, k = 0, n = 0;     // logical sizes
  int64_t mp = 0, kp = 0, np = 0;  // padded sizes
  int64_t mt = 0;                  // rows per M tile (the last tile may be shorter)
  int64_t segments = 0;
  int64_t kseg = 0;                // columns of a full K segment (the last may be narrower)
  uint32_t cores = 0;              // cores that received tasks (1..3)
  std::vector<TaskTile> tasks;     // grouped by core, in core order
  uint32_t core_start[3] = {0, 0, 0}, core_count[3] = {0, 0, 0};
  uint64_t a_bytes = 0;            // A scratch: all (m-tile, segment) blocks
  uint64_t c_bytes = 0;            // C scratch: one block per task
  uint64_t macs() const;
};

// Plans the tasks of an (m × k) · (n × k)ᵀ matmul on up to `max_cores` cores (1..3) — for kI4 by
// plan_split_i4 (task_split_int4.h; k_segment must be 0) — for a weight
// packed in K segments of `k_segment` columns: 0 means k_segment_width(d), the layout pack_b writes;
// another multiple of 32 up to kKSegmentMax only plans (register dumps compared with other
// generators' one-task streams), it matches no packed weight. `layout_np`: the padded N of the packed
// layout whose first n rows the weight is (0: pad_n(n), a weight of its own); it sets how far apart
// the K segments are (npu::rows_view).
SplitPlan plan_split(int64_t m, int64_t k, int64_t n, Dtype d, uint32_t max_cores, int64_t k_segment = 0,
                     int64_t layout_np = 0);
// Width of segment s of the plan.
int64_t plan_segment_width(const SplitPlan& p, int64_t s);

// Byte offset of the A block for (m-tile index i, segment s) in the A scratch.
uint64_t a_block_offset(const SplitPlan& p, int64_t tile, int64_t seg);

// The task order every planner shares: p.np (a multiple of n_group) is cut into n_group units spread
// as evenly as they go over min(max_cores, units) cores; for each core in turn, for each K segment
// (plan_segment_width) and each N tile of at most kMaxTaskN of the core's range, add(core, seg, ks,
// n0, nt) appends that tile's tasks to p.tasks. Sets p.cores, p.core_start and p.core_count.
template <class AddTiles>
void for_each_core_tile(SplitPlan& p, int64_t n_group, uint32_t max_cores, AddTiles&& add) {
  const int64_t groups = p.np / n_group;
  const int64_t cores = std::min<int64_t>(max_cores, groups);
  p.cores = uint32_t(cores);
  int64_t group0 = 0;
  for (int64_t c = 0; c < cores; ++c) {
    const int64_t cg = groups / cores + (c < groups % cores ? 1 : 0);
    const int64_t n_begin = group0 * n_group, n_end = (group0 + cg) * n_group;
    group0 += cg;
    p.core_start[c] = uint32_t(p.tasks.size());
    for (int64_t seg = 0; seg < p.segments; ++seg) {
      const int64_t ks = plan_segment_width(p, seg);
      for (int64_t n0 = n_begin; n0 < n_end; n0 += kMaxTaskN) {
        add(uint32_t(c), seg, ks, n0, std::min<int64_t>(kMaxTaskN, n_end - n0));
      }
    }
    p.core_count[c] = uint32_t(p.tasks.size()) - p.core_start[c];
  }
}

}  // namespace ork::npu
