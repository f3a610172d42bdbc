// The simulator is a model of the board, able to disagree with ork's generator: each error of the
// first NPU audit, put back into the generator, fails the probe suite; the PC fetches as the driver
// and the tails say; write order matters where the sources say it does; the envelope is enforced;
// and `ork probe regcmd` prints exactly what the simulated PC fetched.
#include <gtest/gtest.h>

#include <dirent.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "build_dirs.h"
#include "npu/cbuf_budget.h"
#include "npu/device.h"
#include "npu/matmul.h"
#include "npu/probe_matmul.h"
#include "npu/probe_regcmd.h"
#include "npu/regcmd_gen.h"
#include "npu/registers.h"
#include "npu/sim/executor.h"
#include "npu/sim/job_failure.h"
#include "npu/sim/sim_kernel.h"

namespace ork::npu {
namespace {

// Sets a generator fault for the scope of one test.
class FaultScope {
 public:
  explicit FaultScope(const GeneratorFaults& f) { generator_faults() = f; }
  ~FaultScope() { generator_faults() = GeneratorFaults{}; }
};

MatmulProbeResult probe_on_fresh_sim(bool keep_going = false) {
  auto dev = Device::open_sim();
  return probe_matmul(*dev, 0, keep_going);
}

std::string first_error(const MatmulProbeResult& r) {
  for (const auto& s : r.shapes)
    if (!s.ok) return str_cat(phase_name(s.phase), " ", dtype_name(s.dtype), " ", s.m, "x", s.k, "x", s.n, ": ", s.error);
  return "";
}

TEST(SimFidelity, TheGeneratorAsItIsPassesTheProbe) {
  const MatmulProbeResult r = probe_on_fresh_sim(true);
  EXPECT_EQ(r.failed, 0) << first_error(r);
  EXPECT_GT(r.passed, 40);
}

TEST(SimFidelity, OldChainAmountFailsTheChainedShapes) {
  GeneratorFaults f;
  f.chain_amount_52 = true;
  FaultScope scope(f);
  const MatmulProbeResult r = probe_on_fresh_sim(true);
  int single_failed = 0, chained_failed = 0;
  for (const auto& s : r.shapes) {
    if (s.ok) continue;
    (s.phase == ProbePhase::kSingleTask ? single_failed : chained_failed) += 1;
    EXPECT_NE(s.error.find("timed out"), std::string::npos) << s.error;
    EXPECT_NE(s.error.find("fetch"), std::string::npos) << s.error;
  }
  EXPECT_EQ(single_failed, 0);  // one-task shapes never use the tail amount
  EXPECT_GE(chained_failed, 10) << first_error(r);
}

TEST(SimFidelity, ElevenDataBanksFail) {
  GeneratorFaults f;
  f.eleven_data_banks = true;
  FaultScope scope(f);
  const MatmulProbeResult r = probe_on_fresh_sim();
  EXPECT_GT(r.failed, 0);
  bool banks = false;
  for (const auto& s : r.shapes) banks |= !s.ok && s.error.find("banks") != std::string::npos;
  EXPECT_TRUE(banks) << first_error(r);
}

TEST(SimFidelity, EachMissingOpeningCbufOrDcompWriteFails) {
  // CBUF_CON0, DCOMP_REGNUM, DCOMP_CTRL: without them the CNA latches state no task wrote.
  for (int drop = 0; drop < 3; ++drop) {
    GeneratorFaults f;
    f.drop_opening_write = drop;
    FaultScope scope(f);
    const MatmulProbeResult r = probe_on_fresh_sim();
    EXPECT_GT(r.failed, 0) << "opening write " << drop;
    EXPECT_NE(first_error(r).find("the opening writes must precede CONV_CON1"), std::string::npos)
        << first_error(r);
  }
}

TEST(SimFidelity, ProbeStopsAtTheFirstFailureByDefault) {
  GeneratorFaults f;
  f.chain_amount_52 = true;
  FaultScope scope(f);
  auto dev = Device::open_sim();
  const MatmulProbeResult r = probe_matmul(*dev);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.failed, 1);
  EXPECT_EQ(r.shapes.back().phase, ProbePhase::kChained);
  EXPECT_NE(r.to_json().find("\"stopped\":true"), std::string::npos);
}

TEST(SimFidelity, ProbePhasesRunInOrder) {
  const std::vector<MatmulProbeShape> plan = matmul_probe_plan(3);
  ASSERT_FALSE(plan.empty());
  int last = 0, per_phase[3] = {0, 0, 0};
  for (const auto& s : plan) {
    EXPECT_GE(int(s.phase), last);
    last = int(s.phase);
    per_phase[last]++;
    EXPECT_EQ(s.cores, s.phase == ProbePhase::kMultiCore ? 3u : 1u);
    const SplitPlan p = plan_split(s.m, s.k, s.n, s.dtype, s.cores);
    if (s.phase == ProbePhase::kSingleTask) {
      EXPECT_EQ(p.tasks.size(), 1u);
    }
    if (s.phase == ProbePhase::kChained) {
      EXPECT_GT(p.tasks.size(), 1u);
    }
  }
  for (int n : per_phase) EXPECT_GT(n, 0);
  for (const auto& s : matmul_probe_plan(1)) EXPECT_NE(s.phase, ProbePhase::kMultiCore);
}

// ---- the PC and the register file, task by task -----------------------------------------------------

class Space : public sim::AddressSpace {
 public:
  explicit Space(uint64_t base, uint64_t bytes) : base_(base), mem_(size_t(bytes), 0) {}
  uint8_t* at(uint64_t iova) { return mem_.data() + (iova - base_); }
  uint8_t* resolve(uint64_t iova, uint64_t len) override {
    if (iova < base_ || iova - base_ + len > mem_.size()) throw sim::Fault(iova, len, "unmapped");
    return at(iova);
  }

