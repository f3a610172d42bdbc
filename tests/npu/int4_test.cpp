// int4 × int4 → int16 tasks end to end on the simulator: the layouts and nibble order, the register
// values of happyme531's board-run int4 task, the simulator's independent decoder executing them
// bit-identically to the scalar reference (W4A4, and W4A8 by splitting the int8 activation), and
// the fidelity cases where it must disagree with a wrong generator: precision fields, misaligned N,
// K chunks that overflow int16, swapped nibbles, the int8 cube orientation.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "npu/cbuf_budget.h"
#include "npu/device.h"
#include "npu/int4_reference.h"
#include "npu/int8_reference.h"
#include "npu/layout.h"
#include "npu/layout_int4.h"
#include "npu/matmul_int4.h"
#include "npu/regcmd_gen.h"
#include "npu/regcmd_int4.h"
#include "npu/registers.h"
#include "npu/sim/executor.h"
#include "npu/sim/job_failure.h"
#include "quant/int4_split.h"

namespace ork::npu {
namespace {

using testing::fill4;
using testing::fill_codes;
using testing::ref_dot;

// ---- layouts ------------------------------------------------------------------------------------------

TEST(Int4Layout, EvenColumnInTheHighNibble) {
  // A 1×32 block: codes 1, −2, 3, −8 … → byte 0 = 0x1E (1 high, −2 = 0xE low), byte 1 = 0x38.
  std::vector<int8_t> a(32, 0);
  a[0] = 1, a[1] = -2, a[2] = 3, a[3] = -8;
  std::vector<uint8_t> dst(16);
  pack_a_i4(a.data(), 32, 0, 1, 32, 1, 32, dst.data());
  EXPECT_EQ(dst[0], 0x1E);
  EXPECT_EQ(dst[1], 0x38);
  pack_a_i4(a.data(), 32, 0, 1, 32, 1, 32, dst.data(), /*swap_nibbles=*/true);
  EXPECT_EQ(dst[0], 0xE1);
}

TEST(Int4Layout, AElementsSitWhereTheApiLayoutSays) {
  // (K/32, M, 32): row m of column group g at byte (g·M + m)·16.
  const int64_t m = 3, k = 64;
  std::vector<int8_t> a(m * k, 0);
  a[2 * k + 33] = 5;  // row 2, column 33 (group 1, odd: low nibble of byte 0 of its 16)
  std::vector<uint8_t> dst(m * k / 2);
  pack_a_i4(a.data(), k, 0, m, k, m, k, dst.data());
  for (size_t i = 0; i < dst.size(); ++i) EXPECT_EQ(dst[i], i == size_t((1 * m + 2) * 16) ? 0x05 : 0x00) << i;
}

TEST(Int4Layout, WeightsRoundTripThroughChunksOfAtMost480Columns) {
  for (auto [n, k] : {std::pair<int64_t, int64_t>{1, 1}, {64, 32}, {70, 500}, {130, 1000}, {64, 961}}) {
    const auto b = fill4(n * k, uint32_t(n * 31 + k));
    std::vector<uint8_t> packed(packed_weight_bytes_i4(n, k));
    pack_b_i4(b.data(), n, k, packed.data());
    std::vector<int8_t> back(size_t(n * k));
    unpack_b_i4(packed.data(), n, k, back.data());
    EXPECT_EQ(back, b) << n << "x" << k;
    EXPECT_EQ(packed.size(), uint64_t(pad_n_i4(n)) * pad_k(k) / 2);
    for (int64_t c = 0; c < i4_k_chunks(pad_k(k)); ++c) EXPECT_LE(i4_chunk_width(c, pad_k(k)), kI4KChunk);
  }
  // Kernel 65, column 481: chunk 1 (width 64 of K = 544), N group 1, row 1 of that group, column 1.
  std::vector<int8_t> b(size_t(128 * 544), 0);
  b[65 * 544 + 481] = -1;
  std::vector<uint8_t> packed(packed_weight_bytes_i4(128, 544));
  pack_b_i4(b.data(), 128, 544, packed.data());
  const int64_t at = i4_chunk_offset(1, 128) + i4_b_byte_in_chunk(65, 1, 64);
  EXPECT_EQ(at, 128 * 480 / 2 + ((1 * 2 + 0) * 64 + 1) * 16 + 0);
  EXPECT_EQ(packed[size_t(at)], 0x0F);
}

TEST(Int4Layout, SmallerChunksRoundTripAndLargerOnesAreRefused) {
  const int64_t n = 70, k = 200;
  const auto b = fill4(n * k, 5);
  std::vector<uint8_t> packed(packed_weight_bytes_i4(n, k));
  pack_b_i4(b.data(), n, k, packed.data(), false, 32);
  std::vector<int8_t> back(size_t(n * k));
  unpack_b_i4(packed.data(), n, k, back.data(), 32);
  EXPECT_EQ(back, b);
  EXPECT_THROW(pack_b_i4(b.data(), n, k, packed.data(), false, 512), Error);  // can overflow int16
  EXPECT_THROW(pack_b_i4(b.data(), n, k, packed.data(), false, 48), Error);
  EXPECT_THROW(plan_int4(4, k, n, 16), Error);
}

TEST(Int4Layout, CodesOutsideInt4AreRefused) {
  std::vector<int8_t> b(64 * 32, 0);
  b[100] = 8;
  std::vector<uint8_t> packed(packed_weight_bytes_i4(64, 32));
  try {
    pack_b_i4(b.data(), 64, 32, packed.data());
    FAIL() << "accepted code 8";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("code 8 at (3, 4)"), std::string::npos) << e.what();
  }
}

// ---- register commands --------------------------------------------------------------------------------

uint32_t value_of(const uint64_t* e, size_t count, uint16_t target, uint16_t offset, int nth = 0) {
  for (size_t i = 0; i < count; ++i)
    if (uint16_t(e[i] >> 48) == target && uint16_t(e[i]) == offset && nth-- == 0) return uint32_t(e[i] >> 16);
  ADD_FAILURE() << "no write to " << std::hex << offset;
  return 0;
}
// Replaces every write to (target, offset) with `value`.
void patch(uint64_t* e, size_t count, uint16_t target, uint16_t offset, uint32_t value) {
  for (size_t i = 0; i < count; ++i)
    if (uint16_t(e[i] >> 48) == target && uint16_t(e[i]) == offset) e[i] = reg::encode(target, offset, value);
}
constexpr uint16_t kCna = 0x0201, kCore = 0x0801, kDpu = 0x1001;

TEST(Int4Regcmd, TheValuesOfHappymesBoardRunInt4Task) {
  // happyme531/rknpu2_matmul_open dac239c5 src/rk_npu_i4_regs.cpp make_i4_regs (native layout).
  for (auto [m, k, n] : {std::tuple<uint32_t, uint32_t, uint32_t>{1, 32, 64}, {7, 480, 128}, {128, 2048, 4096}}) {
    Int4TaskDesc t;
    t.m = m, t.k = k, t.n = n, t.a_addr = 0x10000, t.b_addr = 0x20000, t.c_addr = 0x30000;
    std::vector<uint64_t> e(kMatmulEntries);
    gen_matmul_regcmd_i4(t, e.data());
    const uint32_t banks = std::max<uint32_t>(1, (m * k / 2 + 32767) / 32768);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x1040), ((12 - banks) << 4) | banks);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x100C), 0x360u);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x100C, 1), 0x360u);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x1010), 2u << 4);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x1014), 9u);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x1020), (m << 16) | 1);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x1024), ((k - 1) << 16) | k);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x1028), m);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x102C), m);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x1030), k * n / 2);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x1034), k / 2);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x1038), 0x01010000u | n);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x1044), m * ((k + 127) / 128));
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x104C), 0xBu);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x1050), 0x10000u);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x1078), 0xF000Fu);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x107C), 4 * m);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x1080), uint32_t(-3 * int64_t(m)) & 0xFFFFFFFu);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x1084), (m << 16) | 1);
    EXPECT_EQ(value_of(e.data(), e.size(), kCna, 0x1088), k);
    EXPECT_EQ(value_of(e.data(), e.size(), kCore, 0x3010), 0x601u);
    EXPECT_EQ(value_of(e.data(), e.size(), kCore, 0x3014), m - 1);
    EXPECT_EQ(value_of(e.data(), e.size(), kCore, 0x3018), n - 1);
    EXPECT_EQ(value_of(e.data(), e.size(), kDpu, 0x400C), 0x1E4u);
    EXPECT_EQ(value_of(e.data(), e.size(), kDpu, 0x4010), 0x38000006u);
    EXPECT_EQ(value_of(e.data(), e.size(), kDpu, 0x4024), 16 * m);
    EXPECT_EQ(value_of(e.data(), e.size(), kDpu, 0x4030), m - 1);
    EXPECT_EQ(value_of(e.data(), e.size(), kDpu, 0x4034), 0u);
    EXPECT_EQ(value_of(e.data(), e.size(), kDpu, 0x403C), ((n - 1) << 16) | (n - 1));
    EXPECT_EQ(value_of(e.data(), e.size(), kDpu, 0x4040), 0x53u);
    EXPECT_EQ(value_of(e.data(), e.size(), kDpu, 0x4050), 0x7FEu);
    EXPECT_EQ(value_of(e.data(), e.size(), kDpu, 0x4058), n - 1);
    EXPECT_EQ(value_of(e.data(), e.size(), kDpu, 0x405C), m - 1);
    EXPECT_EQ(value_of(e.data(), e.size(), kDpu, 0x4060), 0x53u);
    EXPECT_EQ(value_of(e.data(), e.size(), kDpu, 0x4070), 0x383u);
    EXPECT_EQ(value_of(e.data(), e.size(), kDpu, 0x4084), 1u);
    EXPECT_EQ(value_of(e.data(), e.size(), kDpu, 0x40C0), 128 * m);
  }
}

