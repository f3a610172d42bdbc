// The RK3588 NPU registers that ork writes: ONE table (block target, offset, name, source) plus the
// bit fields of each, and the 64-bit register command entry format.
//
// Sources (cited per register in the table; details in docs/hardware.md "Registers and layouts"):
//   [XML]  Mesa src/gallium/drivers/rocket/registers.xml (names, offsets, bit fields; from the TRM)
//   [MTX]  mtx512/rk3588-npu include/npu_hw.h and src/npu_matmul.c (a tested int8/fp16 matmul task)
//   [RKT]  Mesa src/gallium/drivers/rocket/rkt_regcmd.c / rkt_ml.c (PC tail, task chaining)
// Registers that both [MTX] and [RKT] write without a documented meaning are marked "undocumented":
// ork writes them as those sources do (always 0) and the simulator requires exactly that value.
//
// Code sets fields only through put(kField, value) / reads them through get(kField, reg); a value that
// does not fit its field is an ork::Error naming the field. Thread-safe (constants and pure functions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"

namespace ork::npu::reg {

// ---- command entry (u64): bits 63:48 target, 47:16 value, 15:0 register offset [MTX NPUOP, RKT] ----
struct Entry {
  uint16_t target;
  uint32_t value;
  uint16_t offset;
};
constexpr uint64_t encode(uint16_t target, uint16_t offset, uint32_t value) {
  return (uint64_t(target) << 48) | (uint64_t(value) << 16) | uint64_t(offset);
}
constexpr Entry decode(uint64_t e) {
  return Entry{uint16_t(e >> 48), uint32_t(e >> 16), uint16_t(e & 0xffffu)};
}

// ---- block targets: block bit | 0x1 ("register write") [MTX BLOCK_*|PC_OP_01, XML enum target] ----
constexpr uint16_t kTargetPc = 0x0101;
constexpr uint16_t kTargetCna = 0x0201;
constexpr uint16_t kTargetCore = 0x0801;
constexpr uint16_t kTargetDpu = 0x1001;
constexpr uint16_t kTargetDpuRdma = 0x2001;
constexpr uint16_t kTargetPpu = 0x4001;
constexpr uint16_t kTargetPpuRdma = 0x8001;
// PC tail markers [RKT: "TRM: before op_en, 64'h0041_xxxx_xxxx_xxxx must be set"; MTX OP_40, OP_ENABLE].
constexpr uint16_t kTargetPcPreEnable = 0x0041;
constexpr uint16_t kTargetPcOpEnable = 0x0081;

const char* target_name(uint16_t target);  // "CNA", ...; nullptr when unknown

// ---- the table --------------------------------------------------------------------------------------
// X(ID, target, offset, source). NAME is the block-prefixed register name.
#define ORK_NPU_REGISTERS(X)                                                     \
  X(PC_OPERATION_ENABLE, kTargetPcOpEnable, 0x0008, "XML PC.OPERATION_ENABLE; MTX; RKT") \
  X(PC_BASE_ADDRESS, kTargetPc, 0x0010, "XML PC.BASE_ADDRESS; RKT chaining")    \
  X(PC_REGISTER_AMOUNTS, kTargetPc, 0x0014, "XML PC.REGISTER_AMOUNTS; RKT chaining") \
  X(CNA_CONV_CON1, kTargetCna, 0x100C, "XML; MTX")                              \
  X(CNA_CONV_CON2, kTargetCna, 0x1010, "XML; MTX")                              \
  X(CNA_CONV_CON3, kTargetCna, 0x1014, "XML; MTX")                              \
  X(CNA_DATA_SIZE0, kTargetCna, 0x1020, "XML; MTX")                             \
  X(CNA_DATA_SIZE1, kTargetCna, 0x1024, "XML; MTX")                             \
  X(CNA_DATA_SIZE2, kTargetCna, 0x1028, "XML; MTX")                             \
  X(CNA_DATA_SIZE3, kTargetCna, 0x102C, "XML; MTX")                             \
  X(CNA_WEIGHT_SIZE0, kTargetCna, 0x1030, "XML; MTX")                           \
  X(CNA_WEIGHT_SIZE1, kTargetCna, 0x1034, "XML; MTX")                           \
  X(CNA_WEIGHT_SIZE2, kTargetCna, 0x1038, "XML; MTX")                           \
  X(CNA_CBUF_CON0, kTargetCna, 0x1040, "XML; MTX")                              \
  X(CNA_CBUF_CON1, kTargetCna, 0x1044, "XML; MTX")                              \
  X(CNA_CVT_CON0, kTargetCna, 0x104C, "XML; MTX")                               \
  X(CNA_CVT_CON1, kTargetCna, 0x1050, "XML; MTX")                               \
  X(CNA_CVT_CON2, kTargetCna, 0x1054, "XML; MTX")                               \
  X(CNA_CVT_CON3, kTargetCna, 0x1058, "XML; MTX")                               \
  X(CNA_CVT_CON4, kTargetCna, 0x105C, "XML; MTX")                               \
  X(CNA_FC_CON0, kTargetCna, 0x1060, "XML; MTX")                                \
  X(CNA_FC_CON1, kTargetCna, 0x1064, "XML; MTX")                                \
  X(CNA_PAD_CON0, kTargetCna, 0x1068, "XML; MTX")                               \
  X(CNA_FEATURE_DATA_ADDR, kTargetCna, 0x1070, "XML; MTX")                      \
  X(CNA_FC_CON2, kTargetCna, 0x1074, "XML; MTX")                                \
  X(CNA_DMA_CON0, kTargetCna, 0x1078, "XML; MTX")                               \
  X(CNA_DMA_CON1, kTargetCna, 0x107C, "XML; MTX (value formula)")               \
  X(CNA_DMA_CON2, kTargetCna, 0x1080, "XML; MTX (value formula)")               \
  X(CNA_FC_DATA_SIZE0, kTargetCna, 0x1084, "XML; MTX")                          \
  X(CNA_FC_DATA_SIZE1, kTargetCna, 0x1088, "XML; MTX")                          \
  X(CNA_DCOMP_CTRL, kTargetCna, 0x1100, "XML; MTX")                             \
  X(CNA_DCOMP_REGNUM, kTargetCna, 0x1104, "XML; MTX")                           \
  X(CNA_DCOMP_ADDR0, kTargetCna, 0x1110, "XML; MTX (weight base address)")      \
  X(CNA_DCOMP_AMOUNT0, kTargetCna, 0x1140, "XML; MTX")                          \
  X(CNA_DCOMP_AMOUNT1, kTargetCna, 0x1144, "XML; MTX")                          \
  X(CNA_DCOMP_AMOUNT2, kTargetCna, 0x1148, "XML; MTX")                          \
  X(CNA_DCOMP_AMOUNT3, kTargetCna, 0x114C, "XML; MTX")                          \
  X(CNA_DCOMP_AMOUNT4, kTargetCna, 0x1150, "XML; MTX")                          \
  X(CNA_DCOMP_AMOUNT5, kTargetCna, 0x1154, "XML; MTX")                          \
  X(CNA_DCOMP_AMOUNT6, kTargetCna, 0x1158, "XML; MTX")                          \
  X(CNA_DCOMP_AMOUNT7, kTargetCna, 0x115C, "XML; MTX")                          \
  X(CNA_DCOMP_AMOUNT8, kTargetCna, 0x1160, "XML; MTX")                          \
  X(CNA_DCOMP_AMOUNT9, kTargetCna, 0x1164, "XML; MTX")                          \
  X(CNA_DCOMP_AMOUNT10, kTargetCna, 0x1168, "XML; MTX")                         \
  X(CNA_DCOMP_AMOUNT11, kTargetCna, 0x116C, "XML; MTX")                         \
  X(CNA_DCOMP_AMOUNT12, kTargetCna, 0x1170, "XML; MTX")                         \
  X(CNA_DCOMP_AMOUNT13, kTargetCna, 0x1174, "XML; MTX")                         \
  X(CNA_DCOMP_AMOUNT14, kTargetCna, 0x1178, "XML; MTX")                         \
  X(CNA_DCOMP_AMOUNT15, kTargetCna, 0x117C, "XML; MTX")                         \
  X(CNA_CVT_CON5, kTargetCna, 0x1180, "XML; MTX")                               \
  X(CNA_PAD_CON1, kTargetCna, 0x1184, "XML; MTX")                               \
  X(CORE_MISC_CFG, kTargetCore, 0x3010, "XML; MTX")                             \
  X(CORE_DATAOUT_SIZE_0, kTargetCore, 0x3014, "XML; MTX")                       \
  X(CORE_DATAOUT_SIZE_1, kTargetCore, 0x3018, "XML; MTX")                       \
  X(CORE_CLIP_TRUNCATE, kTargetCore, 0x301C, "XML; MTX")                        \
  X(CORE_3030, kTargetCore, 0x3030, "undocumented: MTX and RKT write 0")        \
  X(DPU_S_POINTER, kTargetDpu, 0x4004, "XML; MTX; RKT (ping-pong bits)")        \
  X(DPU_FEATURE_MODE_CFG, kTargetDpu, 0x400C, "XML; MTX")                       \
  X(DPU_DATA_FORMAT, kTargetDpu, 0x4010, "XML; MTX")                            \
  X(DPU_OFFSET_PEND, kTargetDpu, 0x4014, "XML; MTX")                            \
  X(DPU_DST_BASE_ADDR, kTargetDpu, 0x4020, "XML; MTX")                          \
  X(DPU_DST_SURF_STRIDE, kTargetDpu, 0x4024, "XML; MTX")                        \
  X(DPU_DATA_CUBE_WIDTH, kTargetDpu, 0x4030, "XML; MTX")                        \
  X(DPU_DATA_CUBE_HEIGHT, kTargetDpu, 0x4034, "XML; MTX")                       \
  X(DPU_DATA_CUBE_NOTCH_ADDR, kTargetDpu, 0x4038, "XML; MTX")                   \
  X(DPU_DATA_CUBE_CHANNEL, kTargetDpu, 0x403C, "XML; MTX")                      \
  X(DPU_BS_CFG, kTargetDpu, 0x4040, "XML; MTX")                                 \
  X(DPU_BS_ALU_CFG, kTargetDpu, 0x4044, "XML; MTX")                             \
  X(DPU_BS_MUL_CFG, kTargetDpu, 0x4048, "XML; MTX")                             \
  X(DPU_BS_RELUX_CMP_VALUE, kTargetDpu, 0x404C, "XML; MTX")                     \
  X(DPU_BS_OW_CFG, kTargetDpu, 0x4050, "XML; MTX (SIZE_E values)")              \
  X(DPU_BS_OW_OP, kTargetDpu, 0x4054, "XML; MTX")                               \
  X(DPU_WDMA_SIZE_0, kTargetDpu, 0x4058, "XML; MTX")                            \
  X(DPU_WDMA_SIZE_1, kTargetDpu, 0x405C, "XML; MTX")                            \
  X(DPU_BN_CFG, kTargetDpu, 0x4060, "XML; MTX")                                 \
  X(DPU_BN_ALU_CFG, kTargetDpu, 0x4064, "XML; MTX")                             \
  X(DPU_BN_MUL_CFG, kTargetDpu, 0x4068, "XML; MTX")                             \
  X(DPU_BN_RELUX_CMP_VALUE, kTargetDpu, 0x406C, "XML; MTX")                     \
  X(DPU_EW_CFG, kTargetDpu, 0x4070, "XML; MTX")                                 \
  X(DPU_EW_CVT_OFFSET_VALUE, kTargetDpu, 0x4074, "XML; MTX")                    \
  X(DPU_EW_CVT_SCALE_VALUE, kTargetDpu, 0x4078, "XML; MTX")                     \
  X(DPU_EW_RELUX_CMP_VALUE, kTargetDpu, 0x407C, "XML; MTX")                     \
  X(DPU_OUT_CVT_OFFSET, kTargetDpu, 0x4080, "XML; MTX")                         \
  X(DPU_OUT_CVT_SCALE, kTargetDpu, 0x4084, "XML; MTX")                          \
  X(DPU_OUT_CVT_SHIFT, kTargetDpu, 0x4088, "XML; MTX")                          \
  X(DPU_EW_OP_VALUE_0, kTargetDpu, 0x4090, "XML; MTX")                          \
  X(DPU_EW_OP_VALUE_1, kTargetDpu, 0x4094, "XML; MTX")                          \
  X(DPU_EW_OP_VALUE_2, kTargetDpu, 0x4098, "XML; MTX")                          \
  X(DPU_EW_OP_VALUE_3, kTargetDpu, 0x409C, "XML; MTX")                          \
  X(DPU_EW_OP_VALUE_4, kTargetDpu, 0x40A0, "XML; MTX")                          \
  X(DPU_EW_OP_VALUE_5, kTargetDpu, 0x40A4, "XML; MTX")                          \
  X(DPU_EW_OP_VALUE_6, kTargetDpu, 0x40A8, "XML; MTX")                          \
  X(DPU_EW_OP_VALUE_7, kTargetDpu, 0x40AC, "XML; MTX")                          \
  X(DPU_SURFACE_ADD, kTargetDpu, 0x40C0, "XML; MTX (value formula)")            \
  X(DPU_40C4, kTargetDpu, 0x40C4, "undocumented: MTX and RKT write 0")          \
  X(DPU_LUT_ACCESS_CFG, kTargetDpu, 0x4100, "XML; MTX")                         \
  X(DPU_LUT_ACCESS_DATA, kTargetDpu, 0x4104, "XML; MTX")                        \
  X(DPU_LUT_CFG, kTargetDpu, 0x4108, "XML; MTX")                                \
  X(DPU_LUT_INFO, kTargetDpu, 0x410C, "XML; MTX")                               \
  X(DPU_LUT_LE_START, kTargetDpu, 0x4110, "XML; MTX")                           \
  X(DPU_LUT_LE_END, kTargetDpu, 0x4114, "XML; MTX")                             \
  X(DPU_LUT_LO_START, kTargetDpu, 0x4118, "XML; MTX")                           \
  X(DPU_LUT_LO_END, kTargetDpu, 0x411C, "XML; MTX")                             \
  X(DPU_LUT_LE_SLOPE_SCALE, kTargetDpu, 0x4120, "XML; MTX")                     \
  X(DPU_LUT_LE_SLOPE_SHIFT, kTargetDpu, 0x4124, "XML; MTX")                     \
  X(DPU_LUT_LO_SLOPE_SCALE, kTargetDpu, 0x4128, "XML; MTX")                     \
  X(DPU_LUT_LO_SLOPE_SHIFT, kTargetDpu, 0x412C, "XML; MTX")

enum class Id : uint16_t {
#define ORK_NPU_REG_ENUM(ID, T, O, S) ID,
  ORK_NPU_REGISTERS(ORK_NPU_REG_ENUM)
#undef ORK_NPU_REG_ENUM
  kCount
};

struct Register {
  Id id;
  uint16_t target;
  uint16_t offset;
  const char* name;
  const char* source;
};

inline constexpr Register kRegisters[] = {
#define ORK_NPU_REG_ROW(ID, T, O, S) Register{Id::ID, T, O, #ID, S},
    ORK_NPU_REGISTERS(ORK_NPU_REG_ROW)
#undef ORK_NPU_REG_ROW
};
inline constexpr size_t kRegisterCount = sizeof(kRegisters) / sizeof(kRegisters[0]);
static_assert(kRegisterCount == size_t(Id::kCount));

constexpr const Register& info(Id id) { return kRegisters[size_t(id)]; }

// The table row for (target, offset), or nullptr when ork does not know that register.
const Register* find(uint16_t target, uint16_t offset);

// Entry writing `value` to register `id`.
constexpr uint64_t entry(Id id, uint32_t value) {
  return encode(info(id).target, info(id).offset, value);
}

// ---- fields ---------------------------------------------------------------------------------------
struct Field {
  const char* name;
  uint8_t low;
  uint8_t high;  // inclusive
  constexpr uint32_t mask() const {
    return high >= 31 ? 0xffffffffu >> low << low : ((1u << (high + 1)) - 1u) >> low << low;
  }
  constexpr uint64_t max() const { return (uint64_t(1) << (high - low + 1)) - 1; }
};

// `v` placed in field `f`; ork::Error naming the field when v does not fit.
inline uint32_t put(const Field& f, uint64_t v) {
  ORK_CHECK(v <= f.max(), "npu register field ", f.name, ": value ", v, " does not fit in bits ",
            int(f.high), ":", int(f.low));
  return uint32_t(v << f.low);
}
constexpr uint32_t get(const Field& f, uint32_t reg) { return (reg & f.mask()) >> f.low; }

// Field layouts [XML], only those ork sets to non-zero values or the simulator reads.
namespace f {
// PC
constexpr Field kOpEnOpEn{"PC_OPERATION_ENABLE.OP_EN", 0, 0};
constexpr Field kPcSourceAddr{"PC_BASE_ADDRESS.PC_SOURCE_ADDR", 4, 31};  // 16-byte aligned address
constexpr Field kPcDataAmount{"PC_REGISTER_AMOUNTS.PC_DATA_AMOUNT", 0, 15};
// CNA
constexpr Field kConvMode{"CNA_CONV_CON1.CONV_MODE", 0, 3};
constexpr Field kCnaInPrecision{"CNA_CONV_CON1.IN_PRECISION", 4, 6};
constexpr Field kCnaProcPrecision{"CNA_CONV_CON1.PROC_PRECISION", 7, 9};
constexpr Field kKernelGroup{"CNA_CONV_CON2.KERNEL_GROUP", 16, 23};
constexpr Field kFeatureGrains{"CNA_CONV_CON2.FEATURE_GRAINS", 4, 13};
constexpr Field kConvXStride{"CNA_CONV_CON3.CONV_X_STRIDE", 0, 2};
constexpr Field kConvYStride{"CNA_CONV_CON3.CONV_Y_STRIDE", 3, 5};
constexpr Field kDatainWidth{"CNA_DATA_SIZE0.DATAIN_WIDTH", 16, 26};
constexpr Field kDatainHeight{"CNA_DATA_SIZE0.DATAIN_HEIGHT", 0, 10};
constexpr Field kDatainChannelReal{"CNA_DATA_SIZE1.DATAIN_CHANNEL_REAL", 16, 29};
constexpr Field kDatainChannel{"CNA_DATA_SIZE1.DATAIN_CHANNEL", 0, 15};
constexpr Field kDataoutWidth{"CNA_DATA_SIZE2.DATAOUT_WIDTH", 0, 10};
constexpr Field kDataoutAtomics{"CNA_DATA_SIZE3.DATAOUT_ATOMICS", 0, 21};
constexpr Field kWeightBytes{"CNA_WEIGHT_SIZE0.WEIGHT_BYTES", 0, 31};
constexpr Field kWeightBytesPerKernel{"CNA_WEIGHT_SIZE1.WEIGHT_BYTES_PER_KERNEL", 0, 18};
constexpr Field kWeightWidth{"CNA_WEIGHT_SIZE2.WEIGHT_WIDTH", 24, 28};
constexpr Field kWeightHeight{"CNA_WEIGHT_SIZE2.WEIGHT_HEIGHT", 16, 20};
constexpr Field kWeightKernels{"CNA_WEIGHT_SIZE2.WEIGHT_KERNELS", 0, 13};
constexpr Field kWeightBank{"CNA_CBUF_CON0.WEIGHT_BANK", 4, 7};
constexpr Field kDataBank{"CNA_CBUF_CON0.DATA_BANK", 0, 3};
constexpr Field kDataEntries{"CNA_CBUF_CON1.DATA_ENTRIES", 0, 13};
constexpr Field kCvtDataSign{"CNA_CVT_CON0.DATA_SIGN", 3, 3};
constexpr Field kCvtType{"CNA_CVT_CON0.CVT_TYPE", 1, 1};
constexpr Field kCvtBypass{"CNA_CVT_CON0.CVT_BYPASS", 0, 0};
constexpr Field kCvtScale0{"CNA_CVT_CON1.CVT_SCALE0", 16, 31};
constexpr Field kCvtScale1{"CNA_CVT_CON2.CVT_SCALE1", 16, 31};
constexpr Field kCvtScale2{"CNA_CVT_CON3.CVT_SCALE2", 16, 31};
constexpr Field kCvtScale3{"CNA_CVT_CON4.CVT_SCALE3", 16, 31};
constexpr Field kFeatureBaseAddr{"CNA_FEATURE_DATA_ADDR.FEATURE_BASE_ADDR", 0, 31};
constexpr Field kWeightBurstLen{"CNA_DMA_CON0.WEIGHT_BURST_LEN", 16, 19};
constexpr Field kDataBurstLen{"CNA_DMA_CON0.DATA_BURST_LEN", 0, 3};
constexpr Field kLineStride{"CNA_DMA_CON1.LINE_STRIDE", 0, 27};
constexpr Field kSurfStride{"CNA_DMA_CON2.SURF_STRIDE", 0, 27};
constexpr Field kDmaWidth{"CNA_FC_DATA_SIZE0.DMA_WIDTH", 16, 29};
constexpr Field kDmaHeight{"CNA_FC_DATA_SIZE0.DMA_HEIGHT", 0, 10};
constexpr Field kDmaChannel{"CNA_FC_DATA_SIZE1.DMA_CHANNEL", 0, 15};
constexpr Field kDecompressAddr0{"CNA_DCOMP_ADDR0.DECOMPRESS_ADDR0", 0, 31};
// CORE
constexpr Field kCoreProcPrecision{"CORE_MISC_CFG.PROC_PRECISION", 8, 10};
constexpr Field kQdEn{"CORE_MISC_CFG.QD_EN", 0, 0};
constexpr Field kCoreDataoutHeight{"CORE_DATAOUT_SIZE_0.DATAOUT_HEIGHT", 16, 31};
constexpr Field kCoreDataoutWidth{"CORE_DATAOUT_SIZE_0.DATAOUT_WIDTH", 0, 15};
constexpr Field kCoreDataoutChannel{"CORE_DATAOUT_SIZE_1.DATAOUT_CHANNEL", 0, 15};
// DPU
constexpr Field kPointerPpMode{"DPU_S_POINTER.POINTER_PP_MODE", 3, 3};
constexpr Field kExecuterPpEn{"DPU_S_POINTER.EXECUTER_PP_EN", 2, 2};
constexpr Field kPointerPpEn{"DPU_S_POINTER.POINTER_PP_EN", 1, 1};
constexpr Field kDpuBurstLen{"DPU_FEATURE_MODE_CFG.BURST_LEN", 5, 8};
constexpr Field kDpuConvMode{"DPU_FEATURE_MODE_CFG.CONV_MODE", 3, 4};
constexpr Field kOutputMode{"DPU_FEATURE_MODE_CFG.OUTPUT_MODE", 1, 2};
constexpr Field kFlyingMode{"DPU_FEATURE_MODE_CFG.FLYING_MODE", 0, 0};
constexpr Field kDpuOutPrecision{"DPU_DATA_FORMAT.OUT_PRECISION", 29, 31};
constexpr Field kDpuInPrecision{"DPU_DATA_FORMAT.IN_PRECISION", 26, 28};
constexpr Field kDpuProcPrecision{"DPU_DATA_FORMAT.PROC_PRECISION", 0, 2};
constexpr Field kDstBaseAddr{"DPU_DST_BASE_ADDR.DST_BASE_ADDR", 0, 31};
constexpr Field kDstSurfStride{"DPU_DST_SURF_STRIDE.DST_SURF_STRIDE", 4, 31};
constexpr Field kCubeWidth{"DPU_DATA_CUBE_WIDTH.WIDTH", 0, 12};
constexpr Field kCubeHeight{"DPU_DATA_CUBE_HEIGHT.HEIGHT", 0, 12};
constexpr Field kCubeOrigChannel{"DPU_DATA_CUBE_CHANNEL.ORIG_CHANNEL", 16, 28};
constexpr Field kCubeChannel{"DPU_DATA_CUBE_CHANNEL.CHANNEL", 0, 12};
constexpr Field kBsReluBypass{"DPU_BS_CFG.BS_RELU_BYPASS", 6, 6};
constexpr Field kBsMulBypass{"DPU_BS_CFG.BS_MUL_BYPASS", 4, 4};
constexpr Field kBsAluBypass{"DPU_BS_CFG.BS_ALU_BYPASS", 1, 1};
constexpr Field kBsBypass{"DPU_BS_CFG.BS_BYPASS", 0, 0};
constexpr Field kSizeE2{"DPU_BS_OW_CFG.SIZE_E_2", 8, 10};
constexpr Field kSizeE1{"DPU_BS_OW_CFG.SIZE_E_1", 5, 7};
constexpr Field kSizeE0{"DPU_BS_OW_CFG.SIZE_E_0", 2, 4};
constexpr Field kOdBypass{"DPU_BS_OW_CFG.OD_BYPASS", 1, 1};
constexpr Field kChannelWdma{"DPU_WDMA_SIZE_0.CHANNEL_WDMA", 0, 12};
constexpr Field kHeightWdma{"DPU_WDMA_SIZE_1.HEIGHT_WDMA", 16, 28};
constexpr Field kWidthWdma{"DPU_WDMA_SIZE_1.WIDTH_WDMA", 0, 12};
constexpr Field kBnReluBypass{"DPU_BN_CFG.BN_RELU_BYPASS", 6, 6};
constexpr Field kBnMulBypass{"DPU_BN_CFG.BN_MUL_BYPASS", 4, 4};
constexpr Field kBnAluBypass{"DPU_BN_CFG.BN_ALU_BYPASS", 1, 1};
constexpr Field kBnBypass{"DPU_BN_CFG.BN_BYPASS", 0, 0};
constexpr Field kEwReluBypass{"DPU_EW_CFG.EW_RELU_BYPASS", 9, 9};
constexpr Field kEwOpCvtBypass{"DPU_EW_CFG.EW_OP_CVT_BYPASS", 8, 8};
constexpr Field kEwLutBypass{"DPU_EW_CFG.EW_LUT_BYPASS", 7, 7};
constexpr Field kEwOpBypass{"DPU_EW_CFG.EW_OP_BYPASS", 1, 1};
constexpr Field kEwBypass{"DPU_EW_CFG.EW_BYPASS", 0, 0};
constexpr Field kEwOpCvtScale{"DPU_EW_CVT_SCALE_VALUE.EW_OP_CVT_SCALE", 0, 15};
constexpr Field kFp32ToFp16En{"DPU_OUT_CVT_SCALE.FP32TOFP16_EN", 16, 16};
constexpr Field kOutCvtScale{"DPU_OUT_CVT_SCALE.OUT_CVT_SCALE", 0, 15};
constexpr Field kSurfAdd{"DPU_SURFACE_ADD.SURF_ADD", 4, 31};
}  // namespace f

// Precision codes of the *_PRECISION fields [MTX npu_hw.h]: int8 0, fp16 2, int32 4, fp32 5.
constexpr uint32_t kPrecisionInt8 = 0;
constexpr uint32_t kPrecisionFp16 = 2;
constexpr uint32_t kPrecisionInt32 = 4;
constexpr uint32_t kPrecisionFp32 = 5;
// int4 operands and int16 results: happyme531 rk_npu_i4_regs.cpp (CONV_CON1 0x360, CORE_MISC_CFG 0x601,
// DPU_DATA_FORMAT 0x38000006); its only public source (docs/hardware.md "int4 on the RK3588").
constexpr uint32_t kPrecisionInt4 = 6;
constexpr uint32_t kPrecisionInt16 = 1;

// PC_OPERATION_ENABLE value of a matmul task: 0xD, the value mtx512 and happyme531 ran on boards
// (mtx512 names the bits PC | CNA | DPU; the TRM bit order and happyme531 disagree: docs/hardware.md).
constexpr uint32_t kOpEnableMatmul = 0x0d;
// uapi::Task fields of a matmul task [MTX tests/matmul_int8.c].
constexpr uint32_t kTaskEnableMask = 0x0d;
constexpr uint32_t kTaskIntMask = 0x300;  // DPU_0 | DPU_1: wait for the DPU [XML PC.INTERRUPT_MASK]
constexpr uint32_t kTaskIntClear = 0x1ffff;
// Entries of the PC tail that ends every task; regcfg_amount counts the entries before it.
constexpr uint32_t kPcTailEntries = 4;

std::string describe(uint64_t entry);  // "CNA_DATA_SIZE0 (0x0201:0x1020) = 0x00010004"

}  // namespace ork::npu::reg
