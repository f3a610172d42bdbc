// The simulated NPU core. Per task: fetch the register commands through the address space, decode
// and validate them (regcmd_decode.h), check the PC chain against the task list, then run the matmul
// on the CPU reading A and B in their native layouts and writing C in its native layout.
//
// Arithmetic: int8 × int8 products summed exactly in int32, k ascending. fp16 inputs are widened to
// f32 and each output is one f32 sum, k ascending from 0 within the task (the board's adder tree
// order is not documented; results agree within fp16-input rounding, not bit for bit).
#include "npu/sim/executor.h"

#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/fp16.h"
#include "npu/layout.h"
#include "npu/registers.h"
#include "npu/sim/regcmd_decode.h"

namespace ork::npu::sim {

namespace {

constexpr uint32_t kMaxTaskEntries = 4096;  // far above any documented task; guards the fetch

void run_i8(const MatmulTaskDesc& t, const uint8_t* a, const uint8_t* b, uint8_t* c) {
  const int64_t m = t.m, k = t.k, n = t.n;
  // Gather the native blocks into row-major copies so the inner loop is a contiguous dot product.
  std::vector<int8_t> ar(size_t(m * k)), br(size_t(n * k));
  unpack_a(Dtype::kI8, a, m, k, m, k, ar.data(), k);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t kk = 0; kk < k; ++kk)
      br[size_t(r * k + kk)] = int8_t(b[b_index_in_segment(r, kk, k, Dtype::kI8)]);
  std::vector<int32_t> out(size_t(m * n));
  for (int64_t i = 0; i < m; ++i) {
    const int8_t* ai = ar.data() + i * k;
    for (int64_t j = 0; j < n; ++j) {
      const int8_t* bj = br.data() + j * k;
      int32_t s = 0;
      for (int64_t kk = 0; kk < k; ++kk) s += int32_t(ai[kk]) * int32_t(bj[kk]);
      out[size_t(i * n + j)] = s;
    }
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const int32_t val = out[size_t(i * n + j)];
      std::memcpy(c + c_index(i, j, m) * 4, &val, 4);
    }
}

void run_f16(const MatmulTaskDesc& t, const uint8_t* a, const uint8_t* b, uint8_t* c) {
  const int64_t m = t.m, k = t.k, n = t.n;
  std::vector<float> ar(size_t(m * k)), br(size_t(n * k));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t kk = 0; kk < k; ++kk) {
      uint16_t h;
      std::memcpy(&h, a + a_index(i, kk, m, Dtype::kF16) * 2, 2);
      ar[size_t(i * k + kk)] = f16_to_f32(h);
    }
  for (int64_t r = 0; r < n; ++r)
    for (int64_t kk = 0; kk < k; ++kk) {
      uint16_t h;
      std::memcpy(&h, b + b_index_in_segment(r, kk, k, Dtype::kF16) * 2, 2);
      br[size_t(r * k + kk)] = f16_to_f32(h);
    }
  for (int64_t i = 0; i < m; ++i) {
    const float* ai = ar.data() + i * k;
    for (int64_t j = 0; j < n; ++j) {
      const float* bj = br.data() + j * k;
      float s = 0.0f;
      for (int64_t kk = 0; kk < k; ++kk) s += ai[kk] * bj[kk];
      std::memcpy(c + c_index(i, j, m) * 4, &s, 4);
    }
  }
}

}  // namespace

ExecStats execute_tasks(AddressSpace& space, const uapi::Task* tasks, uint32_t count) {
  ExecStats stats;
  DecodedTask prev;
  for (uint32_t ti = 0; ti < count; ++ti) {
    const uapi::Task& task = tasks[ti];
    const std::string where = str_cat("task ", ti);
    ORK_CHECK(task.regcfg_amount > 0, where, ": regcfg_amount is 0");
    ORK_CHECK(task.regcfg_amount + reg::kPcTailEntries <= kMaxTaskEntries, where, ": regcfg_amount ",
              task.regcfg_amount, " exceeds ", kMaxTaskEntries - reg::kPcTailEntries);
    ORK_CHECK(task.enable_mask == reg::kTaskEnableMask, where, ": enable_mask 0x", std::hex,
              task.enable_mask, "; the simulator runs PC|CNA|DPU tasks (0x", reg::kTaskEnableMask, ")");
    ORK_CHECK((task.int_mask & reg::kTaskIntMask) != 0, where, ": int_mask 0x", std::hex,
              task.int_mask, " waits for no DPU interrupt; the job would never complete");
    ORK_CHECK(task.regcmd_addr % 16 == 0, where, ": regcmd_addr 0x", std::hex, task.regcmd_addr,
              " is not 16-byte aligned");
    if (ti > 0) {
      // On the board the PC follows the tail of the previous task: it must lead here.
      ORK_CHECK(prev.chained, "task ", ti - 1, ": its PC tail ends the chain but task ", ti,
                " follows in the same core's range");
      ORK_CHECK(prev.next_addr == task.regcmd_addr, "task ", ti - 1, ": PC_BASE_ADDRESS 0x", std::hex,
                prev.next_addr, " is not task ", std::dec, ti, "'s regcmd_addr 0x", std::hex,
                task.regcmd_addr);
      const uint32_t want = pc_chain_amount(task.regcfg_amount + reg::kPcTailEntries);
      ORK_CHECK(prev.next_amount == want, "task ", ti - 1, ": PC_REGISTER_AMOUNTS ", prev.next_amount,
                " does not match task ", ti, "'s regcfg_amount ", task.regcfg_amount, " (expected ",
                want, ")");
    }
    const uint32_t entries = task.regcfg_amount + reg::kPcTailEntries;
    const uint8_t* raw = space.resolve(task.regcmd_addr, uint64_t(entries) * 8);
    std::vector<uint64_t> cmds(entries);
    std::memcpy(cmds.data(), raw, size_t(entries) * 8);
    const DecodedTask d = decode_matmul_regcmd(cmds.data(), entries, where);
    if (ti + 1 == count) {
      ORK_CHECK(!d.chained, where, ": the last task of the range chains to 0x", std::hex, d.next_addr);
    }
    const MatmulTaskDesc& op = d.op;
    const uint8_t* a = space.resolve(op.a_addr, op.a_bytes());
    const uint8_t* b = space.resolve(op.b_addr, op.b_bytes());
    uint8_t* c = space.resolve(op.c_addr, op.c_bytes());
    if (op.dtype == Dtype::kI8)
      run_i8(op, a, b, c);
    else
      run_f16(op, a, b, c);
    stats.tasks += 1;
    stats.macs += uint64_t(op.m) * op.n * op.k;
    prev = d;
  }
  return stats;
}

}  // namespace ork::npu::sim
