// Register command generation for one matmul task: C (m×n) = A (m×k) · Bᵀ as a 1×1 direct
// convolution (CNA → CORE → DPU → memory): the register values of mtx512/rk3588-npu gen_matmul_task,
// opened by the CBUF/DCOMP writes that board-tested multi-task code emits first (happyme531
// rknpu2_matmul_open, Mesa rocket), inside the board-verified CBUF envelope (cbuf_budget.h), and
// chained with the vendor driver's fetch arithmetic. Every operand of a task is one dense native-layout
// block (layout.h): A (k/C2, m, C2) at a_addr, B (n/G, k/32, G, 32) at b_addr, C (n/4, m, 4) at
// c_addr. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "npu/cbuf_budget.h"
#include "npu/layout.h"
#include "npu/registers.h"

namespace ork::npu {

// The parameters of one matmul task; what the simulator recovers from the registers.
struct MatmulTaskDesc {
  Dtype dtype = Dtype::kI8;
  uint32_t m = 0;  // rows of A and C in this task: 1, or a multiple of 4
  uint32_t k = 0;  // reduction length: a multiple of 32, ≤ kKSegmentMax
  uint32_t n = 0;  // columns of C (kernels): a multiple of b_n_group(dtype)
  uint32_t a_addr = 0, b_addr = 0, c_addr = 0;  // NPU addresses (32-bit registers)

  uint64_t a_bytes() const { return uint64_t(m) * k * elt_bytes(dtype); }
  uint64_t b_bytes() const { return uint64_t(n) * k * elt_bytes(dtype); }
  uint64_t c_bytes() const { return uint64_t(m) * n * 4; }
  std::string str() const;  // "i8 m=4 k=64 n=32 a=0x.. b=0x.. c=0x.."
};

constexpr uint32_t kMaxTaskN = 4096;  // within DPU channel (13 bits) and WEIGHT_KERNELS (14 bits)

// Entries of one matmul task's register commands: 4 opening writes (CNA_CBUF_CON0, CNA_DCOMP_REGNUM,
// CNA_DCOMP_CTRL, CNA_CONV_CON1), the 104 writes of the mtx512 body, and the 4-entry PC tail.
constexpr uint32_t kOpeningEntries = 4;
constexpr uint32_t kMatmulEntries = 112;
// Bytes between consecutive tasks' register commands (64-byte aligned, Mesa rkt_ml.c).
constexpr uint32_t kRegcmdStride = (kMatmulEntries * 8 + 63) / 64 * 64;

// Throws ork::Error naming the violated constraint (alignment, register ranges, the CBUF budget of
// cbuf_budget.h).
void check_task(const MatmulTaskDesc& t);

// Writes the kMatmulEntries entries of task `t` to `out`, ending the chain (no next task).
void gen_matmul_regcmd(const MatmulTaskDesc& t, uint64_t* out);

// PC_REGISTER_AMOUNTS value announcing a next task of `next_entries` entries (tail included): the
// PC then fetches (amount + 1) · 2 entries, so amount = (next_entries + 1)/2 − 1 — the value the
// vendor driver programs for the first task, (regcfg_amount + 4 + 2 − 1)/2 − 1 (rknpu_job.c
// rknpu_job_subcore_commit_pc), and happyme531's board-tested chains ceil(body/2) + 1. 55 for 112.
uint32_t pc_chain_amount(uint32_t next_entries);
// Patches the tail of `entries` (count entries) to continue at `next_addr` with `next_entries`.
void chain_regcmd(uint64_t* entries, uint32_t count, uint32_t next_addr, uint32_t next_entries);

// Register values derived from the dims, as mtx512 computes them (meanings of these formulas are not
// documented; the simulator accepts only these values):
uint32_t cna_line_stride();                  // CNA_DMA_CON1: width·4 with width 1
uint32_t cna_surf_stride(uint32_t m);        // CNA_DMA_CON2: 4·(m/4 − 1), +1 when negative, 28 bits
uint32_t cbuf_data_entries(Dtype d, uint32_t k);  // CNA_CBUF_CON1: ceil(k·elt / 64)
uint32_t dpu_size_e(Dtype d);                // DPU_BS_OW_CFG.SIZE_E_*: 7 (int8), 3 (fp16)
uint32_t dpu_surf_add(Dtype d, uint32_t m);  // DPU_SURFACE_ADD.SURF_ADD: m·8 (int8), m·4 (fp16)

}  // namespace ork::npu
