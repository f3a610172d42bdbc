// Field positions: Mesa registers.xml (see hw_registers.h). Envelope and the values of registers
// whose units no public source documents: cited at each check (docs/hardware.md "The simulator").
#include "npu/sim/matmul_unit.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/fp16.h"
#include "npu/sim/job_failure.h"
#include "npu/sim/register_reader.h"

namespace ork::npu::sim {

namespace {

constexpr uint32_t kBankBytes = 32 * 1024;  // CBUF: 12 banks of 32 KiB per core (mtx512 npu_hw.h)
constexpr uint32_t kBanks = 12;
// Precision codes (mtx512 npu_hw.h precision_*): int8 0, fp16 2, int32 4, fp32 5; int4 6 (happyme531
// rk_npu_i4_regs.cpp: an int4 CONV_CON1 hands the task to configure_int4).
constexpr uint32_t kInt8 = 0, kFp16 = 2, kInt32 = 4, kFp32 = 5, kInt4 = 6;

// CNA_CONV_CON2.FEATURE_GRAINS values board sweeps verified (happyme531 rk_npu_matmul_i8.cpp
// feature_grains_for; rk_npu_matmul_f16.cpp "m+1 is the hardware-validated conservative FC grain
// count").
uint32_t verified_grains(bool fp16, uint32_t m, uint32_t k) {
  if (fp16) return m + 1;
  if (k > 4096 && m >= 16) return 30;
  const uint32_t two_bank_rows = ((2 * kBankBytes + k - 1) / k + 1) & ~1u;
  return std::max<uint32_t>(1, std::min(m + 1, two_bank_rows));
}

}  // namespace

MatmulConfig configure(const RegisterFile& regs, const CnaLatch& latch, const std::string& where) {
  const Reader r(regs, where);
  MatmulConfig cfg;

  // ---- precision and mode: CNA, CORE and DPU must agree ----------------------------------------
  const uint32_t con1 = r(Hw::CNA_CONV_CON1);
  const uint32_t in_prec = bits(con1, {4, 6}), proc = bits(con1, {7, 9});
  if (in_prec == kInt4 && proc == kInt4) return configure_int4(regs, latch, where);
  r.expect_modelled(in_prec == proc && (in_prec == kInt8 || in_prec == kFp16), Hw::CNA_CONV_CON1,
                    "IN_PRECISION/PROC_PRECISION other than int8/int8, fp16/fp16 or int4/int4");
  r.expect_modelled(bits(con1, {0, 3}) == 0, Hw::CNA_CONV_CON1, "CONV_MODE is not direct convolution");
  r.expect_modelled(bits(con1, {12, 16}) == 0 && bits(con1, {29, 30}) == 0, Hw::CNA_CONV_CON1,
                    "ARGB_IN, DECONV, GROUP_LINE_OFF or NONALIGN_DMA set (another input layout)");
  cfg.fp16 = in_prec == kFp16;
  const uint32_t elt = cfg.fp16 ? 2 : 1;
  const uint32_t misc = r(Hw::CORE_MISC_CFG);
  r.expect(bits(misc, {8, 10}) == proc, Hw::CORE_MISC_CFG, "CORE PROC_PRECISION differs from the CNA's");
  r.expect_modelled(bits(misc, {1, 1}) == 0, Hw::CORE_MISC_CFG, "DW_EN (depthwise) set");
  // QD_EN: int8 streams with 1 (mtx512 <= 2e630eb, happyme531, Mesa) and 0 (mtx512 HEAD) both ran on
  // boards; the simulator accepts either.
  const uint32_t fmt = r(Hw::DPU_DATA_FORMAT);
  r.expect(bits(fmt, {26, 28}) == proc && bits(fmt, {0, 2}) == proc, Hw::DPU_DATA_FORMAT,
           "DPU IN/PROC_PRECISION differ from the CNA's");
  r.expect_modelled(bits(fmt, {29, 31}) == (cfg.fp16 ? kFp32 : kInt32), Hw::DPU_DATA_FORMAT,
                    "OUT_PRECISION other than int32 (int8) / fp32 (fp16)");
  r.expect_modelled(bits(fmt, {3, 25}) == 0, Hw::DPU_DATA_FORMAT, "shift or MC_SURF_OUT fields set");

  // ---- dims ------------------------------------------------------------------------------------
  const uint32_t ds0 = r(Hw::CNA_DATA_SIZE0), ds1 = r(Hw::CNA_DATA_SIZE1);
  cfg.m = bits(ds0, {0, 10});
  cfg.k = bits(ds1, {0, 15});
  const uint32_t ws2 = r(Hw::CNA_WEIGHT_SIZE2);
  cfg.n = bits(ws2, {0, 13});
  const uint32_t m = cfg.m, k = cfg.k, n = cfg.n;
  r.expect_modelled(bits(ds0, {16, 26}) == 1, Hw::CNA_DATA_SIZE0, "DATAIN_WIDTH is not 1 (a matmul is an m×1 cube)");
  r.expect(m >= 1, Hw::CNA_DATA_SIZE0, "DATAIN_HEIGHT 0");
  r.expect(bits(ds1, {16, 29}) + 1 == k, Hw::CNA_DATA_SIZE1, "DATAIN_CHANNEL_REAL is not DATAIN_CHANNEL − 1");
  r.expect(bits(r(Hw::CNA_DATA_SIZE2), {0, 10}) == 1, Hw::CNA_DATA_SIZE2, "DATAOUT_WIDTH is not 1");
  const uint32_t ds3 = r(Hw::CNA_DATA_SIZE3);
  r.expect(bits(ds3, {0, 21}) == m && bits(ds3, {22, 23}) == 0, Hw::CNA_DATA_SIZE3,
           "DATAOUT_ATOMICS is not width·height");
  r.expect(bits(ws2, {24, 28}) == 1 && bits(ws2, {16, 20}) == 1, Hw::CNA_WEIGHT_SIZE2, "kernel is not 1×1");
  r.expect(bits(r(Hw::CNA_WEIGHT_SIZE1), {0, 18}) == k * elt, Hw::CNA_WEIGHT_SIZE1,
           str_cat("WEIGHT_BYTES_PER_KERNEL is not k·elt = ", k * elt));
  r.expect(uint64_t(r(Hw::CNA_WEIGHT_SIZE0)) == uint64_t(n) * k * elt, Hw::CNA_WEIGHT_SIZE0,
           str_cat("WEIGHT_BYTES is not n·k·elt = ", uint64_t(n) * k * elt));
  const uint32_t fc0 = r(Hw::CNA_FC_DATA_SIZE0);
  r.expect(bits(fc0, {16, 29}) == 1 && bits(fc0, {0, 10}) == m, Hw::CNA_FC_DATA_SIZE0, "DMA size is not 1×m");
  r.expect(bits(r(Hw::CNA_FC_DATA_SIZE1), {0, 15}) == k, Hw::CNA_FC_DATA_SIZE1, "DMA_CHANNEL is not k");
  const uint32_t out0 = r(Hw::CORE_DATAOUT_SIZE_0);
  r.expect(bits(out0, {16, 31}) + 1 == m && bits(out0, {0, 15}) == 0, Hw::CORE_DATAOUT_SIZE_0,
           "CORE output height/width is not m−1/0");
  r.expect(bits(r(Hw::CORE_DATAOUT_SIZE_1), {0, 15}) + 1 == n, Hw::CORE_DATAOUT_SIZE_1,
           "CORE DATAOUT_CHANNEL is not n−1");
  r.expect(bits(r(Hw::DPU_DATA_CUBE_WIDTH), {0, 12}) == 0, Hw::DPU_DATA_CUBE_WIDTH, "cube width is not 0");
  r.expect(bits(r(Hw::DPU_DATA_CUBE_HEIGHT), {0, 24}) + 1 == m, Hw::DPU_DATA_CUBE_HEIGHT, "cube height is not m−1");
  const uint32_t ch = r(Hw::DPU_DATA_CUBE_CHANNEL);
  r.expect(bits(ch, {0, 12}) + 1 == n && bits(ch, {16, 28}) + 1 == n, Hw::DPU_DATA_CUBE_CHANNEL,
           "cube channels are not n−1");
  r.expect(r(Hw::DPU_DATA_CUBE_NOTCH_ADDR) == 0, Hw::DPU_DATA_CUBE_NOTCH_ADDR,
           "a notch (row-major output) instead of the native (N/4, M, 4) layout");
  const uint32_t w0 = r(Hw::DPU_WDMA_SIZE_0), w1 = r(Hw::DPU_WDMA_SIZE_1);
  r.expect(bits(w0, {0, 12}) + 1 == n && bits(w0, {13, 31}) == 0, Hw::DPU_WDMA_SIZE_0, "WDMA channels are not n−1");
  r.expect(bits(w1, {16, 28}) + 1 == m && bits(w1, {0, 12}) == 0, Hw::DPU_WDMA_SIZE_1, "WDMA height/width are not m−1/0");

  // ---- the board-verified envelope ---------------------------------------------------------------
  // rknn_matmul_api.h (RK3588): K aligned to 32, N to 32 (int8) / 16 (fp16), B in K segments of
  // 8192; mtx512 tests: M = 1 or a multiple of 4; N ≤ 4096 per task (mtx512's largest).
  r.expect(k >= 32 && k % 32 == 0 && k <= 8192, Hw::CNA_DATA_SIZE1, "k is not a multiple of 32 in [32, 8192]");
  r.expect(n % (cfg.fp16 ? 16 : 32) == 0 && n >= 16 && n <= 4096, Hw::CNA_WEIGHT_SIZE2,
           "n is not aligned to the kernel group or exceeds 4096");
  r.expect((m == 1 || m % 4 == 0) && m <= 1020, Hw::CNA_DATA_SIZE0, "m is not 1 or a multiple of 4 up to 1020");
  // CBUF: the split latched at the task's first CONV_CON1 (CnaLatch).
  if (!latch.taken) throw Timeout(str_cat(where, ": CNA_CONV_CON1 was never written in this task"));
  if (!latch.cbuf_con0_written || !latch.dcomp_regnum_written || !latch.dcomp_ctrl_written) {
    throw Timeout(str_cat(where, ": CNA_CONV_CON1 latched a CBUF/DCOMP state nothing had written (",
                          !latch.cbuf_con0_written ? "CNA_CBUF_CON0" : !latch.dcomp_regnum_written
                              ? "CNA_DCOMP_REGNUM" : "CNA_DCOMP_CTRL",
                          "): the opening writes must precede CONV_CON1"));
  }
  r.expect_modelled(latch.dcomp_ctrl == 0 && latch.dcomp_regnum == 0, Hw::CNA_DCOMP_CTRL,
                    "weight decompression enabled when CONV_CON1 latched the CNA");
  cfg.data_banks = bits(latch.cbuf_con0, {0, 3});
  cfg.weight_banks = bits(latch.cbuf_con0, {4, 7});
  const std::string banks = str_cat(" (data ", cfg.data_banks, ", weight ", cfg.weight_banks,
                                    " banks latched at CONV_CON1)");
  r.expect_modelled(bits(latch.cbuf_con0, {8, 13}) == 0, Hw::CNA_CBUF_CON0, "DATA_REUSE/WEIGHT_REUSE/FC_DATA_BANK set");
  const uint32_t need = uint32_t((uint64_t(m) * k * elt + kBankBytes - 1) / kBankBytes);
  r.expect(cfg.data_banks >= need, Hw::CNA_CBUF_CON0,
           str_cat("the input needs ", need, " data banks", banks));
  r.expect(cfg.data_banks + cfg.weight_banks <= kBanks, Hw::CNA_CBUF_CON0, "more than 12 banks" + banks);
  // happyme531: int8 "measured the real correctness/submit boundary at 8 banks"; fp16 "at most ten
  // data banks" (11 "submit-fail"s); the weight banks hold one 32-kernel atom (at most 11 banks).
  const uint32_t max_data = cfg.fp16 ? 10 : 8;
  r.expect(cfg.data_banks <= max_data, Hw::CNA_CBUF_CON0,
           str_cat("more than ", max_data, " data banks: outside the board-verified envelope", banks));
  const uint32_t atom = std::min<uint32_t>(uint32_t((uint64_t(32) * k * elt + kBankBytes - 1) / kBankBytes), 11);
  r.expect(cfg.weight_banks >= atom, Hw::CNA_CBUF_CON0,
           str_cat("a 32-kernel weight atom needs ", atom, " weight banks", banks));
  r.expect(bits(r(Hw::CNA_CBUF_CON1), {0, 13}) == (k * elt + 63) / 64, Hw::CNA_CBUF_CON1,
           "DATA_ENTRIES is not ceil(k·elt / 64)");
  const uint32_t con2 = r(Hw::CNA_CONV_CON2);
  r.expect(bits(con2, {4, 13}) == verified_grains(cfg.fp16, m, k), Hw::CNA_CONV_CON2,
           str_cat("FEATURE_GRAINS other than the board-verified ", verified_grains(cfg.fp16, m, k)));
  r.expect_modelled(bits(con2, {16, 23}) == 0 && bits(con2, {0, 2}) == 0, Hw::CNA_CONV_CON2,
                    "KERNEL_GROUP or CSC/FIFO control bits set");
  const uint32_t con3 = r(Hw::CNA_CONV_CON3);
  r.expect_modelled(bits(con3, {0, 2}) == 1 && bits(con3, {3, 5}) == 1 && bits(con3, {6, 30}) == 0,
                    Hw::CNA_CONV_CON3, "strides other than 1, or dilation/deconvolution/NN mode");

  // ---- input path: no conversion, padding or skipping ---------------------------------------------
  const uint32_t cvt = r(Hw::CNA_CVT_CON0);
  r.expect_modelled(bits(cvt, {0, 0}) == 1 && (cfg.fp16 || bits(cvt, {3, 3}) == 1), Hw::CNA_CVT_CON0,
                    "input conversion not bypassed, or int8 data not signed");
  r.expect_modelled(bits(r(Hw::CNA_FC_CON0), {0, 0}) == 0, Hw::CNA_FC_CON0, "FC_SKIP_EN set");
  r.expect_modelled(r(Hw::CNA_FC_CON1) == 0 && r(Hw::CNA_FC_CON2) == 0, Hw::CNA_FC_CON1, "data/weight offsets set");
  r.expect_modelled(r(Hw::CNA_PAD_CON0) == 0, Hw::CNA_PAD_CON0, "padding set");
  r.expect_modelled(r(Hw::CNA_CVT_CON5) == 0, Hw::CNA_CVT_CON5, "per-channel conversion set");
  // Stride registers: units undocumented; the values mtx512 gen_matmul_* wrote for a dense cube
  // (line_stride = width·4, surf_stride = line_stride·(height/4 − 1), +1 when negative).
  r.expect(bits(r(Hw::CNA_DMA_CON1), {0, 27}) == 4, Hw::CNA_DMA_CON1, "LINE_STRIDE other than the dense-cube 4");
  const int64_t surf = int64_t(4) * (int64_t(m / 4) - 1);
  const uint32_t want_surf = uint32_t(surf < 0 ? surf + 1 : surf) & 0x0fffffffu;
  r.expect(bits(r(Hw::CNA_DMA_CON2), {0, 27}) == want_surf, Hw::CNA_DMA_CON2,
           str_cat("SURF_STRIDE other than the dense-cube ", hex(want_surf)));
  // ---- CORE and DPU: every post-processing stage bypassed, int32/fp32 straight to memory ---------
  r.expect_modelled(bits(r(Hw::CORE_CLIP_TRUNCATE), {0, 6}) == 0, Hw::CORE_CLIP_TRUNCATE, "truncation set");
  r.expect(r(Hw::CORE_3030) == 0, Hw::CORE_3030, "undocumented register: every source writes 0");
  r.expect(r(Hw::DPU_S_POINTER) == 0xe, Hw::DPU_S_POINTER, "other than the board-tested 0xE");
  const uint32_t mode = r(Hw::DPU_FEATURE_MODE_CFG);
  r.expect_modelled(bits(mode, {1, 2}) == 2 && bits(mode, {0, 0}) == 0 && bits(mode, {3, 4}) == 0 &&
                        bits(mode, {9, 31}) == 0,
                    Hw::DPU_FEATURE_MODE_CFG, "not direct-convolution output to memory");
  r.expect_modelled(bits(r(Hw::DPU_BS_CFG), {0, 0}) == 1, Hw::DPU_BS_CFG, "BS stage not bypassed");
  r.expect_modelled(bits(r(Hw::DPU_BN_CFG), {0, 0}) == 1, Hw::DPU_BN_CFG, "BN stage not bypassed");
  r.expect_modelled(bits(r(Hw::DPU_EW_CFG), {0, 0}) == 1, Hw::DPU_EW_CFG, "EW stage not bypassed");
  r.expect_modelled(r(Hw::DPU_OUT_CVT_OFFSET) == 0 && r(Hw::DPU_OUT_CVT_SHIFT) == 0, Hw::DPU_OUT_CVT_SHIFT,
                    "output offset or shift set");
  r.expect_modelled(r(Hw::DPU_OUT_CVT_SCALE) == 1, Hw::DPU_OUT_CVT_SCALE, "output scale not 1, or fp32→fp16 on");
  r.expect_modelled(r(Hw::DPU_OFFSET_PEND) == 0 && r(Hw::DPU_BS_OW_OP) == 0, Hw::DPU_OFFSET_PEND,
                    "offset pending or OW_OP set");
  // SIZE_E (units undocumented): 7 for int8 processing, 3 for fp16 → fp32 (mtx512; happyme531 int8
  // also 7); OD_BYPASS 1 (mtx512) or 0 (happyme531) both ran on boards.
  const uint32_t ow = r(Hw::DPU_BS_OW_CFG), se = cfg.fp16 ? 3 : 7;
  r.expect(bits(ow, {2, 4}) == se && bits(ow, {5, 7}) == se && bits(ow, {8, 10}) == se &&
               bits(ow, {0, 0}) == 0 && bits(ow, {11, 31}) == 0,
           Hw::DPU_BS_OW_CFG, str_cat("SIZE_E other than the board-tested ", se));
  // Output surfaces: DST_SURF_STRIDE in 16-byte units = one (M, 4) surface of 4-byte outputs.
  r.expect(bits(r(Hw::DPU_DST_SURF_STRIDE), {4, 31}) == m, Hw::DPU_DST_SURF_STRIDE,
           "not one m-row surface (the native (N/4, M, 4) output)");
  r.expect(bits(r(Hw::DPU_SURFACE_ADD), {4, 31}) == m * (cfg.fp16 ? 4 : 8), Hw::DPU_SURFACE_ADD,
           "other than mtx512's m·8 (int8) / m·4 (fp16)");
  r.expect(r(Hw::DPU_40C4) == 0, Hw::DPU_40C4, "undocumented register: every source writes 0");

  cfg.a = r(Hw::CNA_FEATURE_DATA_ADDR);
  cfg.b = r(Hw::CNA_DCOMP_ADDR0);
  cfg.c = r(Hw::DPU_DST_BASE_ADDR);
  // TRM: the low 4 bits of the DMA address registers are read-only: 16-byte aligned operands.
  r.expect(cfg.a % 16 == 0, Hw::CNA_FEATURE_DATA_ADDR, "not 16-byte aligned");
  r.expect(cfg.b % 16 == 0, Hw::CNA_DCOMP_ADDR0, "not 16-byte aligned");
  r.expect(cfg.c % 16 == 0, Hw::DPU_DST_BASE_ADDR, "not 16-byte aligned");
  return cfg;
}

namespace {

// Native layouts (rknn_matmul_api.h, RK3588): A (K/C2, M, C2) with C2 = 16 int8 / 8 fp16;
// B (N/G, K/32, G, 32) with G = 32 int8 / 16 fp16; C (N/4, M, 4) of 4-byte outputs.
uint64_t a_at(const MatmulConfig& c, uint32_t row, uint32_t col) {
  const uint32_t c2 = c.fp16 ? 8 : 16;
  return (uint64_t(col / c2) * c.m * c2 + uint64_t(row) * c2 + col % c2);
}
uint64_t b_at(const MatmulConfig& c, uint32_t kernel, uint32_t col) {
  const uint32_t g = c.fp16 ? 16 : 32;
  return uint64_t(kernel / g) * g * c.k + uint64_t(col / 32) * g * 32 + uint64_t(kernel % g) * 32 + col % 32;
}
uint64_t c_at(const MatmulConfig& c, uint32_t row, uint32_t kernel) {
  return uint64_t(kernel / 4) * c.m * 4 + uint64_t(row) * 4 + kernel % 4;
}

}  // namespace

void compute(AddressSpace& space, const MatmulConfig& cfg) {
  if (cfg.int4) return compute_int4(space, cfg);
  const uint64_t elt = cfg.fp16 ? 2 : 1;
  const uint8_t* a = space.resolve(cfg.a, uint64_t(cfg.m) * cfg.k * elt);
  const uint8_t* b = space.resolve(cfg.b, uint64_t(cfg.n) * cfg.k * elt);
  uint8_t* c = space.resolve(cfg.c, uint64_t(cfg.m) * cfg.n * 4);
  const uint32_t m = cfg.m, k = cfg.k, n = cfg.n;
  // Row-major copies so the inner loop is a contiguous dot product.
  std::vector<float> af, bf;
  std::vector<int8_t> ai, bi;
  if (cfg.fp16) {
    af.resize(size_t(m) * k), bf.resize(size_t(n) * k);
    auto half = [](const uint8_t* p, uint64_t i) {
      uint16_t h;
      std::memcpy(&h, p + i * 2, 2);
      return f16_to_f32(h);
    };
    for (uint32_t i = 0; i < m; ++i)
      for (uint32_t j = 0; j < k; ++j) af[size_t(i) * k + j] = half(a, a_at(cfg, i, j));
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t j = 0; j < k; ++j) bf[size_t(i) * k + j] = half(b, b_at(cfg, i, j));
  } else {
    ai.resize(size_t(m) * k), bi.resize(size_t(n) * k);
    for (uint32_t i = 0; i < m; ++i)
      for (uint32_t j = 0; j < k; ++j) ai[size_t(i) * k + j] = int8_t(a[a_at(cfg, i, j)]);
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t j = 0; j < k; ++j) bi[size_t(i) * k + j] = int8_t(b[b_at(cfg, i, j)]);
  }
  for (uint32_t i = 0; i < m; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      uint32_t bits32;
      if (cfg.fp16) {
        const float* x = af.data() + size_t(i) * k;
        const float* y = bf.data() + size_t(j) * k;
        float s = 0.0f;
        for (uint32_t t = 0; t < k; ++t) s += x[t] * y[t];
        std::memcpy(&bits32, &s, 4);
      } else {
        const int8_t* x = ai.data() + size_t(i) * k;
        const int8_t* y = bi.data() + size_t(j) * k;
        int32_t s = 0;
        for (uint32_t t = 0; t < k; ++t) s += int32_t(x[t]) * int32_t(y[t]);
        std::memcpy(&bits32, &s, 4);
      }
      std::memcpy(c + c_at(cfg, i, j) * 4, &bits32, 4);
    }
  }
}

}  // namespace ork::npu::sim
