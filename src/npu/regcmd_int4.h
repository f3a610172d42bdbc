// Register commands of one int4 × int4 → int16 matmul task: C (m×n) = A (m×k) · Bᵀ as a 1×1 direct
// convolution with the int4 precision code in CNA/CORE/DPU and an int16 output, the values of
// happyme531/rknpu2_matmul_open make_i4_regs ("native" input layout, the rows of A along the cube's
// width; docs/hardware.md "int4 on the RK3588" has the table). The same 112-entry frame as the int8
// task (regcmd_gen.h: 4 opening writes, the 104-write body, the PC tail), so tasks of both kinds
// chain with chain_regcmd(). Operands are dense native blocks (layout_int4.h): A (k/32, m, 32) int4
// at a_addr, B (n/64, k/32, 64, 32) int4 at b_addr, C (n/8, m, 8) int16 at c_addr.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace ork::npu {

struct Int4TaskDesc {
  uint32_t m = 0;  // rows of A and C: 1..kI4MaxTaskM
  uint32_t k = 0;  // reduction length: a multiple of 32 in [32, kI4MaxTaskK]
  uint32_t n = 0;  // kernels: a multiple of 64 in [64, 4096]
  uint32_t a_addr = 0, b_addr = 0, c_addr = 0;  // NPU addresses, 16-byte aligned

  uint64_t a_bytes() const { return uint64_t(m) * k / 2; }
  uint64_t b_bytes() const { return uint64_t(n) * k / 2; }
  uint64_t c_bytes() const { return uint64_t(m) * n * 2; }
  std::string str() const;  // "i4 m=4 k=64 n=64 a=0x.. b=0x.. c=0x.."
};

// The register envelope of the task happyme531 ran: m ≤ 128 rows in the native layout, k ≤ 2048
// ("≤ 128 KiB packed A per task"). ork's planner never gives a task more than kI4KChunk (480)
// columns, so no int16 sum can overflow; check_task_i4 enforces the envelope, not the chunk.
constexpr uint32_t kI4MaxTaskM = 128;
constexpr uint32_t kI4MaxTaskK = 2048;

// CBUF split of an int4 task: data banks max(1, ceil(m·k/2 / 32 KiB)), the rest for the weights.
uint32_t i4_input_banks(uint32_t m, uint32_t k);

// Throws ork::Error naming the violated constraint.
void check_task_i4(const Int4TaskDesc& t);

// Writes the kMatmulEntries entries of task `t` to `out`, ending the chain (no next task).
void gen_matmul_regcmd_i4(const Int4TaskDesc& t, uint64_t* out);

}  // namespace ork::npu