TEST(Int4Regcmd, TheGeneratorRefusesShapesOutsideTheInt4Task) {
  Int4TaskDesc t;
  t.m = 4, t.k = 64, t.n = 32;  // N not a multiple of 64
  std::vector<uint64_t> e(kMatmulEntries);
  EXPECT_THROW(gen_matmul_regcmd_i4(t, e.data()), Error);
  t.n = 64, t.m = 129;
  EXPECT_THROW(gen_matmul_regcmd_i4(t, e.data()), Error);
  t.m = 4, t.k = 2080;
  EXPECT_THROW(gen_matmul_regcmd_i4(t, e.data()), Error);
  t.k = 64, t.a_addr = 8;
  EXPECT_THROW(gen_matmul_regcmd_i4(t, e.data()), Error);
}

TEST(Int4Plan, NoTaskHasAKChunkAboveTheOverflowFreeLimit) {
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {7, 100, 70}, {130, 1000, 130},
                         {300, 4096, 4160}, {2, 11008, 64}}) {
    const Int4Plan p = plan_int4(m, k, n);
    int64_t columns = 0;
    for (const Int4Task& t : p.tasks) {
      EXPECT_LE(t.kc, uint32_t(kI4KChunk));
      EXPECT_LE(t.mt, kI4MaxTaskM);
      EXPECT_EQ(t.nt % 64, 0u);
      EXPECT_EQ(t.a_off % 16, 0u);
      EXPECT_EQ(t.b_off % 16, 0u);
      EXPECT_EQ(t.c_off % 16, 0u);
      if (t.m0 == 0 && t.n0 == 0) columns += t.kc;
    }
    EXPECT_EQ(columns, pad_k(k)) << m << "x" << k << "x" << n;
  }
}

