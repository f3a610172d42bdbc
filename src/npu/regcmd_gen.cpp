#include "npu/regcmd_gen.h"

#include <cstdio>

#include "core/checked.h"
#include "core/error.h"

namespace ork::npu {

using reg::Id;
using reg::put;
namespace f = reg::f;

std::string MatmulTaskDesc::str() const {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s m=%u k=%u n=%u a=0x%x b=0x%x c=0x%x", dtype_name(dtype),
                unsigned(m), unsigned(k), unsigned(n), unsigned(a_addr), unsigned(b_addr),
                unsigned(c_addr));
  return buf;
}

void check_task(const MatmulTaskDesc& t) {
  const std::string s = t.str();
  ORK_CHECK(t.m >= 1 && t.m <= kMaxTaskM && (t.m == 1 || t.m % 4 == 0), "matmul task ", s,
            ": m must be 1 or a multiple of 4 in [4, ", kMaxTaskM, "]");
  ORK_CHECK(t.k >= uint32_t(kKAlign) && t.k <= uint32_t(kKSegmentMax) && t.k % kKAlign == 0,
            "matmul task ", s, ": k must be a multiple of 32 in [32, ", kKSegmentMax, "]");
  const uint32_t g = uint32_t(b_n_group(t.dtype));
  ORK_CHECK(t.n >= g && t.n <= kMaxTaskN && t.n % g == 0, "matmul task ", s,
            ": n must be a multiple of ", g, " in [", g, ", ", kMaxTaskN, "]");
  ORK_CHECK(fits_cbuf(t.dtype, t.m, t.k), "matmul task ", s, ": ", input_banks(t.dtype, t.m, t.k),
            " CBUF banks of input (at most ", max_data_banks(t.dtype), ") with ",
            weight_atom_banks(t.dtype, t.k), " banks for a weight atom: outside the board-verified envelope");
  ORK_CHECK(uint64_t(t.a_addr) + t.a_bytes() <= (uint64_t(1) << 32) &&
                uint64_t(t.b_addr) + t.b_bytes() <= (uint64_t(1) << 32) &&
                uint64_t(t.c_addr) + t.c_bytes() <= (uint64_t(1) << 32),
            "matmul task ", s, ": an operand crosses the 4 GiB limit of the address registers");
}

uint32_t cna_line_stride() { return 1 * 4; }
uint32_t cna_surf_stride(uint32_t m) {
  int64_t s = int64_t(cna_line_stride()) * (int64_t(m / 4) - 1);
  if (s < 0) s += 1;
  return uint32_t(s) & 0x0fffffffu;
}
uint32_t cbuf_data_entries(Dtype d, uint32_t k) {
  return uint32_t((uint64_t(k) * elt_bytes(d) + 63) / 64);
}
uint32_t dpu_size_e(Dtype d) { return d == Dtype::kI8 ? 7 : 3; }
uint32_t dpu_surf_add(Dtype d, uint32_t m) { return m * (d == Dtype::kI8 ? 8 : 4); }

