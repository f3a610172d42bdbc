// Register commands: entry encoding, the table, generation, the CBUF budget, the task split. What the
// simulator accepts or rejects is tested in sim_fidelity_test.cpp, the streams against public
// generators in golden_stream_test.cpp.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "npu/regcmd_gen.h"
#include "npu/registers.h"
#include "npu/task_split.h"

namespace ork::npu {
namespace {

using reg::Id;

TEST(RegistersTest, EntryEncoding) {
  // mtx512: NPUOP(OP_REG_CNA, value, CNA_DATA_SIZE0).
  const uint64_t e = reg::encode(0x0201, 0x1020, 0x00010004);
  EXPECT_EQ(e, 0x0201000100041020ull);
  const reg::Entry d = reg::decode(e);
  EXPECT_EQ(d.target, 0x0201);
  EXPECT_EQ(d.offset, 0x1020);
  EXPECT_EQ(d.value, 0x00010004u);
  EXPECT_EQ(reg::entry(Id::PC_OPERATION_ENABLE, 0xd), 0x00810000000d0008ull);
}

TEST(RegistersTest, TableIsUniqueAndFindable) {
  std::set<std::pair<uint16_t, uint16_t>> seen;
  for (const reg::Register& r : reg::kRegisters) {
    EXPECT_TRUE(seen.insert({r.target, r.offset}).second) << r.name;
    EXPECT_EQ(reg::find(r.target, r.offset), &r);
    EXPECT_NE(reg::target_name(r.target), nullptr) << r.name;
    EXPECT_NE(std::string(r.source), "") << r.name;
  }
  EXPECT_EQ(reg::find(reg::kTargetCna, 0x1234), nullptr);
  EXPECT_EQ(reg::target_name(0x0301), nullptr);
}

TEST(RegistersTest, FieldsPutAndGet) {
  EXPECT_EQ(reg::put(reg::f::kCnaProcPrecision, 2), 2u << 7);
  EXPECT_EQ(reg::get(reg::f::kCnaProcPrecision, 0x100u), 2u);
  EXPECT_EQ(reg::put(reg::f::kWeightBytes, 0xffffffffu), 0xffffffffu);
  EXPECT_EQ(reg::f::kDstSurfStride.mask(), 0xfffffff0u);
  EXPECT_THROW(reg::put(reg::f::kDatainHeight, 2048), Error);  // 11 bits
  EXPECT_THROW(reg::put(reg::f::kFeatureGrains, 1024), Error);
}

MatmulTaskDesc sample(Dtype d) {
  MatmulTaskDesc t;
  t.dtype = d;
  t.m = 64;
  t.k = 256;
  t.n = d == Dtype::kI8 ? 96 : 48;
  t.a_addr = 0x10000;
  t.b_addr = 0x200000;
  t.c_addr = 0x300040;
  return t;
}

TEST(RegcmdTest, GeneratesTheOpeningWritesThenTheMtx512Body) {
  std::vector<uint64_t> e(kMatmulEntries);
  gen_matmul_regcmd(sample(Dtype::kI8), e.data());
  // Opening writes (happyme531, Mesa): CBUF split, decompression off, precision.
  EXPECT_EQ(e[0], reg::entry(Id::CNA_CBUF_CON0, (11u << 4) | 1));  // 16 KiB of input: 1 bank
  EXPECT_EQ(e[1], reg::entry(Id::CNA_DCOMP_REGNUM, 0));
  EXPECT_EQ(e[2], reg::entry(Id::CNA_DCOMP_CTRL, 0));
  EXPECT_EQ(e[3], reg::entry(Id::CNA_CONV_CON1, 0));
  EXPECT_EQ(e[4], reg::entry(Id::DPU_S_POINTER, 0xe));
  EXPECT_EQ(e[5], reg::entry(Id::CNA_CONV_CON1, 0));
  EXPECT_EQ(e[6], reg::entry(Id::CNA_CONV_CON2, 65u << 4));  // feature grains m + 1 (k = 256)
  EXPECT_EQ(e[8], reg::entry(Id::CNA_DATA_SIZE0, (1u << 16) | 64));
  EXPECT_EQ(e[9], reg::entry(Id::CNA_DATA_SIZE1, (255u << 16) | 256));
  EXPECT_EQ(e[15], reg::entry(Id::CNA_CBUF_CON0, (11u << 4) | 1));
  EXPECT_EQ(e[25], reg::entry(Id::CNA_FEATURE_DATA_ADDR, 0x10000));
  EXPECT_EQ(e[34], reg::entry(Id::CNA_DCOMP_ADDR0, 0x200000));
  EXPECT_EQ(e[61], reg::entry(Id::DPU_DST_BASE_ADDR, 0x300040));
  EXPECT_EQ(e[59], reg::entry(Id::DPU_DATA_FORMAT, 4u << 29));
  EXPECT_EQ(e[108], 0u);  // end of chain
  EXPECT_EQ(e[110], 0x0041000000000000ull);
  EXPECT_EQ(e[111], reg::encode(0x0081, 0x0008, 0xd));
}

TEST(RegcmdTest, ChainAmountFollowsTheDriversFetchArithmetic) {
  std::vector<uint64_t> e(kMatmulEntries);
  gen_matmul_regcmd(sample(Dtype::kI8), e.data());
  chain_regcmd(e.data(), kMatmulEntries, 0x4000, kMatmulEntries);
  EXPECT_EQ(e[108], reg::entry(Id::PC_BASE_ADDRESS, 0x4000));
  // rknpu_job.c: (regcfg_amount + 4 + 2 − 1) / 2 − 1 with regcfg_amount 108 → 55: (55 + 1) · 2 = 112.
  EXPECT_EQ(e[109], 0x0101000000370014ull);
  EXPECT_EQ(pc_chain_amount(112), 55u);
  EXPECT_EQ(pc_chain_amount(108), 53u);  // the first audit's example (a 108-entry task)
  EXPECT_THROW(chain_regcmd(e.data(), kMatmulEntries, 0x4008, kMatmulEntries), Error);
}

TEST(RegcmdTest, FeatureGrainsFollowTheBoardSweeps) {
  // happyme531 feature_grains_for: m + 1 for narrow K, capped near two banks of rows, 30 at large K.
  EXPECT_EQ(feature_grains(Dtype::kI8, 64, 256), 65u);
  EXPECT_EQ(feature_grains(Dtype::kI8, 128, 1024), 64u);  // "M=128,K=1024 uses feature_grains=64"
  EXPECT_EQ(feature_grains(Dtype::kI8, 16, 8192), 30u);
  EXPECT_EQ(feature_grains(Dtype::kI8, 4, 8192), 5u);
  EXPECT_EQ(feature_grains(Dtype::kF16, 128, 1024), 129u);
}

TEST(RegcmdTest, TaskConstraints) {
  MatmulTaskDesc t = sample(Dtype::kI8);
  t.m = 6;
  EXPECT_THROW(check_task(t), Error);
  t = sample(Dtype::kI8);
  t.k = 8192;
  t.m = 44;  // 11 banks of input: beyond the 8 the int8 board sweeps verified
  EXPECT_THROW(check_task(t), Error);
  t.m = 20;  // 5 banks, leaving 7 for weights: a 32-kernel atom of K = 8192 needs 8
  EXPECT_THROW(check_task(t), Error);
  t.m = 16;
  EXPECT_NO_THROW(check_task(t));
  t = sample(Dtype::kF16);
  t.n = 40;
  EXPECT_THROW(check_task(t), Error);
}

TEST(CbufBudgetTest, RowTilesReproduceTheBoardSweeps) {
  // happyme531 rk_npu_matmul_i8.cpp: 64 rows to K = 4096, 32 to 6144, 16 to 8192.
  EXPECT_EQ(max_m_tile(Dtype::kI8, 4096), 64);
  EXPECT_EQ(max_m_tile(Dtype::kI8, 6144), 32);
  EXPECT_EQ(max_m_tile(Dtype::kI8, 8192), 16);
  EXPECT_EQ(max_m_tile(Dtype::kI8, 2048), 128);
  EXPECT_EQ(max_m_tile(Dtype::kI8, 32), 1020);
  // fp16: at most 10 data banks, a 32-kernel atom in the weight banks (K = 1280: 3 weight banks).
  EXPECT_LE(input_banks(Dtype::kF16, uint32_t(max_m_tile(Dtype::kF16, 1280)), 1280), 9u);
  EXPECT_EQ(max_m_tile(Dtype::kF16, 8192), 1);
  for (int64_t ks = 32; ks <= 8192; ks += 32) {
    for (Dtype d : {Dtype::kI8, Dtype::kF16}) {
      const int64_t mt = max_m_tile(d, ks);
      ASSERT_TRUE(fits_cbuf(d, uint32_t(mt), uint32_t(ks))) << ks;
      ASSERT_TRUE(mt == 1 || mt % 4 == 0) << ks;
      if (mt + 4 <= 1020) { ASSERT_FALSE(fits_cbuf(d, uint32_t(mt + 4), uint32_t(ks))) << ks; }
    }
  }
}

TEST(TaskSplitTest, FitsCbufAndCoversTheOutput) {
  struct Case { int64_t m, k, n; Dtype d; uint32_t cores; };
  for (const Case& c : {Case{1, 16384, 64, Dtype::kI8, 3}, Case{333, 4000, 100, Dtype::kI8, 3},
                        Case{512, 8192, 4096 * 3 + 32, Dtype::kI8, 2}, Case{7, 100, 16, Dtype::kF16, 3},
                        Case{64, 20000, 48, Dtype::kF16, 1}}) {
    const SplitPlan p = plan_split(c.m, c.k, c.n, c.d, c.cores);
    ASSERT_FALSE(p.tasks.empty());
    EXPECT_LE(p.cores, c.cores);
    std::vector<int> covered(size_t(p.mp * p.np), 0);
    uint32_t expect_start = 0;
    for (uint32_t core = 0; core < p.cores; ++core) {
      EXPECT_EQ(p.core_start[core], expect_start);
      expect_start += p.core_count[core];
    }
    EXPECT_EQ(expect_start, p.tasks.size());
    for (const TaskTile& t : p.tasks) {
      MatmulTaskDesc d;
      d.dtype = c.d;
      d.m = uint32_t(t.mt), d.k = uint32_t(t.ks), d.n = uint32_t(t.nt);
      EXPECT_NO_THROW(check_task(d)) << d.str();
      EXPECT_LE(t.a_off + uint64_t(t.mt * t.ks * elt_bytes(c.d)), p.a_bytes);
      EXPECT_LE(t.b_off + uint64_t(t.nt * t.ks * elt_bytes(c.d)), packed_weight_bytes(c.n, c.k, c.d));
      EXPECT_LE(t.c_off + uint64_t(t.mt * t.nt * 4), p.c_bytes);
      for (int64_t i = t.m0; i < t.m0 + t.mt; ++i)
        for (int64_t j = t.n0; j < t.n0 + t.nt; ++j) covered[size_t(i * p.np + j)] += 1;
    }
    for (int v : covered) ASSERT_EQ(v, p.segments);  // every output once per K segment
  }
}

TEST(TaskSplitTest, SingleTileOutputIsNativeLayout) {
  const SplitPlan p = plan_split(64, 512, 256, Dtype::kI8, 3);
  EXPECT_EQ(p.segments, 1);
  for (const TaskTile& t : p.tasks) EXPECT_EQ(t.c_off, uint64_t(t.n0 * p.mp * 4));
}

}  // namespace
}  // namespace ork::npu