// ---- one core, task by task (the executor decodes what the generator wrote) ------------------------------

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

constexpr uint64_t kRegcmd = 0x100000, kA = 0x200000, kB = 0x300000, kC = 0x700000;

// One int4 task of m×k×n codes on one core: regcmd at kRegcmd, operands at kA/kB/kC.
struct OneTask {
  Space space{0x100000, 16 << 20};
  sim::RegisterFile regs;
  uint32_t m, k, n;
  std::vector<uint64_t> e = std::vector<uint64_t>(kMatmulEntries);
  OneTask(uint32_t m_, uint32_t k_, uint32_t n_, const std::vector<int8_t>& a, const std::vector<int8_t>& b,
          bool swap_a = false)
      : m(m_), k(k_), n(n_) {
    Int4TaskDesc t;
    t.m = m, t.k = k, t.n = n, t.a_addr = kA, t.b_addr = kB, t.c_addr = kC;
    gen_matmul_regcmd_i4(t, e.data());
    pack_a_i4(a.data(), k, 0, m, k, m, k, space.at(kA), swap_a);
    pack_b_i4(b.data(), n, k, space.at(kB));
  }
  void run() {
    std::memcpy(space.at(kRegcmd), e.data(), e.size() * 8);
    uapi::Task task{};
    task.enable_mask = reg::kTaskEnableMask;
    task.int_mask = reg::kTaskIntMask;
    task.regcfg_amount = kMatmulEntries - reg::kPcTailEntries;
    task.regcmd_addr = kRegcmd;
    sim::execute_tasks(space, regs, 0, &task, 1);
  }
  std::vector<int32_t> c() {
    std::vector<int32_t> out(size_t(m) * n);
    unpack_c_i16(reinterpret_cast<const int16_t*>(space.at(kC)), m, m, n, out.data(), n, false);
    return out;
  }
  template <typename E>
  std::string failure() {
    try {
      run();
    } catch (const E& ex) {
      return ex.what();
    }
    ADD_FAILURE() << "no failure of the expected kind";
    return "";
  }
};

