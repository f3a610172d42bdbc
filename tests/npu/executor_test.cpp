// The simulator's PC model and datapath against a test address space: whole plans (multi-task,
// chained, K-segmented) bit-exact for int8, fp16 within tolerance, and the board's failure modes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "core/fp16.h"
#include "npu/int8_reference.h"
#include "npu/matmul.h"
#include "npu/regcmd_gen.h"
#include "npu/registers.h"
#include "npu/sim/executor.h"
#include "npu/sim/job_failure.h"

namespace ork::npu {
namespace {

using testing::fill8;

// Buffers at fixed NPU addresses; resolve() faults outside them, like the IOMMU would.
class TestSpace : public sim::AddressSpace {
 public:
  uint64_t map(uint64_t bytes) {
    const uint64_t iova = next_;
    next_ += (bytes + 0xffff) / 0x10000 * 0x10000 + 0x10000;  // gaps between buffers
    bufs_[iova] = std::vector<uint8_t>(size_t(bytes), 0);
    return iova;
  }
  void unmap(uint64_t iova) { bufs_.erase(iova); }
  uint8_t* host(uint64_t iova) { return bufs_.at(iova).data(); }
  uint8_t* resolve(uint64_t iova, uint64_t len) override {
    auto it = bufs_.upper_bound(iova);
    if (it != bufs_.begin()) {
      --it;
      const uint64_t off = iova - it->first;
      if (off + len <= it->second.size()) return it->second.data() + off;
    }
    throw sim::Fault(iova, len, str_cat("unmapped NPU address 0x", std::hex, iova));
  }

 private:
  uint64_t next_ = 0x100000;
  std::map<uint64_t, std::vector<uint8_t>> bufs_;
};

struct Job {
  SplitPlan plan;
  uint64_t a = 0, b = 0, c = 0, regcmd = 0;
  std::vector<uapi::Task> tasks;
  sim::RegisterFile regs[3];
};

Job prepare(TestSpace& space, Dtype d, int64_t m, int64_t k, int64_t n, const void* a, const void* b,
            uint32_t cores) {
  Job j;
  j.plan = plan_split(m, k, n, d, cores);
  j.a = space.map(j.plan.a_bytes);
  j.b = space.map(packed_weight_bytes(n, k, d));
  j.c = space.map(j.plan.c_bytes);
  j.regcmd = space.map(j.plan.tasks.size() * kRegcmdStride);
  pack_b(d, b, n, k, space.host(j.b));
  pack_a_for_plan(j.plan, a, space.host(j.a));
  j.tasks.resize(j.plan.tasks.size());
  build_tasks(j.plan, TaskAddresses{j.a, j.b, j.c, j.regcmd}, space.host(j.regcmd), j.tasks.data());
  return j;
}

// Runs each core's range, as SimKernel's submit does.
sim::ExecStats run(TestSpace& space, Job& j) {
  sim::ExecStats total;
  for (uint32_t core = 0; core < j.plan.cores; ++core) {
    const sim::ExecStats s = sim::execute_tasks(space, j.regs[core], core, j.tasks.data() + j.plan.core_start[core],
                                                j.plan.core_count[core]);
    total.tasks += s.tasks;
    total.macs += s.macs;
  }
  return total;
}


void check_i8(int64_t m, int64_t k, int64_t n, uint32_t cores) {
  const auto a = fill8(m * k, 1), b = fill8(n * k, 2);
  TestSpace space;
  Job j = prepare(space, Dtype::kI8, m, k, n, a.data(), b.data(), cores);
  const sim::ExecStats st = run(space, j);
  EXPECT_EQ(st.tasks, j.plan.tasks.size());
  EXPECT_EQ(st.macs, j.plan.macs());
  std::vector<int32_t> c(size_t(m * n), 12345);
  unpack_c_for_plan(j.plan, space.host(j.c), c.data());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t jn = 0; jn < n; ++jn) {
      int32_t ref = 0;
      for (int64_t kk = 0; kk < k; ++kk) ref += int32_t(a[size_t(i * k + kk)]) * b[size_t(jn * k + kk)];
      ASSERT_EQ(c[size_t(i * n + jn)], ref) << m << "x" << k << "x" << n << " at " << i << "," << jn;
    }
}

TEST(ExecutorTest, Int8SingleTask) { check_i8(4, 64, 32, 1); }
TEST(ExecutorTest, Int8OddSizesMultiCore) { check_i8(7, 45, 70, 3); }
TEST(ExecutorTest, Int8MTilesAndChains) { check_i8(333, 2000, 96, 2); }  // mt capped by CBUF
TEST(ExecutorTest, Int8KSegments) { check_i8(5, 8192 + 300, 40, 3); }
TEST(ExecutorTest, Int8MEqualsOne) { check_i8(1, 96, 33, 3); }

TEST(ExecutorTest, Fp16WithinTolerance) {
  const int64_t m = 9, k = 8192 + 64, n = 20;
  std::vector<uint16_t> a(size_t(m * k)), b(size_t(n * k));
  for (size_t i = 0; i < a.size(); ++i) a[i] = f32_to_f16(float(int(i % 13) - 6) / 8.0f);
  for (size_t i = 0; i < b.size(); ++i) b[i] = f32_to_f16(float(int(i % 11) - 5) / 16.0f);
  TestSpace space;
  Job j = prepare(space, Dtype::kF16, m, k, n, a.data(), b.data(), 3);
  run(space, j);
  std::vector<float> c(size_t(m * n));
  unpack_c_for_plan(j.plan, space.host(j.c), c.data());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t jn = 0; jn < n; ++jn) {
      double ref = 0, mag = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const double p = double(f16_to_f32(a[size_t(i * k + kk)])) * f16_to_f32(b[size_t(jn * k + kk)]);
        ref += p;
        mag += std::fabs(p);
      }
      ASSERT_NEAR(c[size_t(i * n + jn)], ref, 1e-5 * mag + 1e-6) << i << "," << jn;
    }
}

