// The CBUF budget of one matmul task: how many of a core's 12 × 32 KiB convolution-buffer banks hold
// the input rows (A) and how many the weights, how many rows one task may take, and the CNA's feature
// grain count — inside the envelope that board-tested generators have verified (docs/hardware.md,
// "CBUF budget"):
//   - data banks = ceil(m·k·elt / 32 KiB), at most 8 for int8 and 10 for fp16
//     (happyme531/rknpu2_matmul_open src/rk_npu_matmul_i8.cpp INT8_M_TILE_BANKS "measured the real
//     correctness/submit boundary at 8 banks"; src/rk_npu_matmul_f16.cpp "at most ten data banks");
//   - weight banks = 12 − data banks, holding at least one 32-kernel weight atom (32·k·elt bytes),
//     or 11 banks when the atom is larger (rk_npu_matmul_f16.cpp weight_banks_for; for int8 this
//     reproduces the board sweeps: 64 rows to K = 4096, 32 to 6144, 16 to 8192);
//   - FEATURE_GRAINS: int8 as rk_npu_matmul_i8.cpp feature_grains_for (30 for K > 4096 with ≥ 16
//     rows, else m + 1 capped near two banks of rows); fp16 m + 1 ("the hardware-validated
//     conservative FC grain count", rk_npu_matmul_f16.cpp).
// Pure functions, thread-safe.
#pragma once

#include <cstdint>

#include "npu/layout.h"

namespace ork::npu {

constexpr uint32_t kCbufBanks = 12;
constexpr uint32_t kCbufBankBytes = 32 * 1024;
constexpr uint32_t kWeightAtomKernels = 32;  // kernels the weight banks must hold at once
constexpr uint32_t kMaxTaskM = 1020;  // CNA_CONV_CON2.FEATURE_GRAINS (10 bits) holds m + 1 for fp16

// ceil(m·k·elt / 32 KiB): banks the task's input rows occupy.
uint32_t input_banks(Dtype d, uint32_t m, uint32_t k);
// Largest data-bank count a task may use: 8 (int8), 10 (fp16).
uint32_t max_data_banks(Dtype d);
// Banks one weight atom (32 kernels of k elements) needs, capped at 11.
uint32_t weight_atom_banks(Dtype d, uint32_t k);
// Whether (m, k) fits: input_banks ≤ max_data_banks and 12 − input_banks ≥ weight_atom_banks.
bool fits_cbuf(Dtype d, uint32_t m, uint32_t k);
// CNA_CONV_CON2.FEATURE_GRAINS for a task of m rows and k columns.
uint32_t feature_grains(Dtype d, uint32_t m, uint32_t k);
// Rows per M tile for a K segment of width ks: the largest valid row count (1, or a multiple of 4,
// at most kMaxTaskM) that fits_cbuf. Always ≥ 1.
int64_t max_m_tile(Dtype d, int64_t ks);

// Test-only fault injection: puts back the generator errors of the first NPU audit, so tests can
// show that the simulator rejects them. Never set outside tests. Not thread-safe (set before use).
struct GeneratorFaults {
  bool chain_amount_52 = false;     // tail amount align((n − 4)/2, 2) (Mesa) instead of the driver's
  bool eleven_data_banks = false;   // row tiles up to 11 data banks, weights get what is left
  int drop_opening_write = -1;      // index 0..3 of an opening write to omit (-1: none)
  bool int8_precision_on_int4 = false;  // int4 tasks announce int8 in CNA/CORE/DPU
};
GeneratorFaults& generator_faults();

}  // namespace ork::npu