TEST(Int4Sim, OneTaskIsBitIdenticalToTheScalarReference) {
  for (auto [m, k, n] : {std::tuple<uint32_t, uint32_t, uint32_t>{1, 32, 64}, {5, 96, 64}, {128, 480, 192},
                         {16, 448, 4096}}) {
    const auto a = fill4(int64_t(m) * k, m + k), b = fill4(int64_t(n) * k, n * 7 + 1);
    OneTask t(m, k, n, a, b);
    ASSERT_NO_THROW(t.run()) << m << "x" << k << "x" << n;
    EXPECT_EQ(t.c(), ref_dot(a, b, m, k, n)) << m << "x" << k << "x" << n;
  }
}

TEST(Int4Sim, TheWorstCaseCodesFitAChunkOf480) {
  const std::vector<int8_t> a(4 * 480, -8), b(64 * 480, -8);
  OneTask t(4, 480, 64, a, b);
  ASSERT_NO_THROW(t.run());
  EXPECT_EQ(t.c()[0], 480 * 64);
}

TEST(SimFidelityInt4, AKChunkThatOverflowsInt16IsFlagged) {
  // 512 columns of (−8)·(−8) = 32768: one past int16. The envelope allows k = 512; the sum does not.
  const std::vector<int8_t> a(4 * 512, -8), b(64 * 512, -8);
  OneTask t(4, 512, 64, a, b);
  const std::string why = t.failure<sim::Unmodelled>();
  EXPECT_NE(why.find("int16 overflow"), std::string::npos) << why;
  EXPECT_NE(why.find("32768"), std::string::npos) << why;
  // The same K with codes whose sums stay inside int16 runs.
  const auto small = fill_codes(4 * 512, 3, -1, 1);
  OneTask ok(4, 512, 64, small, fill_codes(64 * 512, 4, -1, 1));
  EXPECT_NO_THROW(ok.run());
}

TEST(SimFidelityInt4, SwappedNibblesGiveAVisiblyDifferentResult) {
  const uint32_t m = 4, k = 64, n = 64;
  const auto a = fill4(m * k, 11), b = fill4(n * k, 12);
  // Only the activations packed the wrong way round (swapping both sides permutes k consistently and
  // leaves every dot product unchanged).
  OneTask t(m, k, n, a, b, /*swap_a=*/true);
  ASSERT_NO_THROW(t.run());
  const auto want = ref_dot(a, b, m, k, n), got = t.c();
  int differ = 0;
  for (size_t i = 0; i < want.size(); ++i) differ += want[i] != got[i];
  EXPECT_GT(differ, int(want.size()) / 2);
}

