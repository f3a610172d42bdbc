// Register commands: entry encoding, the table, generation → decoding round trip, rejections, split.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "npu/regcmd_gen.h"
#include "npu/registers.h"
#include "npu/sim/regcmd_decode.h"
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

TEST(RegcmdTest, GeneratesTheMtx512Sequence) {
  std::vector<uint64_t> e(kMatmulEntries);
  gen_matmul_regcmd(sample(Dtype::kI8), e.data());
  EXPECT_EQ(e[0], reg::entry(Id::DPU_S_POINTER, 0xe));
  EXPECT_EQ(e[1], reg::entry(Id::CNA_CONV_CON1, 0));
  EXPECT_EQ(e[2], reg::entry(Id::CNA_CONV_CON2, 65u << 4));  // feature grains m + 1
  EXPECT_EQ(e[4], reg::entry(Id::CNA_DATA_SIZE0, (1u << 16) | 64));
  EXPECT_EQ(e[5], reg::entry(Id::CNA_DATA_SIZE1, (255u << 16) | 256));
  EXPECT_EQ(e[11], reg::entry(Id::CNA_CBUF_CON0, (11u << 4) | 1));  // 16 KiB of input: 1 bank
  EXPECT_EQ(e[21], reg::entry(Id::CNA_FEATURE_DATA_ADDR, 0x10000));
  EXPECT_EQ(e[30], reg::entry(Id::CNA_DCOMP_ADDR0, 0x200000));
  EXPECT_EQ(e[57], reg::entry(Id::DPU_DST_BASE_ADDR, 0x300040));
  EXPECT_EQ(e[55], reg::entry(Id::DPU_DATA_FORMAT, 4u << 29));
  EXPECT_EQ(e[104], 0u);  // end of chain
  EXPECT_EQ(e[106], 0x0041000000000000ull);
  EXPECT_EQ(e[107], reg::encode(0x0081, 0x0008, 0xd));
}

TEST(RegcmdTest, RoundTripBothDtypes) {
  for (Dtype d : {Dtype::kI8, Dtype::kF16}) {
    const MatmulTaskDesc t = sample(d);
    std::vector<uint64_t> e(kMatmulEntries);
    gen_matmul_regcmd(t, e.data());
    const sim::DecodedTask got = sim::decode_matmul_regcmd(e.data(), kMatmulEntries, "t");
    EXPECT_EQ(got.op.dtype, d);
    EXPECT_EQ(got.op.m, t.m);
    EXPECT_EQ(got.op.k, t.k);
    EXPECT_EQ(got.op.n, t.n);
    EXPECT_EQ(got.op.a_addr, t.a_addr);
    EXPECT_EQ(got.op.b_addr, t.b_addr);
    EXPECT_EQ(got.op.c_addr, t.c_addr);
    EXPECT_FALSE(got.chained);
  }
}

TEST(RegcmdTest, ChainRoundTrip) {
  std::vector<uint64_t> e(kMatmulEntries);
  gen_matmul_regcmd(sample(Dtype::kI8), e.data());
  chain_regcmd(e.data(), kMatmulEntries, 0x4000, kMatmulEntries);
  const sim::DecodedTask got = sim::decode_matmul_regcmd(e.data(), kMatmulEntries, "t");
  EXPECT_TRUE(got.chained);
  EXPECT_EQ(got.next_addr, 0x4000u);
  EXPECT_EQ(got.next_amount, 52u);  // Mesa: align((108 - 4) / 2, 2)
  EXPECT_THROW(chain_regcmd(e.data(), kMatmulEntries, 0x4008, kMatmulEntries), Error);
}

void expect_rejected(std::vector<uint64_t> e, const std::string& needle) {
  try {
    sim::decode_matmul_regcmd(e.data(), uint32_t(e.size()), "task 0");
    FAIL() << "accepted; expected an error containing " << needle;
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find(needle), std::string::npos) << err.what();
  }
}

TEST(RegcmdTest, DecoderRejectsMalformedStreams) {
  std::vector<uint64_t> good(kMatmulEntries);
  gen_matmul_regcmd(sample(Dtype::kI8), good.data());

  auto e = good;
  e[3] = reg::encode(0x0301, 0x1014, 9);  // unknown target
  expect_rejected(e, "unknown target 0x301");
  e = good;
  e[3] = reg::encode(reg::kTargetCna, 0x1234, 9);  // unknown register
  expect_rejected(e, "unknown register 0x1234 of block CNA");
  e = good;
  e[62] = reg::entry(Id::DPU_DATA_CUBE_CHANNEL, (10u << 16) | 10);  // disagrees with 96 kernels
  expect_rejected(e, "DPU_DATA_CUBE_CHANNEL");
  e = good;
  e[51] = reg::entry(Id::CORE_DATAOUT_SIZE_1, 31);
  expect_rejected(e, "inconsistent dims");
  e = good;
  e[1] = reg::entry(Id::CNA_CONV_CON1, (1u << 7) | (1u << 4));  // precision 1: not documented here
  expect_rejected(e, "IN_PRECISION = 1");
  e = good;
  e[75] = reg::entry(Id::DPU_EW_CFG, 0);  // element-wise stage enabled: undocumented
  expect_rejected(e, "DPU_EW_CFG");
  e = good;
  e[107] = reg::encode(0x0081, 0x0008, 0x1d);
  expect_rejected(e, "PC_OPERATION_ENABLE");
  e = good;
  e[106] = 0;
  expect_rejected(e, "pre-enable");
  e = good;
  e[10] = reg::entry(Id::CNA_WEIGHT_SIZE2, (1u << 24) | (1u << 16) | 100);  // kernels not 32-aligned
  expect_rejected(e, "inconsistent dims");
  e = good;
  e.erase(e.begin() + 20);  // CNA_PAD_CON0 never written
  expect_rejected(e, "CNA_PAD_CON0 is never written");
  expect_rejected(std::vector<uint64_t>(4, 0), "4-entry PC tail");
}

TEST(RegcmdTest, TaskConstraints) {
  MatmulTaskDesc t = sample(Dtype::kI8);
  t.m = 6;
  EXPECT_THROW(check_task(t), Error);
  t = sample(Dtype::kI8);
  t.k = 8192;
  t.m = 48;  // 48 · 8192 bytes = 12 banks
  EXPECT_THROW(check_task(t), Error);
  t.m = 44;
  EXPECT_NO_THROW(check_task(t));
  t = sample(Dtype::kF16);
  t.n = 40;
  EXPECT_THROW(check_task(t), Error);
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
