#include "npu/regcmd_int4.h"

#include <cstdio>

#include "core/error.h"
#include "npu/cbuf_budget.h"
#include "npu/regcmd_gen.h"
#include "npu/registers.h"

namespace ork::npu {

using reg::Id;
using reg::put;
namespace f = reg::f;

std::string Int4TaskDesc::str() const {
  char buf[128];
  std::snprintf(buf, sizeof buf, "i4 m=%u k=%u n=%u a=0x%x b=0x%x c=0x%x", unsigned(m), unsigned(k),
                unsigned(n), unsigned(a_addr), unsigned(b_addr), unsigned(c_addr));
  return buf;
}

uint32_t i4_input_banks(uint32_t m, uint32_t k) {
  const uint64_t bytes = uint64_t(m) * k / 2;
  const uint32_t banks = uint32_t((bytes + kCbufBankBytes - 1) / kCbufBankBytes);
  return banks < 1 ? 1 : banks;
}

void check_task_i4(const Int4TaskDesc& t) {
  const std::string s = t.str();
  ORK_CHECK(t.m >= 1 && t.m <= kI4MaxTaskM, "int4 matmul task ", s, ": m must be in [1, ", kI4MaxTaskM, "]");
  ORK_CHECK(t.k >= 32 && t.k <= kI4MaxTaskK && t.k % 32 == 0, "int4 matmul task ", s,
            ": k must be a multiple of 32 in [32, ", kI4MaxTaskK, "]");
  ORK_CHECK(t.n >= 64 && t.n <= kMaxTaskN && t.n % 64 == 0, "int4 matmul task ", s,
            ": n must be a multiple of 64 in [64, ", kMaxTaskN, "]");
  ORK_CHECK(t.a_addr % 16 == 0 && t.b_addr % 16 == 0 && t.c_addr % 16 == 0, "int4 matmul task ", s,
            ": operand addresses must be 16-byte aligned");
  ORK_CHECK(uint64_t(t.a_addr) + t.a_bytes() <= (uint64_t(1) << 32) &&
                uint64_t(t.b_addr) + t.b_bytes() <= (uint64_t(1) << 32) &&
                uint64_t(t.c_addr) + t.c_bytes() <= (uint64_t(1) << 32),
            "int4 matmul task ", s, ": an operand crosses the 4 GiB limit of the address registers");
}

void gen_matmul_regcmd_i4(const Int4TaskDesc& t, uint64_t* out) {
  check_task_i4(t);
  const bool fault = generator_faults().int8_precision_on_int4;
  const uint32_t prec = fault ? reg::kPrecisionInt8 : reg::kPrecisionInt4;
  const uint32_t out_prec = fault ? reg::kPrecisionInt32 : reg::kPrecisionInt16;
  const uint32_t m = t.m, k = t.k, n = t.n;
  const uint32_t dbanks = i4_input_banks(m, k);
  const uint32_t cbuf_con0 = put(f::kWeightBank, kCbufBanks - dbanks) | put(f::kDataBank, dbanks);
  const uint32_t conv_con1 = put(f::kCnaProcPrecision, prec) | put(f::kCnaInPrecision, prec) | put(f::kConvMode, 0);
  uint32_t i = 0;
  auto emit = [&](Id id, uint32_t v) { out[i++] = reg::entry(id, v); };

  // Opening writes, as for int8 (regcmd_gen.cpp); happyme531's int4 body opens the same way.
  emit(Id::CNA_CBUF_CON0, cbuf_con0);
  emit(Id::CNA_DCOMP_REGNUM, 0);
  emit(Id::CNA_DCOMP_CTRL, 0);
  emit(Id::CNA_CONV_CON1, conv_con1);
  emit(Id::DPU_S_POINTER, put(f::kPointerPpMode, 1) | put(f::kExecuterPpEn, 1) | put(f::kPointerPpEn, 1));
  // CNA: an 1×m×k cube (the rows along the width), 1×1 kernels of k int4 channels.
  emit(Id::CNA_CONV_CON1, conv_con1);
  emit(Id::CNA_CONV_CON2, put(f::kKernelGroup, 0) | put(f::kFeatureGrains, 2));
  emit(Id::CNA_CONV_CON3, put(f::kConvYStride, 1) | put(f::kConvXStride, 1));
  emit(Id::CNA_DATA_SIZE0, put(f::kDatainWidth, m) | put(f::kDatainHeight, 1));
  emit(Id::CNA_DATA_SIZE1, put(f::kDatainChannelReal, k - 1) | put(f::kDatainChannel, k));
  emit(Id::CNA_DATA_SIZE2, put(f::kDataoutWidth, m));
  emit(Id::CNA_DATA_SIZE3, put(f::kDataoutAtomics, m));
  emit(Id::CNA_WEIGHT_SIZE0, put(f::kWeightBytes, uint64_t(n) * k / 2));
  emit(Id::CNA_WEIGHT_SIZE1, put(f::kWeightBytesPerKernel, k / 2));
  emit(Id::CNA_WEIGHT_SIZE2, put(f::kWeightWidth, 1) | put(f::kWeightHeight, 1) | put(f::kWeightKernels, n));
  emit(Id::CNA_CBUF_CON0, cbuf_con0);
  emit(Id::CNA_CBUF_CON1, put(f::kDataEntries, m * ((k + 127) / 128)));
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
  // Stride values of happyme531's int4 task (units undocumented): line 4·m, surface −3·m (28 bits).
  emit(Id::CNA_DMA_CON1, put(f::kLineStride, 4 * m));
  emit(Id::CNA_DMA_CON2, put(f::kSurfStride, uint32_t(-3 * int64_t(m)) & 0x0fffffffu));
  emit(Id::CNA_FC_DATA_SIZE0, put(f::kDmaWidth, m) | put(f::kDmaHeight, 1));
  emit(Id::CNA_FC_DATA_SIZE1, put(f::kDmaChannel, k));
  emit(Id::CNA_DCOMP_CTRL, 0);
  emit(Id::CNA_DCOMP_REGNUM, 0);
  emit(Id::CNA_DCOMP_ADDR0, put(f::kDecompressAddr0, t.b_addr));
  for (int a = 0; a < 16; ++a) emit(Id(int(Id::CNA_DCOMP_AMOUNT0) + a), 0);
  emit(Id::CNA_CVT_CON5, 0);
  emit(Id::CNA_PAD_CON1, 0);
  // CORE: the MAC array in int4.
  emit(Id::CORE_MISC_CFG, put(f::kCoreProcPrecision, prec) | put(f::kQdEn, 1));
  emit(Id::CORE_DATAOUT_SIZE_0, put(f::kCoreDataoutHeight, 0) | put(f::kCoreDataoutWidth, m - 1));
  emit(Id::CORE_DATAOUT_SIZE_1, put(f::kCoreDataoutChannel, n - 1));
  emit(Id::CORE_CLIP_TRUNCATE, 0);
  emit(Id::CORE_3030, 0);
  // DPU: every stage bypassed; int16 sums to memory in (n/8, m, 8).
  emit(Id::DPU_FEATURE_MODE_CFG, put(f::kDpuBurstLen, 15) | put(f::kDpuConvMode, 0) |
                                     put(f::kOutputMode, 2) | put(f::kFlyingMode, 0));
  emit(Id::DPU_DATA_FORMAT, put(f::kDpuOutPrecision, out_prec) | put(f::kDpuInPrecision, prec) |
                                put(f::kDpuProcPrecision, prec));
  emit(Id::DPU_OFFSET_PEND, 0);
  emit(Id::DPU_DST_BASE_ADDR, put(f::kDstBaseAddr, t.c_addr));
  emit(Id::DPU_DST_SURF_STRIDE, put(f::kDstSurfStride, m));
  emit(Id::DPU_DATA_CUBE_WIDTH, put(f::kCubeWidth, m - 1));
  emit(Id::DPU_DATA_CUBE_HEIGHT, put(f::kCubeHeight, 0));
  emit(Id::DPU_DATA_CUBE_NOTCH_ADDR, 0);
  emit(Id::DPU_DATA_CUBE_CHANNEL, put(f::kCubeOrigChannel, n - 1) | put(f::kCubeChannel, n - 1));
  emit(Id::DPU_BS_CFG, put(f::kBsReluBypass, 1) | put(f::kBsMulBypass, 1) | put(f::kBsAluBypass, 1) |
                           put(f::kBsBypass, 1));
  emit(Id::DPU_BS_ALU_CFG, 0);
  emit(Id::DPU_BS_MUL_CFG, 0);
  emit(Id::DPU_BS_RELUX_CMP_VALUE, 0);
  emit(Id::DPU_BS_OW_CFG, put(f::kSizeE2, 7) | put(f::kSizeE1, 7) | put(f::kSizeE0, 7) | put(f::kOdBypass, 1));
  emit(Id::DPU_BS_OW_OP, 0);
  emit(Id::DPU_WDMA_SIZE_0, put(f::kChannelWdma, n - 1));
  emit(Id::DPU_WDMA_SIZE_1, put(f::kHeightWdma, 0) | put(f::kWidthWdma, m - 1));
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
  emit(Id::DPU_SURFACE_ADD, put(f::kSurfAdd, 8 * m));
  emit(Id::DPU_40C4, 0);
  for (Id id = Id::DPU_LUT_ACCESS_CFG; id <= Id::DPU_LUT_LO_SLOPE_SHIFT; id = Id(int(id) + 1)) emit(id, 0);
  // PC tail: end of chain, pre-enable marker, operation enable (chain_regcmd patches the first two).
  out[i++] = 0;
  emit(Id::PC_REGISTER_AMOUNTS, 0);
  out[i++] = reg::encode(reg::kTargetPcPreEnable, 0, 0);
  emit(Id::PC_OPERATION_ENABLE, reg::kOpEnableMatmul);
  ORK_CHECK(i == kMatmulEntries, "gen_matmul_regcmd_i4: emitted ", i, " entries, expected ", kMatmulEntries);
}

}  // namespace ork::npu