TEST(SimFidelityInt4, WrongPrecisionFieldsAreRejected) {
  const auto a = fill4(4 * 64, 1), b = fill4(64 * 64, 2);
  {  // DPU writing int32 from int4 inputs
    OneTask t(4, 64, 64, a, b);
    patch(t.e.data(), t.e.size(), kDpu, 0x4010, 0x98000006u);  // OUT_PRECISION 4 (int32)
    EXPECT_NE(t.failure<sim::Unmodelled>().find("OUT_PRECISION other than int16"), std::string::npos);
  }
  {  // the CORE left at int8
    OneTask t(4, 64, 64, a, b);
    patch(t.e.data(), t.e.size(), kCore, 0x3010, 0x001u);
    EXPECT_NE(t.failure<sim::Timeout>().find("CORE PROC_PRECISION"), std::string::npos);
  }
  {  // CNA IN_PRECISION int4 but PROC_PRECISION int8
    OneTask t(4, 64, 64, a, b);
    patch(t.e.data(), t.e.size(), kCna, 0x100C, 0x060u);
    EXPECT_THROW(t.run(), sim::Unmodelled);
  }
  {  // a generator announcing int8 everywhere for an int4 geometry: the int8 decoder refuses it
    GeneratorFaults f;
    f.int8_precision_on_int4 = true;
    generator_faults() = f;
    OneTask t(4, 64, 64, a, b);
    generator_faults() = GeneratorFaults{};
    EXPECT_THROW(t.run(), Error);
  }
}

TEST(SimFidelityInt4, MisalignedNIsRejected) {
  // A consistent 4×64×32 int4 stream (every N field says 32): 32 is not the int4 kernel group.
  const auto a = fill4(4 * 64, 1), b = fill4(64 * 64, 2);
  OneTask t(4, 64, 64, a, b);
  const uint32_t n = 32, k = 64;
  patch(t.e.data(), t.e.size(), kCna, 0x1030, n * k / 2);
  patch(t.e.data(), t.e.size(), kCna, 0x1038, 0x01010000u | n);
  patch(t.e.data(), t.e.size(), kCore, 0x3018, n - 1);
  patch(t.e.data(), t.e.size(), kDpu, 0x403C, ((n - 1) << 16) | (n - 1));
  patch(t.e.data(), t.e.size(), kDpu, 0x4058, n - 1);
  EXPECT_NE(t.failure<sim::Timeout>().find("int4 kernel group 64"), std::string::npos);
}

TEST(SimFidelityInt4, TheInt8CubeOrientationIsRejected) {
  // Rows along the height (the int8 task's DATA_SIZE0) with int4 precision.
  const auto a = fill4(4 * 64, 1), b = fill4(64 * 64, 2);
  OneTask t(4, 64, 64, a, b);
  patch(t.e.data(), t.e.size(), kCna, 0x1020, (1u << 16) | 4);
  EXPECT_NE(t.failure<sim::Unmodelled>().find("DATAIN_HEIGHT is not 1"), std::string::npos);
}

TEST(SimFidelityInt4, UnsettledStridesAreRejected) {
  const auto a = fill4(8 * 64, 1), b = fill4(64 * 64, 2);
  OneTask t(8, 64, 64, a, b);
  patch(t.e.data(), t.e.size(), kCna, 0x107C, 4);  // the int8 task's LINE_STRIDE
  EXPECT_NE(t.failure<sim::Timeout>().find("LINE_STRIDE"), std::string::npos);
}

// ---- through the device: plan, chained tasks, K chunks summed on the host --------------------------------

std::vector<int32_t> run_on_sim(const std::vector<int8_t>& a, const std::vector<int8_t>& b, int64_t m, int64_t k,
                                int64_t n) {
  auto dev = Device::open_sim();
  Buffer w = dev->alloc(packed_weight_bytes_i4(n, k), 0);
  pack_b_i4(b.data(), n, k, w.host());
  w.sync_to_device();
  std::vector<int32_t> c(size_t(m * n));
  matmul_i4(*dev, w, a.data(), m, k, n, c.data());
  return c;
}