TEST(ExecutorTest, ZeroAmountRejected) {
  const auto a = fill8(4 * 32, 1), b = fill8(32 * 32, 2);
  TestSpace space;
  Job j = prepare(space, Dtype::kI8, 4, 32, 32, a.data(), b.data(), 1);
  j.tasks[0].regcfg_amount = 0;  // the driver then programs a fetch of 4 entries
  try {
    sim::execute_tasks(space, j.regs[0], 0, j.tasks.data(), 1);
    FAIL();
  } catch (const sim::Timeout& e) {
    EXPECT_NE(std::string(e.what()).find("short fetch"), std::string::npos) << e.what();
  }
}

TEST(ExecutorTest, UnknownRegisterRejectedBeforeAnyWrite) {
  const auto a = fill8(4 * 32, 1), b = fill8(32 * 32, 2);
  TestSpace space;
  Job j = prepare(space, Dtype::kI8, 4, 32, 32, a.data(), b.data(), 1);
  uint64_t bad = reg::encode(reg::kTargetDpu, 0x4444, 1);
  std::memcpy(space.host(j.regcmd) + 8 * 70, &bad, 8);
  std::memset(space.host(j.c), 0x5a, size_t(j.plan.c_bytes));
  try {
    sim::execute_tasks(space, j.regs[0], 0, j.tasks.data(), 1);
    FAIL();
  } catch (const sim::Unmodelled& e) {
    EXPECT_NE(std::string(e.what()).find("register 0x4444 of target 0x1001 is not modelled"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(space.host(j.c)[0], 0x5a);  // nothing written
}

TEST(ExecutorTest, BrokenChainRejected) {
  const auto a = fill8(4 * 64, 1), b = fill8(96 * 64, 2);
  TestSpace space;
  Job j = prepare(space, Dtype::kI8, 4, 64, 96, a.data(), b.data(), 1);
  ASSERT_EQ(j.plan.tasks.size(), 1u);
  // Two copies of a single (unchained) task in one range: the PC has no next address.
  std::vector<uapi::Task> two = {j.tasks[0], j.tasks[0]};
  EXPECT_THROW(sim::execute_tasks(space, j.regs[0], 0, two.data(), 2), sim::Timeout);
}

TEST(ExecutorTest, FreedWeightFaults) {
  const auto a = fill8(4 * 64, 1), b = fill8(32 * 64, 2);
  TestSpace space;
  Job j = prepare(space, Dtype::kI8, 4, 64, 32, a.data(), b.data(), 1);
  space.unmap(j.b);
  EXPECT_THROW(sim::execute_tasks(space, j.regs[0], 0, j.tasks.data(), 1), sim::Fault);
}

TEST(ExecutorTest, UnmappedRegcmdFaults) {
  const auto a = fill8(4 * 64, 1), b = fill8(32 * 64, 2);
  TestSpace space;
  Job j = prepare(space, Dtype::kI8, 4, 64, 32, a.data(), b.data(), 1);
  j.tasks[0].regcmd_addr = 0x40;
  EXPECT_THROW(sim::execute_tasks(space, j.regs[0], 0, j.tasks.data(), 1), sim::Fault);
}

}  // namespace
}  // namespace ork::npu
