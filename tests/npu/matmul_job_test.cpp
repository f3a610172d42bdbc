// Grouped jobs (several weights sharing A in one submit) and the plan cache of MatmulScratch, on the
// simulated device: results against a scalar reference, submits and regenerations counted, the task
// array layout the driver reads (per core: every part's share), and the cache starting over when full.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/error.h"

#include "npu/device.h"
#include "npu/int8_reference.h"
#include "npu/matmul.h"
#include "npu/matmul_job.h"

namespace ork::npu {
namespace {

using testing::fill8;
using testing::ref_i8;



TEST(MatmulJob, PlanGroupsEveryPartsTasksByCore) {
  const int64_t n[] = {256, 64, 64};
  const JobPlan job = plan_job(4, 128, n, Dtype::kI8, 3);
  ASSERT_EQ(job.parts.size(), 3u);
  EXPECT_EQ(job.cores, 3u);
  size_t total = 0;
  for (const SplitPlan& p : job.parts) total += p.tasks.size();
  EXPECT_EQ(job.tasks(), total);
  uint32_t expect_start = 0;
  for (uint32_t c = 0; c < job.cores; ++c) {
    EXPECT_EQ(job.core_start[c], expect_start);
    EXPECT_GT(job.core_count[c], 0u);
    uint32_t last_part = 0;
    for (uint32_t j = job.core_start[c]; j < job.core_start[c] + job.core_count[c]; ++j) {
      const JobPlan::Entry& e = job.order[j];
      EXPECT_EQ(job.parts[e.part].tasks[e.task].core, c);
      EXPECT_GE(e.part, last_part);  // part 0's share first, then part 1's, ...
      last_part = e.part;
    }
    expect_start += job.core_count[c];
  }
  EXPECT_EQ(expect_start, job.tasks());
  EXPECT_EQ(job.c_base[1], job.parts[0].c_bytes);
  EXPECT_EQ(job.c_bytes, job.c_base[2] + job.parts[2].c_bytes);
  // A single part is exactly plan_split's job.
  const SplitPlan one = plan_split(4, 128, 256, Dtype::kI8, 3);
  const JobPlan single = single_part_job(one);
  ASSERT_EQ(single.tasks(), one.tasks.size());
  for (uint32_t j = 0; j < single.tasks(); ++j) EXPECT_EQ(single.order[j].task, j);
}

TEST(MatmulJob, SubmitStartsAtTheJobsFirstTask) {
  const int64_t n[] = {96};
  const JobPlan job = plan_job(1, 64, n, Dtype::kI8, 3);
  const uapi::Submit s = make_job_submit(job, 0x1234, 1, 40);
  EXPECT_EQ(s.task_start, 40u);
  EXPECT_EQ(s.task_number, job.tasks());
  EXPECT_EQ(s.iommu_domain_id, 1u);
  EXPECT_EQ(s.subcore_task[2].task_start, 40u);  // three cores use subcore_task[2..4]
  EXPECT_EQ(s.subcore_task[3].task_start, 40u + job.core_start[1]);
}

TEST(MatmulJob, OneSubmitForAGroupAndTheSameResultsAsAlone) {
  auto dev = Device::open_sim({});
  MatmulScratch scratch(*dev);
  const int64_t k = 160;
  const int64_t ns[] = {96, 32, 32};
  std::vector<std::vector<int8_t>> b;
  std::vector<PackedWeight> w;
  for (int i = 0; i < 3; ++i) {
    b.push_back(fill8(ns[i] * k, 11 + i));
    w.push_back(pack_weight(*dev, b.back().data(), ns[i], k, 0));
  }
  const PackedWeight* ws[] = {&w[0], &w[1], &w[2]};
  for (int64_t m : {1, 5, 12}) {
    const auto a = fill8(m * k, uint32_t(m));
    std::vector<std::vector<int32_t>> c(3);
    std::vector<void*> cs;
    for (int i = 0; i < 3; ++i) {
      c[i].assign(size_t(m * ns[i]), -1);
      cs.push_back(c[i].data());
    }
    const uint64_t submits = dev->counters().submits;
    run_matmul_group(*dev, scratch, ws, a.data(), m, cs);
    EXPECT_EQ(dev->counters().submits, submits + 1) << m;
    for (int i = 0; i < 3; ++i) EXPECT_EQ(c[i], ref_i8(a, b[i], m, k, ns[i])) << "m=" << m << " part " << i;
  }
}

// The first rows of a packed weight as a weight of their own (npu::rows_view, the NPU part of a
// matmul split along N): the same sums as the scalar reference over those rows, for K of one and of
// several segments (the view strides the whole weight's segments), alone and in a group.
TEST(MatmulJob, ARowsViewComputesTheFirstRowsOfTheWholeWeight) {
  auto dev = Device::open_sim({});
  MatmulScratch scratch(*dev);
  for (const int64_t k : {int64_t(160), 2 * k_segment_width(Dtype::kI8) + 96}) {
    const int64_t n = 200, rows = 96;
    const auto b = fill8(n * k, uint32_t(k));
    const auto b2 = fill8(64 * k, uint32_t(k + 1));
    const PackedWeight w = pack_weight(*dev, b.data(), n, k, 0);
    const PackedWeight w2 = pack_weight(*dev, b2.data(), 64, k, 0);
    const PackedWeight v = rows_view(w, rows), v2 = rows_view(w2, 32);
    EXPECT_EQ(v.n, rows);
    EXPECT_EQ(v.layout_np, pad_n(n, Dtype::kI8));
    const std::vector<int8_t> b_rows(b.begin(), b.begin() + rows * k), b2_rows(b2.begin(), b2.begin() + 32 * k);
    for (int64_t m : {1, 9}) {
      const auto a = fill8(m * k, uint32_t(m + k));
      std::vector<int32_t> c(size_t(m * rows), -1), c2(size_t(m * 32), -1);
      matmul_i8(*dev, scratch, v, a.data(), m, c.data());
      EXPECT_EQ(c, ref_i8(a, b_rows, m, k, rows)) << "k " << k << " m " << m;
      const PackedWeight* ws[] = {&v, &v2};
      void* cs[] = {c.data(), c2.data()};
      std::fill(c.begin(), c.end(), -1);
      run_matmul_group(*dev, scratch, ws, a.data(), m, cs);
      EXPECT_EQ(c, ref_i8(a, b_rows, m, k, rows)) << "group, k " << k << " m " << m;
      EXPECT_EQ(c2, ref_i8(a, b2_rows, m, k, 32)) << "group, k " << k << " m " << m;
    }
  }
  const auto b = fill8(64 * 64, 3);
  const PackedWeight w = pack_weight(*dev, b.data(), 64, 64, 0);
  EXPECT_THROW(rows_view(w, 64), Error);  // every row: not a view of part of it
  EXPECT_THROW(rows_view(w, 48), Error);  // not a multiple of the kernel group
  EXPECT_THROW(rows_view(w, 0), Error);
}

TEST(MatmulJob, AGroupMustShareDomainAndK) {
  sim::SimOptions so(64ull << 20, 2, 3);
  auto dev = Device::open_sim(so);
  MatmulScratch scratch(*dev);
  const auto b = fill8(32 * 64, 1);
  PackedWeight w0 = pack_weight(*dev, b.data(), 32, 64, 0);
  PackedWeight w1 = pack_weight(*dev, b.data(), 32, 64, 1);
  PackedWeight w2 = pack_weight(*dev, b.data(), 64, 32, 0);
  const auto a = fill8(64, 2);
  std::vector<int32_t> c0(32), c1(64);
  void* cs[] = {c0.data(), c1.data()};
  const PackedWeight* other_domain[] = {&w0, &w1};
  EXPECT_THROW(run_matmul_group(*dev, scratch, other_domain, a.data(), 1, cs), Error);
  const PackedWeight* other_k[] = {&w0, &w2};
  EXPECT_THROW(run_matmul_group(*dev, scratch, other_k, a.data(), 1, cs), Error);
}

TEST(MatmulJob, ThePlanCacheBuildsEachJobOnce) {
  auto dev = Device::open_sim({});
  MatmulScratch scratch(*dev);
  const int64_t k = 64;
  std::vector<std::vector<int8_t>> b;
  std::vector<PackedWeight> w;
  for (int i = 0; i < 4; ++i) {
    b.push_back(fill8(64 * k, 30 + i));
    w.push_back(pack_weight(*dev, b.back().data(), 64, k, 0));
  }
  ScratchNeed need = scratch_need(8, k, 64, Dtype::kI8, 3);
  need.plan_tasks = 4 * (matmul_tasks(1, k, 64, Dtype::kI8, 3) + matmul_tasks(8, k, 64, Dtype::kI8, 3));
  scratch.reserve(0, need);
  std::vector<int32_t> c(8 * 64);
  for (int round = 0; round < 3; ++round) {
    for (int64_t m : {1, 8}) {
      const auto a = fill8(m * k, uint32_t(round * 10 + m));
      for (int i = 0; i < 4; ++i) {
        matmul_i8(*dev, scratch, w[size_t(i)], a.data(), m, c.data());
        c.resize(size_t(m * 64));
        EXPECT_EQ(c, ref_i8(a, b[size_t(i)], m, k, 64));
        c.resize(8 * 64);
      }
    }
  }
  EXPECT_EQ(scratch.plans_built(), 8u);  // 4 weights × 2 row counts, in the first round only
  EXPECT_EQ(scratch.plan_hits(), 16u);
  EXPECT_EQ(scratch.plan_cache_jobs(0), 8u);
}

TEST(MatmulJob, AFullPlanCacheStartsOverAndStaysCorrect) {
  auto dev = Device::open_sim({});
  MatmulScratch scratch(*dev);
  const int64_t k = 64;
  std::vector<std::vector<int8_t>> b;
  std::vector<PackedWeight> w;
  for (int i = 0; i < 3; ++i) {
    b.push_back(fill8(64 * k, 50 + i));
    w.push_back(pack_weight(*dev, b.back().data(), 64, k, 0));
  }
  ScratchNeed need = scratch_need(1, k, 64, Dtype::kI8, 3);
  need.plan_tasks = 2 * matmul_tasks(1, k, 64, Dtype::kI8, 3);  // room for two of the three jobs
  scratch.reserve(0, need);
  std::vector<int32_t> c(64);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 3; ++i) {
      const auto a = fill8(k, uint32_t(round * 3 + i + 1));
      matmul_i8(*dev, scratch, w[size_t(i)], a.data(), 1, c.data());
      EXPECT_EQ(c, ref_i8(a, b[size_t(i)], 1, k, 64)) << round << " " << i;
    }
  }
  EXPECT_EQ(scratch.plans_built(), 6u);  // two fit, the third empties the cache: nothing repeats in time
  EXPECT_LE(scratch.plan_cache_jobs(0), 2u);
}

TEST(MatmulJob, WithoutAPlanCacheTheSlotIsRebuiltWhenTheJobChanges) {
  auto dev = Device::open_sim({});
  MatmulScratch scratch(*dev);
  const int64_t k = 64;
  const auto b0 = fill8(64 * k, 1), b1 = fill8(64 * k, 2);
  PackedWeight w0 = pack_weight(*dev, b0.data(), 64, k, 0);
  PackedWeight w1 = pack_weight(*dev, b1.data(), 64, k, 0);
  const auto a = fill8(k, 3);
  std::vector<int32_t> c(64);
  for (int i = 0; i < 2; ++i) {
    matmul_i8(*dev, scratch, w0, a.data(), 1, c.data());
    EXPECT_EQ(c, ref_i8(a, b0, 1, k, 64));
    matmul_i8(*dev, scratch, w1, a.data(), 1, c.data());
    EXPECT_EQ(c, ref_i8(a, b1, 1, k, 64));
  }
  EXPECT_EQ(scratch.plans_built(), 4u);
  EXPECT_EQ(scratch.plan_cache_jobs(0), 0u);
}

}  // namespace
}  // namespace ork::npu