TEST(Int4Matmul, W4A4OnTheSimulatedDeviceIsBitIdenticalToTheReference) {
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {1, 896, 64}, {7, 100, 70},
                         {130, 1000, 130}, {3, 2048, 4160}}) {
    const auto a = fill4(m * k, uint32_t(m + 3 * k)), b = fill4(n * k, uint32_t(n + 5 * k));
    EXPECT_EQ(run_on_sim(a, b, m, k, n), ref_dot(a, b, m, k, n)) << m << "x" << k << "x" << n;
  }
}

TEST(Int4Matmul, ChunksKeptApartSumToTheReferencePerChunk) {
  const int64_t m = 3, k = 100, n = 70, chunk = 64;  // chunks of 64 and 32 (K padded to 128)
  const auto a = fill4(m * k, 21), b = fill4(n * k, 22);
  auto dev = Device::open_sim();
  Buffer w = dev->alloc(packed_weight_bytes_i4(n, k), 0);
  pack_b_i4(b.data(), n, k, w.host(), false, chunk);
  w.sync_to_device();
  std::vector<int32_t> c(size_t(2 * m * n));
  matmul_i4_chunks(*dev, w, a.data(), m, k, n, chunk, c.data());
  for (int64_t g = 0; g < 2; ++g)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int32_t s = 0;
        for (int64_t t = g * chunk; t < std::min(k, (g + 1) * chunk); ++t) s += int32_t(a[size_t(i * k + t)]) * b[size_t(j * k + t)];
        EXPECT_EQ(c[size_t((g * m + i) * n + j)], s) << g << " " << i << " " << j;
      }
}

TEST(Int4Matmul, WorstCaseCodesNeverOverflowBecauseOfTheChunks) {
  const int64_t m = 2, k = 4096, n = 64;
  const std::vector<int8_t> a(size_t(m * k), -8), b(size_t(n * k), -8);
  EXPECT_GT(testing::max_chunk_sum(a, b, m, k, n, 512), 32767);  // a 512 chunk would overflow
  EXPECT_EQ(run_on_sim(a, b, m, k, n), ref_dot(a, b, m, k, n));
}

TEST(Int4Matmul, W4A8BySplittingTheActivationIsBitIdenticalToInt8TimesInt4) {
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 64, 64}, {5, 1000, 96}, {65, 1536, 130}}) {
    auto q = testing::fill8(m * k, uint32_t(k));
    for (auto& v : q) v = v == -128 ? int8_t(-127) : v;  // the quantizers' range
    q[0] = 127, q[1] = -127;
    const auto b = fill4(n * k, uint32_t(n));
    std::vector<int8_t> halves(size_t(2 * m * k));
    quant::split_int8_rows_to_int4(q.data(), m, k, halves.data());
    for (int8_t h : halves) ASSERT_TRUE(h >= -8 && h <= 7);
    const auto r = run_on_sim(halves, b, 2 * m, k, n);
    std::vector<int32_t> corr(static_cast<size_t>(n)), c(static_cast<size_t>(m * n));
    quant::int4_split_correction(b.data(), n, k, corr.data());
    quant::combine_int4_split(r.data(), m, n, corr.data(), c.data());
    EXPECT_EQ(c, ref_dot(q, b, m, k, n)) << m << "x" << k << "x" << n;
  }
}

TEST(Int4Split, EveryInt8CodeIsSixteenHighPlusLowPlusEight) {
  std::vector<int8_t> q(256);
  for (int v = -128; v < 128; ++v) q[size_t(v + 128)] = int8_t(v);
  std::vector<int8_t> out(512);
  quant::split_int8_rows_to_int4(q.data(), 1, 256, out.data());
  for (int i = 0; i < 256; ++i) {
    const int hi = out[size_t(i)], lo = out[size_t(256 + i)];
    EXPECT_TRUE(hi >= -8 && hi <= 7 && lo >= -8 && lo <= 7) << i;
    EXPECT_EQ(16 * hi + lo + 8, i - 128);
  }
}

}  // namespace
}  // namespace ork::npu