void gen_matmul_regcmd(const MatmulTaskDesc& t, uint64_t* out) {
  check_task(t);
  const uint32_t in_prec = t.dtype == Dtype::kI8 ? reg::kPrecisionInt8 : reg::kPrecisionFp16;
  const uint32_t out_prec = t.dtype == Dtype::kI8 ? reg::kPrecisionInt32 : reg::kPrecisionFp32;
  const uint32_t elt = uint32_t(elt_bytes(t.dtype));
  const uint32_t dbanks = input_banks(t.dtype, t.m, t.k);
  const uint32_t cbuf_con0 = put(f::kWeightBank, kCbufBanks - dbanks) | put(f::kDataBank, dbanks);
  const uint32_t conv_con1 =
      put(f::kCnaProcPrecision, in_prec) | put(f::kCnaInPrecision, in_prec) | put(f::kConvMode, 0);
  uint32_t i = 0;
  auto emit = [&](Id id, uint32_t v) { out[i++] = reg::entry(id, v); };

  // Opening writes, before anything starts the CNA: the CBUF split and weight decompression off,
  // then the precision (happyme531 rk_npu_matmul_f16.cpp: "omitting the CBUF/DCOMP preamble ...
  // makes the large-K path depend on prior NPU register state"; Mesa rkt_regcmd.c the same order).
  const std::pair<Id, uint32_t> opening[kOpeningEntries] = {
      {Id::CNA_CBUF_CON0, cbuf_con0}, {Id::CNA_DCOMP_REGNUM, 0}, {Id::CNA_DCOMP_CTRL, 0},
      {Id::CNA_CONV_CON1, conv_con1}};
  for (uint32_t o = 0; o < kOpeningEntries; ++o) {
    if (int(o) == generator_faults().drop_opening_write) {
      out[i++] = 0;  // fault injection: a no-op in its place
    } else {
      emit(opening[o].first, opening[o].second);
    }
  }
  emit(Id::DPU_S_POINTER, put(f::kPointerPpMode, 1) | put(f::kExecuterPpEn, 1) | put(f::kPointerPpEn, 1));
  // CNA: feature (A) and weight (B) fetch, a 1×1 direct convolution of an m×1×k cube.
  emit(Id::CNA_CONV_CON1, conv_con1);
  emit(Id::CNA_CONV_CON2, put(f::kKernelGroup, 0) | put(f::kFeatureGrains, feature_grains(t.dtype, t.m, t.k)));
  emit(Id::CNA_CONV_CON3, put(f::kConvYStride, 1) | put(f::kConvXStride, 1));
  emit(Id::CNA_DATA_SIZE0, put(f::kDatainWidth, 1) | put(f::kDatainHeight, t.m));
  emit(Id::CNA_DATA_SIZE1, put(f::kDatainChannelReal, t.k - 1) | put(f::kDatainChannel, t.k));
  emit(Id::CNA_DATA_SIZE2, put(f::kDataoutWidth, 1));
  emit(Id::CNA_DATA_SIZE3, put(f::kDataoutAtomics, t.m));
  emit(Id::CNA_WEIGHT_SIZE0, put(f::kWeightBytes, uint64_t(t.n) * t.k * elt));
  emit(Id::CNA_WEIGHT_SIZE1, put(f::kWeightBytesPerKernel, uint64_t(t.k) * elt));
  emit(Id::CNA_WEIGHT_SIZE2,
       put(f::kWeightWidth, 1) | put(f::kWeightHeight, 1) | put(f::kWeightKernels, t.n));
  emit(Id::CNA_CBUF_CON0, cbuf_con0);
  emit(Id::CNA_CBUF_CON1, put(f::kDataEntries, cbuf_data_entries(t.dtype, t.k)));
  emit(Id::CNA_CVT_CON0, put(f::kCvtDataSign, 1) | put(f::kCvtType, 1) | put(f::kCvtBypass, 1));
  emit(Id::CNA_CVT_CON1, put(f::kCvtScale0, 1));
  emit(Id::CNA_CVT_CON2, put(f::kCvtScale1, 1));
  emit(Id::CNA_CVT_CON3, put(f::kCvtScale2, 1));
  emit(Id::CNA_CVT_CON4, put(f::kCvtScale3, 1));
  emit(Id::CNA_FC_CON0, 0);
  emit(Id::CNA_FC_CON1, 0);
  emit(Id::CNA_PAD_CON0, 0);
  emit(Id::CNA_FEATURE_DATA_ADDR, put(f::kFeatureBaseAddr, t.a_addr));
  emit(Id::CNA_FC_CON2, 0);
  emit(Id::CNA_DMA_CON0, put(f::kWeightBurstLen, 15) | put(f::kDataBurstLen, 15));
  emit(Id::CNA_DMA_CON1, put(f::kLineStride, cna_line_stride()));
  emit(Id::CNA_DMA_CON2, put(f::kSurfStride, cna_surf_stride(t.m)));
  emit(Id::CNA_FC_DATA_SIZE0, put(f::kDmaWidth, 1) | put(f::kDmaHeight, t.m));
  emit(Id::CNA_FC_DATA_SIZE1, put(f::kDmaChannel, t.k));
  emit(Id::CNA_DCOMP_CTRL, 0);
  emit(Id::CNA_DCOMP_REGNUM, 0);
  emit(Id::CNA_DCOMP_ADDR0, put(f::kDecompressAddr0, t.b_addr));
  for (int a = 0; a < 16; ++a) emit(Id(int(Id::CNA_DCOMP_AMOUNT0) + a), 0);
  emit(Id::CNA_CVT_CON5, 0);
  emit(Id::CNA_PAD_CON1, 0);
  // CORE: the MAC array.
  emit(Id::CORE_MISC_CFG, put(f::kCoreProcPrecision, in_prec) | put(f::kQdEn, 1));
  emit(Id::CORE_DATAOUT_SIZE_0, put(f::kCoreDataoutHeight, t.m - 1) | put(f::kCoreDataoutWidth, 0));
  emit(Id::CORE_DATAOUT_SIZE_1, put(f::kCoreDataoutChannel, t.n - 1));
  emit(Id::CORE_CLIP_TRUNCATE, 0);
  emit(Id::CORE_3030, 0);
  // DPU: every post-processing stage bypassed; the accumulators go to memory as int32 / fp32.
  emit(Id::DPU_FEATURE_MODE_CFG, put(f::kDpuBurstLen, 15) | put(f::kDpuConvMode, 0) |
                                     put(f::kOutputMode, 2) | put(f::kFlyingMode, 0));
  emit(Id::DPU_DATA_FORMAT, put(f::kDpuOutPrecision, out_prec) | put(f::kDpuInPrecision, in_prec) |
                                put(f::kDpuProcPrecision, in_prec));
  emit(Id::DPU_OFFSET_PEND, 0);
  emit(Id::DPU_DST_BASE_ADDR, put(f::kDstBaseAddr, t.c_addr));
  emit(Id::DPU_DST_SURF_STRIDE, put(f::kDstSurfStride, t.m));
  emit(Id::DPU_DATA_CUBE_WIDTH, put(f::kCubeWidth, 0));
  emit(Id::DPU_DATA_CUBE_HEIGHT, put(f::kCubeHeight, t.m - 1));
  emit(Id::DPU_DATA_CUBE_NOTCH_ADDR, 0);
  emit(Id::DPU_DATA_CUBE_CHANNEL, put(f::kCubeOrigChannel, t.n - 1) | put(f::kCubeChannel, t.n - 1));
  emit(Id::DPU_BS_CFG, put(f::kBsReluBypass, 1) | put(f::kBsMulBypass, 1) | put(f::kBsAluBypass, 1) |
                           put(f::kBsBypass, 1));
  emit(Id::DPU_BS_ALU_CFG, 0);
  emit(Id::DPU_BS_MUL_CFG, 0);
  emit(Id::DPU_BS_RELUX_CMP_VALUE, 0);
  const uint32_t se = dpu_size_e(t.dtype);
  emit(Id::DPU_BS_OW_CFG,
       put(f::kSizeE2, se) | put(f::kSizeE1, se) | put(f::kSizeE0, se) | put(f::kOdBypass, 1));
  emit(Id::DPU_BS_OW_OP, 0);
  emit(Id::DPU_WDMA_SIZE_0, put(f::kChannelWdma, t.n - 1));
  emit(Id::DPU_WDMA_SIZE_1, put(f::kHeightWdma, t.m - 1) | put(f::kWidthWdma, 0));
  emit(Id::DPU_BN_CFG, put(f::kBnReluBypass, 1) | put(f::kBnMulBypass, 1) | put(f::kBnAluBypass, 1) |
                           put(f::kBnBypass, 1));
  emit(Id::DPU_BN_ALU_CFG, 0);
  emit(Id::DPU_BN_MUL_CFG, 0);
  emit(Id::DPU_BN_RELUX_CMP_VALUE, 0);
  emit(Id::DPU_EW_CFG, put(f::kEwReluBypass, 1) | put(f::kEwOpCvtBypass, 1) | put(f::kEwLutBypass, 1) |
                           put(f::kEwOpBypass, 1) | put(f::kEwBypass, 1));
  emit(Id::DPU_EW_CVT_OFFSET_VALUE, 0);
  emit(Id::DPU_EW_CVT_SCALE_VALUE, put(f::kEwOpCvtScale, 1));
  emit(Id::DPU_EW_RELUX_CMP_VALUE, 0);
  emit(Id::DPU_OUT_CVT_OFFSET, 0);
  emit(Id::DPU_OUT_CVT_SCALE, put(f::kFp32ToFp16En, 0) | put(f::kOutCvtScale, 1));
  emit(Id::DPU_OUT_CVT_SHIFT, 0);
  for (int a = 0; a < 8; ++a) emit(Id(int(Id::DPU_EW_OP_VALUE_0) + a), 0);
  emit(Id::DPU_SURFACE_ADD, put(f::kSurfAdd, dpu_surf_add(t.dtype, t.m)));
  emit(Id::DPU_40C4, 0);
  for (Id id = Id::DPU_LUT_ACCESS_CFG; id <= Id::DPU_LUT_LO_SLOPE_SHIFT; id = Id(int(id) + 1))
    emit(id, 0);
  // PC tail: [end of chain | next address], amount, pre-enable marker, operation enable.
  out[i++] = 0;
  emit(Id::PC_REGISTER_AMOUNTS, 0);
  out[i++] = reg::encode(reg::kTargetPcPreEnable, 0, 0);
  emit(Id::PC_OPERATION_ENABLE, reg::kOpEnableMatmul);
  ORK_CHECK(i == kMatmulEntries, "gen_matmul_regcmd: emitted ", i, " entries, expected ",
            kMatmulEntries);
}

uint32_t pc_chain_amount(uint32_t next_entries) {
  ORK_CHECK(next_entries > reg::kPcTailEntries, "pc_chain_amount: ", next_entries, " entries");
  if (generator_faults().chain_amount_52) {
    return uint32_t(align_up((next_entries - reg::kPcTailEntries) / 2, 2));
  }
  return (next_entries + 1) / 2 - 1;
}

void chain_regcmd(uint64_t* entries, uint32_t count, uint32_t next_addr, uint32_t next_entries) {
  ORK_CHECK(count > reg::kPcTailEntries, "chain_regcmd: ", count, " entries");
  ORK_CHECK(next_addr % 64 == 0, "chain_regcmd: next regcmd address 0x", std::hex, next_addr,
            " is not 64-byte aligned");
  // PC_SOURCE_ADDR occupies bits 31:4: the register holds the address itself (Mesa writes addr).
  entries[count - 4] = reg::entry(Id::PC_BASE_ADDRESS, next_addr);
  entries[count - 3] =
      reg::entry(Id::PC_REGISTER_AMOUNTS, put(f::kPcDataAmount, pc_chain_amount(next_entries)));
}

}  // namespace ork::npu