 private:
  uint64_t base_;
  std::vector<uint8_t> mem_;
};

struct OneCore {
  Space space{0x100000, 8 << 20};
  sim::RegisterFile regs;
  std::vector<uapi::Task> tasks;
  // Task i's regcmd at 0x100000 + i·896; operands far above.
  void add(const MatmulTaskDesc& t, bool chain_to_next) {
    const uint64_t here = 0x100000 + tasks.size() * kRegcmdStride;
    std::vector<uint64_t> e(kMatmulEntries);
    gen_matmul_regcmd(t, e.data());
    if (chain_to_next) chain_regcmd(e.data(), kMatmulEntries, uint32_t(here + kRegcmdStride), kMatmulEntries);
    std::memcpy(space.at(here), e.data(), e.size() * 8);
    uapi::Task task{};
    task.enable_mask = reg::kTaskEnableMask;
    task.int_mask = reg::kTaskIntMask;
    task.regcfg_amount = kMatmulEntries - reg::kPcTailEntries;
    task.regcmd_addr = here;
    tasks.push_back(task);
  }
  uint64_t* entries(size_t task) { return reinterpret_cast<uint64_t*>(space.at(tasks[task].regcmd_addr)); }
  void run() { sim::execute_tasks(space, regs, 0, tasks.data(), uint32_t(tasks.size())); }
};

MatmulTaskDesc desc(uint32_t m, uint32_t k, uint32_t n) {
  MatmulTaskDesc t;
  t.m = m, t.k = k, t.n = n;
  t.a_addr = 0x400000, t.b_addr = 0x500000, t.c_addr = 0x700000;
  return t;
}

template <typename E>
std::string expect_throw(OneCore& c) {
  try {
    c.run();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no failure of the expected kind";
  return "";
}

TEST(SimPc, ChainedTasksRun) {
  OneCore c;
  c.add(desc(4, 64, 32), true);
  c.add(desc(8, 64, 32), false);
  EXPECT_NO_THROW(c.run());
}

TEST(SimPc, LaterTasksAreFetchedByTheTailNotTheTaskArray) {
  OneCore c;
  c.add(desc(4, 64, 32), true);
  c.add(desc(4, 64, 32), false);
  c.tasks[1].regcmd_addr = 0xdead000;  // never read by the hardware
  c.tasks[1].regcfg_amount = 7;
  EXPECT_NO_THROW(c.run());
}

TEST(SimPc, ShortFetchTimesOut) {
  OneCore c;
  c.add(desc(4, 64, 32), true);
  c.add(desc(4, 64, 32), false);
  c.entries(0)[109] = reg::entry(reg::Id::PC_REGISTER_AMOUNTS, 53);  // 108 of 112 entries
  EXPECT_NE(expect_throw<sim::Timeout>(c).find("short fetch"), std::string::npos);
}

TEST(SimPc, OverLongFetchTimesOut) {
  OneCore c;
  c.add(desc(4, 64, 32), true);
  c.add(desc(4, 64, 32), false);
  c.entries(0)[109] = reg::entry(reg::Id::PC_REGISTER_AMOUNTS, 57);  // 116 entries: 4 past the task
  c.entries(1)[112] = reg::entry(reg::Id::CNA_CONV_CON3, 9);  // what follows the second task in memory
  EXPECT_NE(expect_throw<sim::Timeout>(c).find("over-long fetch"), std::string::npos);
}

TEST(SimPc, MissingMarkerOrNextAddressTimesOut) {
  OneCore c;
  c.add(desc(4, 64, 32), false);
  c.entries(0)[110] = 0;
  EXPECT_NE(expect_throw<sim::Timeout>(c).find("0x0041 pre-enable marker"), std::string::npos);
  OneCore d;
  d.add(desc(4, 64, 32), false);
  d.add(desc(4, 64, 32), false);  // task 0 does not chain
  EXPECT_NE(expect_throw<sim::Timeout>(d).find("no next PC_BASE_ADDRESS"), std::string::npos);
}

TEST(SimPc, RegisterWrittenAfterTheLatchReachesOnlyTheNextTask) {
  // Task 0 needs 1 data bank; task 1 (96 rows of K = 1024: 3 banks) writes its CBUF_CON0 only in the
  // body, after CONV_CON1 — so it runs with task 0's split and its input does not fit.
  OneCore c;
  c.add(desc(4, 64, 32), true);
  c.add(desc(96, 1024, 32), false);
  c.entries(1)[0] = 0;  // drop task 1's opening CBUF_CON0
  const std::string why = expect_throw<sim::Timeout>(c);
  EXPECT_NE(why.find("the input needs 3 data banks"), std::string::npos) << why;
  EXPECT_NE(why.find("latched at CONV_CON1"), std::string::npos) << why;
  // The same stream with the opening write runs.
  OneCore ok;
  ok.add(desc(4, 64, 32), true);
  ok.add(desc(96, 1024, 32), false);
  EXPECT_NO_THROW(ok.run());
}

TEST(SimPc, OutsideTheEnvelopeTimesOut) {
  // Streams a generator outside the board-verified envelope would write: hand-edited CBUF_CON0 /
  // FEATURE_GRAINS.
  auto edit = [](uint32_t m, uint32_t k, size_t entry, uint64_t value) {
    OneCore c;
    {
      GeneratorFaults f;  // the generator itself refuses these shapes now
      f.eleven_data_banks = true;
      FaultScope scope(f);
      c.add(desc(m, k, 32), false);
    }
    c.entries(0)[entry] = value;
    if (entry == 15) c.entries(0)[0] = value;  // both CBUF_CON0 writes
    return expect_throw<sim::Timeout>(c);
  };
  using reg::Id;
  // 44 rows of K = 8192 int8 in 11 data banks, 1 weight bank (the first audit's plan).
  EXPECT_NE(edit(44, 8192, 15, reg::entry(Id::CNA_CBUF_CON0, (1u << 4) | 11)).find("more than 8 data banks"),
            std::string::npos);
  // 16 rows of K = 8192: 4 data banks but only 4 weight banks for an 8-bank atom.
  EXPECT_NE(edit(16, 8192, 15, reg::entry(Id::CNA_CBUF_CON0, (4u << 4) | 4)).find("weight atom"), std::string::npos);
  // FEATURE_GRAINS m + 1 at 96 × 1024 int8 (the board-swept value is 64).
  EXPECT_NE(edit(96, 1024, 6, reg::entry(Id::CNA_CONV_CON2, 97u << 4)).find("FEATURE_GRAINS"), std::string::npos);
}

TEST(SimPc, ValuesRegistersCarryAreDecodedAsTheXmlSays) {
  // A wrong field position in ork's table would move a value; the simulator reads the XML's.
  OneCore c;
  c.add(desc(4, 64, 32), false);
  c.entries(0)[8] = reg::encode(reg::kTargetCna, 0x1020, (4u << 16) | 1);  // width and height swapped
  EXPECT_THROW(c.run(), Error);
}

TEST(SimIndependence, TheSimulatorDoesNotIncludeTheGenerator) {
  const std::string dir = ork::testing::source_dir() + "/src/npu/sim";
  DIR* d = ::opendir(dir.c_str());
  ASSERT_NE(d, nullptr);
  const std::regex forbidden(R"(#include\s+"npu/(registers|regcmd_gen|layout|task_split|cbuf_budget|matmul)\.h")");
  int files = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() < 3 || (name.substr(name.size() - 2) != ".h" && name.substr(name.size() - 4) != ".cpp")) continue;
    std::ifstream in(dir + "/" + name);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_FALSE(std::regex_search(text, forbidden)) << name << " includes the generator's side";
    ++files;
  }
  ::closedir(d);
  EXPECT_GE(files, 8);
}

