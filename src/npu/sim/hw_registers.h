// The simulated NPU's own register table: the blocks, offsets and bit fields it interprets, entered
// from the RK3588 register description in Mesa's src/gallium/drivers/rocket/registers.xml (bminor/
// mesa-mesa 5b829658; transcribed from the RK3588 TRM Part 1 §36.4) — never from ork's generator or
// its table in npu/registers.h, so the two can disagree and a test can see it.
//
// A RegisterFile is one core's register state: the last value written to each register since the
// simulator started ("reset"), and whether it was written at all. State persists from task to task
// and job to job, as on the hardware; a task that relies on a register it never wrote uses whatever
// an earlier task left there. Pure data, not thread-safe (one per core, used under SimKernel's lock).
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace ork::npu::sim {

// Register command entry: bits 63:48 block target, 47:16 value, 15:0 register offset (TRM
// "bit[63:48] which block … bit[47:16] the register's value … bit[15:0] offset").
struct HwEntry {
  uint16_t target;
  uint32_t value;
  uint16_t offset;
};
inline HwEntry split_entry(uint64_t e) { return {uint16_t(e >> 48), uint32_t(e >> 16), uint16_t(e)}; }

// Targets: the XML `target` enum value | 1 ("register write"); 0x0041 and 0x0081 are the PC's
// pre-enable marker and operation-enable writes (TRM: "before op_en, 64'h0041_xxxx must be set").
namespace target {
constexpr uint16_t kPc = 0x0101, kCna = 0x0201, kCore = 0x0801, kDpu = 0x1001;
constexpr uint16_t kPcMarker = 0x0041, kPcEnable = 0x0081;
}  // namespace target

// Every register the simulator models, in the order of the XML. X(NAME, target, offset).
#define ORK_SIM_HW_REGISTERS(X)                                                                    \
  X(PC_BASE_ADDRESS, target::kPc, 0x0010) X(PC_REGISTER_AMOUNTS, target::kPc, 0x0014)              \
  X(CNA_CONV_CON1, target::kCna, 0x100C) X(CNA_CONV_CON2, target::kCna, 0x1010)                    \
  X(CNA_CONV_CON3, target::kCna, 0x1014) X(CNA_DATA_SIZE0, target::kCna, 0x1020)                   \
  X(CNA_DATA_SIZE1, target::kCna, 0x1024) X(CNA_DATA_SIZE2, target::kCna, 0x1028)                  \
  X(CNA_DATA_SIZE3, target::kCna, 0x102C) X(CNA_WEIGHT_SIZE0, target::kCna, 0x1030)                \
  X(CNA_WEIGHT_SIZE1, target::kCna, 0x1034) X(CNA_WEIGHT_SIZE2, target::kCna, 0x1038)              \
  X(CNA_CBUF_CON0, target::kCna, 0x1040) X(CNA_CBUF_CON1, target::kCna, 0x1044)                    \
  X(CNA_CVT_CON0, target::kCna, 0x104C) X(CNA_CVT_CON1, target::kCna, 0x1050)                      \
  X(CNA_CVT_CON2, target::kCna, 0x1054) X(CNA_CVT_CON3, target::kCna, 0x1058)                      \
  X(CNA_CVT_CON4, target::kCna, 0x105C) X(CNA_FC_CON0, target::kCna, 0x1060)                       \
  X(CNA_FC_CON1, target::kCna, 0x1064) X(CNA_PAD_CON0, target::kCna, 0x1068)                       \
  X(CNA_FEATURE_DATA_ADDR, target::kCna, 0x1070) X(CNA_FC_CON2, target::kCna, 0x1074)              \
  X(CNA_DMA_CON0, target::kCna, 0x1078) X(CNA_DMA_CON1, target::kCna, 0x107C)                      \
  X(CNA_DMA_CON2, target::kCna, 0x1080) X(CNA_FC_DATA_SIZE0, target::kCna, 0x1084)                 \
  X(CNA_FC_DATA_SIZE1, target::kCna, 0x1088) X(CNA_DCOMP_CTRL, target::kCna, 0x1100)               \
  X(CNA_DCOMP_REGNUM, target::kCna, 0x1104) X(CNA_DCOMP_ADDR0, target::kCna, 0x1110)               \
  X(CNA_DCOMP_AMOUNT0, target::kCna, 0x1140) X(CNA_DCOMP_AMOUNT1, target::kCna, 0x1144)            \
  X(CNA_DCOMP_AMOUNT2, target::kCna, 0x1148) X(CNA_DCOMP_AMOUNT3, target::kCna, 0x114C)            \
  X(CNA_DCOMP_AMOUNT4, target::kCna, 0x1150) X(CNA_DCOMP_AMOUNT5, target::kCna, 0x1154)            \
  X(CNA_DCOMP_AMOUNT6, target::kCna, 0x1158) X(CNA_DCOMP_AMOUNT7, target::kCna, 0x115C)            \
  X(CNA_DCOMP_AMOUNT8, target::kCna, 0x1160) X(CNA_DCOMP_AMOUNT9, target::kCna, 0x1164)            \
  X(CNA_DCOMP_AMOUNT10, target::kCna, 0x1168) X(CNA_DCOMP_AMOUNT11, target::kCna, 0x116C)          \
  X(CNA_DCOMP_AMOUNT12, target::kCna, 0x1170) X(CNA_DCOMP_AMOUNT13, target::kCna, 0x1174)          \
  X(CNA_DCOMP_AMOUNT14, target::kCna, 0x1178) X(CNA_DCOMP_AMOUNT15, target::kCna, 0x117C)          \
  X(CNA_CVT_CON5, target::kCna, 0x1180) X(CNA_PAD_CON1, target::kCna, 0x1184)                      \
  X(CORE_MISC_CFG, target::kCore, 0x3010) X(CORE_DATAOUT_SIZE_0, target::kCore, 0x3014)            \
  X(CORE_DATAOUT_SIZE_1, target::kCore, 0x3018) X(CORE_CLIP_TRUNCATE, target::kCore, 0x301C)       \
  X(CORE_3030, target::kCore, 0x3030)                                                              \
  X(DPU_S_POINTER, target::kDpu, 0x4004) X(DPU_FEATURE_MODE_CFG, target::kDpu, 0x400C)             \
  X(DPU_DATA_FORMAT, target::kDpu, 0x4010) X(DPU_OFFSET_PEND, target::kDpu, 0x4014)                \
  X(DPU_DST_BASE_ADDR, target::kDpu, 0x4020) X(DPU_DST_SURF_STRIDE, target::kDpu, 0x4024)          \
  X(DPU_DATA_CUBE_WIDTH, target::kDpu, 0x4030) X(DPU_DATA_CUBE_HEIGHT, target::kDpu, 0x4034)       \
  X(DPU_DATA_CUBE_NOTCH_ADDR, target::kDpu, 0x4038) X(DPU_DATA_CUBE_CHANNEL, target::kDpu, 0x403C) \
  X(DPU_BS_CFG, target::kDpu, 0x4040) X(DPU_BS_ALU_CFG, target::kDpu, 0x4044)                      \
  X(DPU_BS_MUL_CFG, target::kDpu, 0x4048) X(DPU_BS_RELUX_CMP_VALUE, target::kDpu, 0x404C)          \
  X(DPU_BS_OW_CFG, target::kDpu, 0x4050) X(DPU_BS_OW_OP, target::kDpu, 0x4054)                     \
  X(DPU_WDMA_SIZE_0, target::kDpu, 0x4058) X(DPU_WDMA_SIZE_1, target::kDpu, 0x405C)                \
  X(DPU_BN_CFG, target::kDpu, 0x4060) X(DPU_BN_ALU_CFG, target::kDpu, 0x4064)                      \
  X(DPU_BN_MUL_CFG, target::kDpu, 0x4068) X(DPU_BN_RELUX_CMP_VALUE, target::kDpu, 0x406C)          \
  X(DPU_EW_CFG, target::kDpu, 0x4070) X(DPU_EW_CVT_OFFSET_VALUE, target::kDpu, 0x4074)             \
  X(DPU_EW_CVT_SCALE_VALUE, target::kDpu, 0x4078) X(DPU_EW_RELUX_CMP_VALUE, target::kDpu, 0x407C)  \
  X(DPU_OUT_CVT_OFFSET, target::kDpu, 0x4080) X(DPU_OUT_CVT_SCALE, target::kDpu, 0x4084)           \
  X(DPU_OUT_CVT_SHIFT, target::kDpu, 0x4088) X(DPU_EW_OP_VALUE_0, target::kDpu, 0x4090)            \
  X(DPU_EW_OP_VALUE_1, target::kDpu, 0x4094) X(DPU_EW_OP_VALUE_2, target::kDpu, 0x4098)            \
  X(DPU_EW_OP_VALUE_3, target::kDpu, 0x409C) X(DPU_EW_OP_VALUE_4, target::kDpu, 0x40A0)            \
  X(DPU_EW_OP_VALUE_5, target::kDpu, 0x40A4) X(DPU_EW_OP_VALUE_6, target::kDpu, 0x40A8)            \
  X(DPU_EW_OP_VALUE_7, target::kDpu, 0x40AC) X(DPU_SURFACE_ADD, target::kDpu, 0x40C0)              \
  X(DPU_40C4, target::kDpu, 0x40C4) X(DPU_LUT_ACCESS_CFG, target::kDpu, 0x4100)                    \
  X(DPU_LUT_ACCESS_DATA, target::kDpu, 0x4104) X(DPU_LUT_CFG, target::kDpu, 0x4108)                \
  X(DPU_LUT_INFO, target::kDpu, 0x410C) X(DPU_LUT_LE_START, target::kDpu, 0x4110)                  \
  X(DPU_LUT_LE_END, target::kDpu, 0x4114) X(DPU_LUT_LO_START, target::kDpu, 0x4118)                \
  X(DPU_LUT_LO_END, target::kDpu, 0x411C) X(DPU_LUT_LE_SLOPE_SCALE, target::kDpu, 0x4120)          \
  X(DPU_LUT_LE_SLOPE_SHIFT, target::kDpu, 0x4124) X(DPU_LUT_LO_SLOPE_SCALE, target::kDpu, 0x4128)  \
  X(DPU_LUT_LO_SLOPE_SHIFT, target::kDpu, 0x412C)

enum class Hw : uint16_t {
#define ORK_SIM_HW_ENUM(N, T, O) N,
  ORK_SIM_HW_REGISTERS(ORK_SIM_HW_ENUM)
#undef ORK_SIM_HW_ENUM
  kCount
};
constexpr size_t kHwCount = size_t(Hw::kCount);

// The register at (target, offset), or false when the simulator does not model it.
bool find_hw(uint16_t target, uint16_t offset, Hw* out);
const char* hw_name(Hw r);

// A bit field [lo, hi] of a register value (XML bitfield low/high or pos).
struct Bits {
  uint8_t lo, hi;
};
constexpr uint32_t bits(uint32_t v, Bits b) {
  return b.hi >= 31 ? v >> b.lo : (v >> b.lo) & ((1u << (b.hi - b.lo + 1)) - 1u);
}

// One core's register state.
struct RegisterFile {
  std::array<uint32_t, kHwCount> value{};
  std::array<bool, kHwCount> written{};
  void write(Hw r, uint32_t v) {
    value[size_t(r)] = v;
    written[size_t(r)] = true;
  }
};

}  // namespace ork::npu::sim
