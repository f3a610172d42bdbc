// Splitting an int4 × int4 → int16 matmul C (M×N) = A (M×K) · Bᵀ (B packed by pack_b_i4 with K chunks
// of kI4KChunk columns, layout_int4.h) into NPU tasks on up to three cores: the int4 case of
// plan_split (task_split.h), so an int4 weight runs through the same jobs, cached register commands
// and grouped submits as an int8 one (matmul.h, matmul_job.h).
//
// Rules:
//  - K: one task per K chunk (SplitPlan::kseg = kI4KChunk = 480 columns, `seg` its index): no int16
//    sum can overflow (480 · 8 · 8 = 30720 ≤ 32767); the chunks' int16 blocks are widened and added
//    in int32 on the host (unpack_c_for_plan).
//  - M: tiles of at most kI4MaxTaskM (128) rows, unpadded (an int4 A block is (kc/32, mt, 32)).
//  - N: one contiguous range per core in units of the 64-kernel group, then tiles of ≤ kMaxTaskN.
// A scratch: chunk-major, as the int8 segments: chunk s of M tile i at s·m·kseg/2 + m0·kc/2, one
// dense (kc/32, mt, 32) block of mt·kc/2 bytes. C scratch: one (nt/8, mt, 8) int16 block per task.
// B: chunk s's N tile n0 at i4_chunk_offset(s, layout_np) + n0·kc/2.
// Pure, thread-safe.
#pragma once

#include <cstdint>

#include "npu/task_split.h"

namespace ork::npu {

// The plan of an int4 matmul (SplitPlan::dtype kI4); `layout_np`: as plan_split's (0: pad_n_i4(n)).
// Throws ork::Error on bad sizes, cores outside 1..3 or a layout narrower than n.
SplitPlan plan_split_i4(int64_t m, int64_t k, int64_t n, uint32_t max_cores, int64_t layout_np = 0);

// Writes A (p.m × p.k int4 codes in [−8, 7] as int8_t, row stride p.k) into the plan's A scratch
// (p.a_bytes bytes at dst). Throws ork::Error naming a code outside [−8, 7].
void pack_a_for_plan_i4(const SplitPlan& p, const int8_t* a, uint8_t* dst);
// C (p.m × p.n int32, row-major) = the sum over K chunks of the tasks' int16 blocks in `src`.
void unpack_c_for_plan_i4(const SplitPlan& p, const uint8_t* src, int32_t* c);

}  // namespace ork::npu
