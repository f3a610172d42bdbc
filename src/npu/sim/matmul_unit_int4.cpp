// The int4 × int4 → int16 datapath. Every value checked below is the one happyme531/
// rknpu2_matmul_open (dac239c5, src/rk_npu_i4_regs.cpp make_i4_regs, "native" input layout) wrote
// in int4 tasks it ran on RK3588 boards; field positions from Mesa registers.xml (hw_registers.h);
// layouts from rknn_matmul_api.h and happyme531 rk_npu_i4_cpu.cpp. Entered here without reference
// to ork's generator (regcmd_int4.cpp, layout_int4.h).
#include <cstring>
#include <vector>

#include "npu/sim/matmul_unit.h"
#include "npu/sim/register_reader.h"

namespace ork::npu::sim {

namespace {

constexpr uint32_t kBankBytes = 32 * 1024, kBanks = 12;
constexpr uint32_t kInt4 = 6, kInt16 = 1;  // precision codes of happyme531's int4 tasks

}  // namespace

MatmulConfig configure_int4(const RegisterFile& regs, const CnaLatch& latch, const std::string& where) {
  const Reader r(regs, where);
  MatmulConfig cfg;
  cfg.int4 = true;

  // ---- precision: CNA, CORE and DPU all int4, the DPU writing int16 ------------------------------
  const uint32_t con1 = r(Hw::CNA_CONV_CON1);
  r.expect_modelled(bits(con1, {0, 3}) == 0, Hw::CNA_CONV_CON1, "CONV_MODE is not direct convolution");
  r.expect_modelled(bits(con1, {12, 16}) == 0 && bits(con1, {29, 30}) == 0, Hw::CNA_CONV_CON1,
                    "ARGB_IN, DECONV, GROUP_LINE_OFF (the Panel8 input) or NONALIGN_DMA set");
  const uint32_t misc = r(Hw::CORE_MISC_CFG);
  r.expect(bits(misc, {8, 10}) == kInt4, Hw::CORE_MISC_CFG, "CORE PROC_PRECISION is not the CNA's int4");
  r.expect_modelled(bits(misc, {1, 1}) == 0, Hw::CORE_MISC_CFG, "DW_EN (depthwise) set");
  const uint32_t fmt = r(Hw::DPU_DATA_FORMAT);
  r.expect(bits(fmt, {26, 28}) == kInt4 && bits(fmt, {0, 2}) == kInt4, Hw::DPU_DATA_FORMAT,
           "DPU IN/PROC_PRECISION are not the CNA's int4");
  r.expect_modelled(bits(fmt, {29, 31}) == kInt16, Hw::DPU_DATA_FORMAT, "OUT_PRECISION other than int16 for int4");
  r.expect_modelled(bits(fmt, {3, 25}) == 0, Hw::DPU_DATA_FORMAT, "shift or MC_SURF_OUT fields set");

  // ---- dims: an 1×m×k cube (rows along the width), n 1×1 kernels -------------------------------
  const uint32_t ds0 = r(Hw::CNA_DATA_SIZE0), ds1 = r(Hw::CNA_DATA_SIZE1);
  cfg.m = bits(ds0, {16, 26});
  cfg.k = bits(ds1, {0, 15});
  const uint32_t ws2 = r(Hw::CNA_WEIGHT_SIZE2);
  cfg.n = bits(ws2, {0, 13});
  const uint32_t m = cfg.m, k = cfg.k, n = cfg.n;
  r.expect_modelled(bits(ds0, {0, 10}) == 1, Hw::CNA_DATA_SIZE0,
                    "DATAIN_HEIGHT is not 1 (an int4 matmul is a 1-high cube of width m)");
  r.expect(m >= 1, Hw::CNA_DATA_SIZE0, "DATAIN_WIDTH 0");
  r.expect(bits(ds1, {16, 29}) + 1 == k, Hw::CNA_DATA_SIZE1, "DATAIN_CHANNEL_REAL is not DATAIN_CHANNEL − 1");
  r.expect(bits(r(Hw::CNA_DATA_SIZE2), {0, 10}) == m, Hw::CNA_DATA_SIZE2, "DATAOUT_WIDTH is not m");
  const uint32_t ds3 = r(Hw::CNA_DATA_SIZE3);
  r.expect(bits(ds3, {0, 21}) == m && bits(ds3, {22, 23}) == 0, Hw::CNA_DATA_SIZE3, "DATAOUT_ATOMICS is not m");
  r.expect(bits(ws2, {24, 28}) == 1 && bits(ws2, {16, 20}) == 1, Hw::CNA_WEIGHT_SIZE2, "kernel is not 1×1");
  r.expect(bits(r(Hw::CNA_WEIGHT_SIZE1), {0, 18}) == k / 2, Hw::CNA_WEIGHT_SIZE1,
           str_cat("WEIGHT_BYTES_PER_KERNEL is not k/2 = ", k / 2));
  r.expect(uint64_t(r(Hw::CNA_WEIGHT_SIZE0)) == uint64_t(n) * k / 2, Hw::CNA_WEIGHT_SIZE0,
           str_cat("WEIGHT_BYTES is not n·k/2 = ", uint64_t(n) * k / 2));
  const uint32_t fc0 = r(Hw::CNA_FC_DATA_SIZE0);
  r.expect(bits(fc0, {16, 29}) == m && bits(fc0, {0, 10}) == 1, Hw::CNA_FC_DATA_SIZE0, "DMA size is not m×1");
  r.expect(bits(r(Hw::CNA_FC_DATA_SIZE1), {0, 15}) == k, Hw::CNA_FC_DATA_SIZE1, "DMA_CHANNEL is not k");
  const uint32_t out0 = r(Hw::CORE_DATAOUT_SIZE_0);
  r.expect(bits(out0, {16, 31}) == 0 && bits(out0, {0, 15}) + 1 == m, Hw::CORE_DATAOUT_SIZE_0,
           "CORE output height/width is not 0/m−1");
  r.expect(bits(r(Hw::CORE_DATAOUT_SIZE_1), {0, 15}) + 1 == n, Hw::CORE_DATAOUT_SIZE_1,
           "CORE DATAOUT_CHANNEL is not n−1");
  r.expect(bits(r(Hw::DPU_DATA_CUBE_WIDTH), {0, 12}) + 1 == m, Hw::DPU_DATA_CUBE_WIDTH, "cube width is not m−1");
  r.expect(bits(r(Hw::DPU_DATA_CUBE_HEIGHT), {0, 24}) == 0, Hw::DPU_DATA_CUBE_HEIGHT, "cube height is not 0");
  const uint32_t ch = r(Hw::DPU_DATA_CUBE_CHANNEL);
  r.expect(bits(ch, {0, 12}) + 1 == n && bits(ch, {16, 28}) + 1 == n, Hw::DPU_DATA_CUBE_CHANNEL,
           "cube channels are not n−1");
  r.expect(r(Hw::DPU_DATA_CUBE_NOTCH_ADDR) == 0, Hw::DPU_DATA_CUBE_NOTCH_ADDR, "a notch instead of the native output");
  const uint32_t w0 = r(Hw::DPU_WDMA_SIZE_0), w1 = r(Hw::DPU_WDMA_SIZE_1);
  r.expect(bits(w0, {0, 12}) + 1 == n && bits(w0, {13, 31}) == 0, Hw::DPU_WDMA_SIZE_0, "WDMA channels are not n−1");
  r.expect(bits(w1, {16, 28}) == 0 && bits(w1, {0, 12}) + 1 == m, Hw::DPU_WDMA_SIZE_1,
           "WDMA height/width are not 0/m−1");

  // ---- the envelope of happyme531's int4 task ----------------------------------------------------
  // m ≤ 128 rows in the native input layout; k a multiple of 32 up to 2048 (I4_K_TILE_MAX, "≤ 128 KiB
  // packed A per task"); n a multiple of 64 (the int4 kernel group) up to 4096.
  r.expect(k >= 32 && k % 32 == 0 && k <= 2048, Hw::CNA_DATA_SIZE1, "k is not a multiple of 32 in [32, 2048]");
  r.expect(n >= 64 && n % 64 == 0 && n <= 4096, Hw::CNA_WEIGHT_SIZE2,
           "n is not a multiple of the int4 kernel group 64 in [64, 4096]");
  r.expect(m <= 128, Hw::CNA_DATA_SIZE0, "more than 128 rows in the native int4 input layout");
  if (!latch.taken) throw Timeout(str_cat(where, ": CNA_CONV_CON1 was never written in this task"));
  if (!latch.cbuf_con0_written || !latch.dcomp_regnum_written || !latch.dcomp_ctrl_written) {
    throw Timeout(str_cat(where, ": CNA_CONV_CON1 latched a CBUF/DCOMP state nothing had written: the "
                          "opening writes must precede CONV_CON1"));
  }
  r.expect_modelled(latch.dcomp_ctrl == 0 && latch.dcomp_regnum == 0, Hw::CNA_DCOMP_CTRL,
                    "weight decompression enabled when CONV_CON1 latched the CNA");
  cfg.data_banks = bits(latch.cbuf_con0, {0, 3});
  cfg.weight_banks = bits(latch.cbuf_con0, {4, 7});
  r.expect_modelled(bits(latch.cbuf_con0, {8, 13}) == 0, Hw::CNA_CBUF_CON0, "DATA_REUSE/WEIGHT_REUSE/FC_DATA_BANK set");
  uint32_t need = uint32_t((uint64_t(m) * k / 2 + kBankBytes - 1) / kBankBytes);
  if (need < 1) need = 1;
  r.expect(cfg.data_banks == need && cfg.weight_banks == kBanks - need, Hw::CNA_CBUF_CON0,
           str_cat("not happyme531's int4 split of ", need, " data and ", kBanks - need, " weight banks (latched ",
                   cfg.data_banks, "/", cfg.weight_banks, " at CONV_CON1)"));
  r.expect(bits(r(Hw::CNA_CBUF_CON1), {0, 13}) == m * ((k + 127) / 128), Hw::CNA_CBUF_CON1,
           "DATA_ENTRIES is not m·ceil(k/128)");
  const uint32_t con2 = r(Hw::CNA_CONV_CON2);
  r.expect(bits(con2, {4, 13}) == 2, Hw::CNA_CONV_CON2, "FEATURE_GRAINS other than the board-run 2 of int4 tasks");
  r.expect_modelled(bits(con2, {16, 23}) == 0 && bits(con2, {0, 2}) == 0, Hw::CNA_CONV_CON2,
                    "KERNEL_GROUP or CSC/FIFO control bits set");
  const uint32_t con3 = r(Hw::CNA_CONV_CON3);
  r.expect_modelled(bits(con3, {0, 2}) == 1 && bits(con3, {3, 5}) == 1 && bits(con3, {6, 30}) == 0,
                    Hw::CNA_CONV_CON3, "strides other than 1, or dilation/deconvolution/NN mode");

  // ---- input path ----------------------------------------------------------------------------------
  const uint32_t cvt = r(Hw::CNA_CVT_CON0);
  r.expect_modelled(bits(cvt, {0, 0}) == 1 && bits(cvt, {3, 3}) == 1, Hw::CNA_CVT_CON0,
                    "input conversion not bypassed, or int4 data not signed");
  r.expect_modelled(bits(r(Hw::CNA_FC_CON0), {0, 0}) == 0, Hw::CNA_FC_CON0, "FC_SKIP_EN set");
  r.expect_modelled(r(Hw::CNA_FC_CON1) == 0 && r(Hw::CNA_FC_CON2) == 0, Hw::CNA_FC_CON1, "data/weight offsets set");
  r.expect_modelled(r(Hw::CNA_PAD_CON0) == 0, Hw::CNA_PAD_CON0, "padding set");
  r.expect_modelled(r(Hw::CNA_CVT_CON5) == 0, Hw::CNA_CVT_CON5, "per-channel conversion set");
  // Strides (units undocumented): happyme531's int4 values, line 4·m and surface −3·m in 28 bits.
  r.expect(bits(r(Hw::CNA_DMA_CON1), {0, 27}) == 4 * m, Hw::CNA_DMA_CON1, "LINE_STRIDE other than the int4 4·m");
  const uint32_t want_surf = uint32_t(-3 * int64_t(m)) & 0x0fffffffu;
  r.expect(bits(r(Hw::CNA_DMA_CON2), {0, 27}) == want_surf, Hw::CNA_DMA_CON2,
           str_cat("SURF_STRIDE other than the int4 ", hex(want_surf)));

  // ---- CORE and DPU: post-processing bypassed, int16 to memory ------------------------------------
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
  // BS_OW_CFG 0x7FE in happyme531's int4 tasks: SIZE_E 7 (×3), OD_BYPASS 1.
  const uint32_t ow = r(Hw::DPU_BS_OW_CFG);
  r.expect(bits(ow, {2, 4}) == 7 && bits(ow, {5, 7}) == 7 && bits(ow, {8, 10}) == 7 && bits(ow, {0, 0}) == 0 &&
               bits(ow, {11, 31}) == 0,
           Hw::DPU_BS_OW_CFG, "SIZE_E other than the board-run 7");
  // DST_SURF_STRIDE in 16-byte units = one (m, 8) surface of int16 outputs; SURF_ADD 8·m (0x80·m).
  r.expect(bits(r(Hw::DPU_DST_SURF_STRIDE), {4, 31}) == m, Hw::DPU_DST_SURF_STRIDE,
           "not one m-row surface (the native (N/8, M, 8) int16 output)");
  r.expect(bits(r(Hw::DPU_SURFACE_ADD), {4, 31}) == 8 * m, Hw::DPU_SURFACE_ADD, "other than the int4 task's 8·m");
  r.expect(r(Hw::DPU_40C4) == 0, Hw::DPU_40C4, "undocumented register: every source writes 0");

  cfg.a = r(Hw::CNA_FEATURE_DATA_ADDR);
  cfg.b = r(Hw::CNA_DCOMP_ADDR0);
  cfg.c = r(Hw::DPU_DST_BASE_ADDR);
  r.expect(cfg.a % 16 == 0, Hw::CNA_FEATURE_DATA_ADDR, "not 16-byte aligned");
  r.expect(cfg.b % 16 == 0, Hw::CNA_DCOMP_ADDR0, "not 16-byte aligned");
  r.expect(cfg.c % 16 == 0, Hw::DPU_DST_BASE_ADDR, "not 16-byte aligned");
  return cfg;
}

namespace {

// Two's-complement int4 in one nibble; the even column of a pair sits in the HIGH nibble
// (happyme531 rk_npu_i4_pack_a_tile: "even element in HIGH nibble").
int nibble(const uint8_t* p, uint64_t byte, uint32_t col) {
  const int v = (col % 2 == 0) ? p[byte] >> 4 : p[byte] & 15;
  return v >= 8 ? v - 16 : v;
}
// A (K/32, M, 32) and B (N/64, K/32, 64, 32), 16 bytes per 32 codes (rknn_matmul_api.h).
uint64_t a_byte(const MatmulConfig& c, uint32_t row, uint32_t col) {
  return (uint64_t(col / 32) * c.m + row) * 16 + (col % 32) / 2;
}
uint64_t b_byte(const MatmulConfig& c, uint32_t kernel, uint32_t col) {
  return ((uint64_t(kernel / 64) * (c.k / 32) + col / 32) * 64 + kernel % 64) * 16 + (col % 32) / 2;
}
// C (N/8, M, 8) int16.
uint64_t c_at(const MatmulConfig& c, uint32_t row, uint32_t kernel) {
  return uint64_t(kernel / 8) * c.m * 8 + uint64_t(row) * 8 + kernel % 8;
}

}  // namespace

void compute_int4(AddressSpace& space, const MatmulConfig& cfg) {
  const uint32_t m = cfg.m, k = cfg.k, n = cfg.n;
  const uint8_t* a = space.resolve(cfg.a, cfg.a_bytes());
  const uint8_t* b = space.resolve(cfg.b, cfg.b_bytes());
  uint8_t* c = space.resolve(cfg.c, cfg.c_bytes());
  std::vector<int8_t> ai(size_t(m) * k), bi(size_t(n) * k);
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t t = 0; t < k; ++t) ai[size_t(i) * k + t] = int8_t(nibble(a, a_byte(cfg, i, t), t));
  for (uint32_t j = 0; j < n; ++j)
    for (uint32_t t = 0; t < k; ++t) bi[size_t(j) * k + t] = int8_t(nibble(b, b_byte(cfg, j, t), t));
  std::vector<int16_t> out(size_t(m) * n);
  for (uint32_t i = 0; i < m; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      int32_t s = 0;
      for (uint32_t t = 0; t < k; ++t) s += int32_t(ai[size_t(i) * k + t]) * bi[size_t(j) * k + t];
      if (s < -32768 || s > 32767) {
        throw Unmodelled(str_cat("int4 task m=", m, " k=", k, " n=", n, ": int16 overflow: row ", i, ", kernel ", j,
                                 " sums to ", s, "; what the board writes then is undocumented (happyme531 "
                                 "calls it saturation): a K chunk must never be able to overflow"));
      }
      out[c_at(cfg, i, j)] = int16_t(s);
    }
  }
  std::memcpy(c, out.data(), out.size() * 2);
}

}  // namespace ork::npu::sim
