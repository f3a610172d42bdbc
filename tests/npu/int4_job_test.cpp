// int4 matmuls as jobs (npu/task_split_int4.h through npu/matmul.h): the plan's tasks cover every
// (row, kernel, column) once in K chunks of 480 over up to three cores; one job of several int4
// weights (Q/K/V-like, gate/up-like) on the simulated device equals the scalar int32 reference bit
// for bit, worst-case codes included; the register commands are built once and reused; a rows_view
// of an int4 weight computes its first rows; the modeled work of a job equals what the simulator
// charges.
#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "npu/device.h"
#include "npu/int4_reference.h"
#include "npu/job_estimate.h"
#include "npu/layout_int4.h"
#include "npu/matmul.h"
#include "npu/task_split_int4.h"

namespace ork::npu {
namespace {

using testing::fill4;
using testing::ref_dot;

PackedWeight upload_i4(Device& dev, const std::vector<int8_t>& b, int64_t n, int64_t k) {
  PackedWeight w;
  w.n = n, w.k = k, w.dtype = Dtype::kI4;
  w.buf = dev.alloc(packed_weight_bytes_i4(n, k), 0);
  pack_b_i4(b.data(), n, k, w.buf.host());
  w.buf.sync_to_device();
  return w;
}

TEST(Int4Job, ThePlanCoversEveryElementOnceInChunksOf480OverThreeCores) {
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{2, 1536, 1536}, {2, 8960, 1536}, {256, 1000, 4160},
                         {1, 32, 64}, {3, 100, 130}}) {
    const SplitPlan p = plan_split(m, k, n, Dtype::kI4, 3);
    ASSERT_EQ(p.dtype, Dtype::kI4);
    EXPECT_EQ(p.kseg, kI4KChunk);
    EXPECT_EQ(p.segments, (pad_k(k) + 479) / 480);
    EXPECT_EQ(p.cores, uint32_t(std::min<int64_t>(3, pad_n_i4(n) / 64)));
    std::vector<int> covered(size_t(m * pad_n_i4(n) * (pad_k(k) / 32)), 0);
    for (const TaskTile& t : p.tasks) {
      EXPECT_LE(t.ks, 480);
      EXPECT_LE(t.mt, 128);
      EXPECT_EQ(t.n0 % 64, 0);
      EXPECT_EQ(t.nt % 64, 0);
      EXPECT_LE(t.nt, 4096);
      for (int64_t i = t.m0; i < t.m0 + t.mt; ++i)
        for (int64_t j = t.n0; j < t.n0 + t.nt; ++j)
          for (int64_t g = t.seg * 15; g < t.seg * 15 + t.ks / 32; ++g)
            ++covered[size_t((i * pad_n_i4(n) + j) * (pad_k(k) / 32) + g)];
    }
    for (int c : covered) ASSERT_EQ(c, 1) << m << "x" << k << "x" << n;
    uint32_t total = 0;
    for (uint32_t c = 0; c < p.cores; ++c) {
      EXPECT_EQ(p.core_start[c], total);
      total += p.core_count[c];
      EXPECT_GT(p.core_count[c], 0u);
    }
    EXPECT_EQ(total, p.tasks.size());
  }
  EXPECT_THROW(plan_split(2, 64, 64, Dtype::kI4, 0), Error);
  EXPECT_THROW(plan_split(2, 64, 64, Dtype::kI4, 3, 512), Error);  // int4 chunks are always 480
  EXPECT_THROW(plan_split(2, 64, 64, Dtype::kI4, 3, 0, 32), Error);  // a layout narrower than N
}

TEST(Int4Job, AGroupedJobEqualsTheReferenceBitForBit) {
  auto dev = Device::open_sim();
  MatmulScratch scratch(*dev);
  for (auto [m, k] : {std::pair<int64_t, int64_t>{2, 1000}, {130, 961}, {1, 64}}) {
    const std::vector<int64_t> ns = {4160, 200, 64};
    std::vector<std::vector<int8_t>> bs;
    std::vector<PackedWeight> ws;
    for (size_t i = 0; i < ns.size(); ++i) {
      bs.push_back(fill4(ns[i] * k, uint32_t(7 * i + k)));
      ws.push_back(upload_i4(*dev, bs.back(), ns[i], k));
    }
    const auto a = fill4(m * k, uint32_t(m + k));
    std::vector<const PackedWeight*> wp;
    std::vector<std::vector<int32_t>> c(ns.size());
    std::vector<void*> cp;
    for (size_t i = 0; i < ns.size(); ++i) {
      wp.push_back(&ws[i]);
      c[i].assign(size_t(m * ns[i]), -1);
      cp.push_back(c[i].data());
    }
    run_matmul_group(*dev, scratch, wp, a.data(), m, cp);
    for (size_t i = 0; i < ns.size(); ++i) EXPECT_EQ(c[i], ref_dot(a, bs[i], m, k, ns[i])) << m << "x" << k << " part " << i;
  }
}

