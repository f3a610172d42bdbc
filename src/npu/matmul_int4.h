// int4 × int4 matmuls on the NPU: C (m×n, int32) = A (m×k int4 codes) · Bᵀ (B n×k int4 codes,
// packed by pack_b_i4), planned as int4 → int16 tasks (regcmd_int4.h) whose K chunks hold at most
// kI4KChunk columns, so no task's int16 sum can overflow whatever the codes; the host widens each
// task's int16 block and adds the K chunks in int32 (docs/hardware.md "int16 sums, K chunks and
// overflow"). One core, one job per call: the fidelity tests' and bench/board_model's first int4 path;
// the model's int4 matmuls run through npu/matmul.h (task_split_int4.h).
//
// Scratch layout of a plan: the A scratch holds one dense (kc/32, mt, 32) block per (M tile, K
// chunk); the C scratch one (nt/8, mt, 8) int16 block per task; B is read in place (chunk c's
// N tile n0 at i4_chunk_offset(c, np) + n0·kc/2).
// Plans and packers are pure and thread-safe; matmul_i4 uses the Device (itself thread-safe) and
// allocates its own scratch per call.
#pragma once

#include <cstdint>
#include <vector>

#include "npu/device.h"
#include "npu/layout_int4.h"

namespace ork::npu {

struct Int4Task {
  uint32_t m0 = 0, mt = 0;  // rows [m0, m0 + mt), mt ≤ kI4MaxTaskM
  uint32_t k0 = 0, kc = 0;  // columns of one K chunk, kc ≤ kI4KChunk
  uint32_t n0 = 0, nt = 0;  // kernels [n0, n0 + nt) of the padded N, nt ≤ 4096
  uint64_t a_off = 0, b_off = 0, c_off = 0;  // byte offsets in the A scratch, the weight, the C scratch
};

struct Int4Plan {
  int64_t m = 0, k = 0, n = 0, kp = 0, np = 0;
  int64_t chunk = 0, chunks = 0;  // K chunk width (check_i4_chunk) and count
  std::vector<Int4Task> tasks;  // ordered M tile, N tile, K chunk
  uint64_t a_bytes = 0, c_bytes = 0;
};

// Plans an m×k×n int4 matmul on one core with K chunks of `chunk` columns (the weight must be packed
// with the same chunk). Throws ork::Error for sizes outside [1, kMaxDim] or a bad chunk.
Int4Plan plan_int4(int64_t m, int64_t k, int64_t n, int64_t chunk = kI4KChunk);

// Writes A (m × k codes, row stride k) into the plan's A scratch (plan.a_bytes bytes).
// `swap_nibbles`: fault injection for fidelity tests.
void pack_a_for_int4_plan(const Int4Plan& plan, const int8_t* codes, uint8_t* a_scratch, bool swap_nibbles = false);
// Adds the tasks' int16 blocks into c (m × n int32, row stride n).
void reduce_int4_plan(const Int4Plan& plan, const uint8_t* c_scratch, int32_t* c);
// Keeps the K chunks apart (per-group weight scales): c holds plan.chunks blocks of m × n int32.
void reduce_int4_plan_chunks(const Int4Plan& plan, const uint8_t* c_scratch, int32_t* c);

// Runs the plan on core 0 of `dev`: `weight` holds pack_b_i4 of the n×k weight (its domain is the
// job's); A scratch, C scratch, register commands and the task array are allocated in that domain
// for this call. Throws ork::Error (sizes), AllocError, or the submit's error.
void matmul_i4(Device& dev, const Buffer& weight, const int8_t* a_codes, int64_t m, int64_t k, int64_t n,
               int32_t* c);
// The same with K chunks of `chunk` columns kept apart: c_chunks holds ceil(Kp/chunk) blocks of
// m × n int32 sums (block g: columns [g·chunk, (g+1)·chunk)); `weight` packed with that chunk.
void matmul_i4_chunks(Device& dev, const Buffer& weight, const int8_t* a_codes, int64_t m, int64_t k, int64_t n,
                      int64_t chunk, int32_t* c_chunks);

}  // namespace ork::npu