TEST(ProbeRegcmd, PrintsExactlyWhatTheSimulatorFetched) {
  for (Dtype dt : {Dtype::kI8, Dtype::kF16}) {
    auto dev = Device::open_sim();
    const int64_t m = 64, k = 8300, n = 96;  // K segments, M tiles, chains on three cores
    const SplitPlan plan = plan_split(m, k, n, dt, 3);
    Buffer a = dev->alloc(plan.a_bytes, 0), w = dev->alloc(packed_weight_bytes(n, k, dt), 0);
    Buffer c = dev->alloc(plan.c_bytes, 0), regcmd = dev->alloc(plan.tasks.size() * kRegcmdStride, 0);
    Buffer tasks = dev->alloc(plan.tasks.size() * sizeof(uapi::Task), 0, kTaskBufferFlags);
    const TaskAddresses addr{a.iova(), w.iova(), c.iova(), regcmd.iova()};
    build_tasks(plan, addr, regcmd.host(), reinterpret_cast<uapi::Task*>(tasks.host()));
    uapi::Submit s = make_submit(plan, tasks.obj_addr(), 0);
    dev->submit(s);
    const std::vector<sim::FetchRecord> fetched = dev->sim_kernel()->last_fetches();
    const RegcmdDump dump = dump_regcmd(dt, m, k, n, 3, addr);
    ASSERT_EQ(fetched.size(), dump.tasks.size());
    ASSERT_GT(dump.tasks.size(), 3u);
    for (size_t i = 0; i < fetched.size(); ++i) {
      const RegcmdTaskDump& t = dump.tasks[i];
      EXPECT_EQ(fetched[i].core, t.core);
      EXPECT_EQ(fetched[i].index, t.index);
      EXPECT_EQ(fetched[i].address, t.regcmd_addr);
      EXPECT_EQ(fetched[i].entries, t.regcmd) << "task " << i;
    }
  }
}

}  // namespace
}  // namespace ork::npu