TEST(Int4Job, WorstCaseCodesOverManyChunksAndThreeCores) {
  const int64_t m = 2, k = 8960, n = 1536;
  const std::vector<int8_t> a(size_t(m * k), -8), b(size_t(n * k), -8);
  auto dev = Device::open_sim();
  MatmulScratch scratch(*dev);
  const PackedWeight w = upload_i4(*dev, b, n, k);
  std::vector<int32_t> c(size_t(m * n));
  run_matmul(*dev, scratch, w, a.data(), m, c.data());
  EXPECT_EQ(c, ref_dot(a, b, m, k, n));
  EXPECT_EQ(c[0], 64 * 8960);
}

TEST(Int4Job, TheRegisterCommandsAreBuiltOnceAndReused) {
  auto dev = Device::open_sim();
  MatmulScratch scratch(*dev);
  const int64_t m = 2, k = 1536, n = 1536;
  const auto b = fill4(n * k, 3), a = fill4(m * k, 4);
  const PackedWeight w = upload_i4(*dev, b, n, k);
  scratch.reserve(0, [&] {
    ScratchNeed need = scratch_need(m, k, n, Dtype::kI4, 3);
    need.plan_tasks = matmul_tasks(m, k, n, Dtype::kI4, 3);
    return need;
  }());
  std::vector<int32_t> c(size_t(m * n));
  run_matmul(*dev, scratch, w, a.data(), m, c.data());
  const uint64_t built = scratch.plans_built(), submits = dev->sim_kernel()->stats().submits;
  for (int i = 0; i < 3; ++i) run_matmul(*dev, scratch, w, a.data(), m, c.data());
  EXPECT_EQ(scratch.plans_built(), built);
  EXPECT_EQ(scratch.plan_hits(), 3u);
  EXPECT_EQ(dev->sim_kernel()->stats().submits, submits + 3);
  EXPECT_EQ(c, ref_dot(a, b, m, k, n));
}

TEST(Int4Job, ARowsViewComputesTheFirstRowsOfTheWholeWeight) {
  auto dev = Device::open_sim();
  MatmulScratch scratch(*dev);
  const int64_t m = 2, k = 1000, n = 700, n1 = 384;
  const auto b = fill4(n * k, 5), a = fill4(m * k, 6);
  const PackedWeight w = upload_i4(*dev, b, n, k);
  const PackedWeight v = rows_view(w, n1);
  std::vector<int32_t> c(size_t(m * n1));
  run_matmul(*dev, scratch, v, a.data(), m, c.data());
  const std::vector<int8_t> first(b.begin(), b.begin() + n1 * k);
  EXPECT_EQ(c, ref_dot(a, first, m, k, n1));
  EXPECT_THROW(rows_view(w, 32), Error);  // not a multiple of the 64-kernel group
}

TEST(Int4Job, TheEstimateIsWhatTheSimulatorCharges) {
  sim::SimOptions o;
  o.timing_only = true;
  auto dev = Device::open_sim(o);
  MatmulScratch scratch(*dev);
  const int64_t m = 2, k = 1536;
  const std::vector<int64_t> ns = {1536, 256, 256};
  std::vector<PackedWeight> ws(ns.size());
  std::vector<const PackedWeight*> wp;
  std::vector<std::vector<int32_t>> c(ns.size());
  std::vector<void*> cp;
  for (size_t i = 0; i < ns.size(); ++i) {
    ws[i].n = ns[i], ws[i].k = k, ws[i].dtype = Dtype::kI4;
    ws[i].buf = dev->alloc(packed_weight_bytes_i4(ns[i], k), 0);
    wp.push_back(&ws[i]);
    c[i].resize(size_t(m * ns[i]));
    cp.push_back(c[i].data());
  }
  std::vector<int8_t> a(size_t(m * k), 1);
  run_matmul_group(*dev, scratch, wp, a.data(), m, cp);  // the first submit may switch domains
  const sim::SimStats before = dev->sim_kernel()->stats();
  run_matmul_group(*dev, scratch, wp, a.data(), m, cp);
  const sim::SimStats after = dev->sim_kernel()->stats();
  const JobPlan job = plan_job(m, k, ns, Dtype::kI4, 3);
  const sim::JobCost want = sim::cost_job(o.board, job_task_work(job), false);
  EXPECT_NEAR(after.modeled_ns - before.modeled_ns, want.total_ns, 1e-6 * want.total_ns);
  EXPECT_EQ(after.modeled_ddr_bytes - before.modeled_ddr_bytes, want.ddr_bytes);
  EXPECT_EQ(after.tasks - before.tasks, job.tasks());
  EXPECT_GT(after.modeled_core_busy_ns[2] - before.modeled_core_busy_ns[2], 0.0);  // all three cores
}

}  // namespace
}  // namespace ork::npu
