// The CNA → CORE → DPU datapath of one simulated core, for the one operation the public sources
// document: a 1×1 direct convolution of an m×1×k int8 or fp16 input cube with n kernels, written to
// memory as int32 / fp32 (mtx512/rk3588-npu gen_matmul_*, happyme531/rknpu2_matmul_open, Mesa
// rocket). configure() derives the operation from the register file alone — fields as the XML
// describes them — and checks it against the envelope that board-tested code has verified;
// compute() performs it through the address space, reading and writing the native layouts of
// rknn_matmul_api.h. Neither knows ork's generator. Pure functions of their arguments.
#pragma once

#include <cstdint>
#include <string>

#include "npu/sim/address_space.h"
#include "npu/sim/hw_registers.h"

namespace ork::npu::sim {

// CNA state latched when a task first writes CNA_CONV_CON1: the CBUF bank split and weight
// decompression in force for that task. Board-tested multi-task code writes CBUF_CON0, DCOMP_REGNUM
// and DCOMP_CTRL before CONV_CON1 and warns that without them "the large-K path depends on prior NPU
// register state" (happyme531 rk_npu_matmul_f16.cpp); this is the simulator's model of that
// statement: values written after the latch only reach the next task.
struct CnaLatch {
  bool taken = false;
  uint32_t cbuf_con0 = 0, dcomp_regnum = 0, dcomp_ctrl = 0;
  bool cbuf_con0_written = false, dcomp_regnum_written = false, dcomp_ctrl_written = false;
};

struct MatmulConfig {
  bool fp16 = false;        // int8 × int8 → int32, or fp16 × fp16 → fp32
  bool int4 = false;        // int4 × int4 → int16 (fp16 false)
  uint32_t m = 0, k = 0, n = 0;
  uint32_t a = 0, b = 0, c = 0;  // NPU addresses of the input cube, the kernels, the output
  uint32_t data_banks = 0, weight_banks = 0;
  uint64_t macs() const { return uint64_t(m) * k * n; }
  // Bytes of the operands in their native layouts.
  uint64_t a_bytes() const { return int4 ? uint64_t(m) * k / 2 : uint64_t(m) * k * (fp16 ? 2 : 1); }
  uint64_t b_bytes() const { return int4 ? uint64_t(n) * k / 2 : uint64_t(n) * k * (fp16 ? 2 : 1); }
  uint64_t c_bytes() const { return uint64_t(m) * n * (int4 ? 2 : 4); }
};

// Throws Timeout (outside the envelope, or relying on never-written state) or Unmodelled, each
// naming `where` and the register.
MatmulConfig configure(const RegisterFile& regs, const CnaLatch& latch, const std::string& where);

// Runs the operation: int8 products summed exactly in int32 (k ascending); fp16 inputs widened to
// f32 and summed in one f32 accumulator (k ascending; the board's adder order is not documented).
// Operand accesses go through `space` (sim::Fault when unmapped).
void compute(AddressSpace& space, const MatmulConfig& cfg);

// The int4 × int4 → int16 task (matmul_unit_int4.cpp; happyme531 rknpu2_matmul_open make_i4_regs,
// docs/hardware.md "int4 on the RK3588"): configure_int4 is what configure() runs when CNA_CONV_CON1
// announces int4; compute_int4 sums the int4 products exactly and fails the task (Unmodelled) when a
// sum leaves int16 — what the board then writes no public source documents.
MatmulConfig configure_int4(const RegisterFile& regs, const CnaLatch& latch, const std::string& where);
void compute_int4(AddressSpace& space, const MatmulConfig& cfg);

}  // namespace ork::npu::sim
