// weights::Cache on the simulated NPU: resident plans load once; streaming keeps the budget,
// evicts least-recently-used units, survives IOVA-wall hits, and cycles gigabytes without leaking.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "gen_model/gen_model.h"
#include "model/model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "npu/device.h"
#include "npu/sim/sim_kernel.h"
#include "weights/cache.h"
#include "weights/plan.h"
#include "weights/prefetcher.h"
#include "weights/store.h"

namespace ork::weights {
namespace {

class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const gen::ModelSpec s = testing::small_q8_model();
    gen::write_model(s, dir_.file("m.gguf"));
    model_ = model::Model::load(dir_.file("m.gguf"));
    store_ = std::make_unique<Store>(*model_, StoreOptions{});
  }
  std::unique_ptr<npu::Device> device(uint64_t window, uint32_t domains) {
    return npu::Device::open_sim(npu::sim::SimOptions{window, domains, 3});
  }
  testing::TempDir dir_;
  std::unique_ptr<model::Model> model_;
  std::unique_ptr<Store> store_;
};

TEST_F(CacheTest, ResidentLoadsEveryUnitOnceInItsDomain) {
  auto dev = device(2u << 20, 16);
  const Plan plan = make_plan(model_->weights(), dev->caps(), {});
  ASSERT_EQ(plan.mode, Residency::kResident);
  ASSERT_GT(plan.domains_used, 1u);
  Cache cache(*dev, *store_, plan);
  cache.load_all();
  cache.mark_warm();
  for (int rep = 0; rep < 3; ++rep) {
    for (size_t u = 0; u < plan.units.size(); ++u) {
      const Cache::Lease l = cache.acquire(int32_t(u));
      EXPECT_EQ(l.weight().domain(), plan.weights[size_t(plan.units[u].weight)].domain);
    }
  }
  const CacheStats s = cache.stats();
  EXPECT_EQ(s.loads, plan.units.size());
  EXPECT_EQ(s.evictions, 0u);
  EXPECT_EQ(s.loads_after_warm, 0u);
  EXPECT_EQ(s.resident_bytes, plan.weight_bytes());
  for (uint32_t d = 0; d < plan.domains_used; ++d) {
    EXPECT_EQ(dev->counters().mapped_bytes[d] >= plan.domain_bytes[d], true) << d;
  }
}

TEST_F(CacheTest, StreamingKeepsTheBudgetAndEvictsLeastRecentlyUsed) {
  auto dev = device(2u << 20, 1);
  const Plan plan = make_plan(model_->weights(), dev->caps(), {});
  ASSERT_EQ(plan.mode, Residency::kStream);
  Cache cache(*dev, *store_, plan);
  for (int rep = 0; rep < 3; ++rep) {
    for (size_t u = 0; u < plan.units.size(); ++u) {
      const Cache::Lease l = cache.acquire(int32_t(u));
      EXPECT_LE(cache.stats().resident_bytes, plan.budget_bytes);
    }
  }
  const CacheStats s = cache.stats();
  EXPECT_GT(s.evictions, 0u);
  EXPECT_LE(s.peak_resident_bytes, plan.budget_bytes);
  // What is mapped now is exactly what was loaded and not evicted.
  uint64_t loaded_units = 0, loaded_bytes = 0;
  for (size_t u = 0; u < plan.units.size(); ++u) {
    if (cache.is_loaded(int32_t(u))) {
      ++loaded_units;
      loaded_bytes += plan.slice(plan.units[u]).bytes;
    }
  }
  EXPECT_EQ(loaded_units, s.loads - s.evictions);
  EXPECT_EQ(loaded_bytes, s.resident_bytes);
  // The most recently used unit is still there; the least recently used one was evicted.
  EXPECT_TRUE(cache.is_loaded(int32_t(plan.units.size() - 1)));
  EXPECT_FALSE(cache.is_loaded(0));
}

// A streamed unit loaded again comes from the packed bytes kept in host memory, not from a repack:
// with a host budget that holds every weight, each is packed once however often it streams.
TEST_F(CacheTest, StreamingWithAHostBudgetPacksEachWeightOnce) {
  auto dev = device(2u << 20, 1);
  const Plan plan = make_plan(model_->weights(), dev->caps(), {});
  ASSERT_EQ(plan.mode, Residency::kStream);
  Cache cache(*dev, *store_, plan, uint64_t(64) << 20);
  for (int rep = 0; rep < 3; ++rep) {
    for (size_t u = 0; u < plan.units.size(); ++u) cache.acquire(int32_t(u));
  }
  const CacheStats s = cache.stats();
  EXPECT_GT(s.evictions, 0u);
  EXPECT_GT(s.loads, plan.weights.size());
  EXPECT_EQ(store_->stats().packed, plan.weights.size());
  EXPECT_EQ(s.host.misses, plan.weights.size());
  EXPECT_EQ(s.host.evictions, 0u);
  EXPECT_EQ(s.host.hits, s.loads - plan.weights.size());
  // Without a host budget, only the last weight is kept (its slices): a weight streamed again is repacked.
  Store store(*model_, StoreOptions{});
  Cache none(*dev, store, plan);
  for (int rep = 0; rep < 3; ++rep) {
    for (size_t u = 0; u < plan.units.size(); ++u) none.acquire(int32_t(u));
  }
  EXPECT_GT(store.stats().packed, 2 * plan.weights.size());
}

TEST_F(CacheTest, IovaWallHitsEvictMoreAndRetry) {
  auto dev = device(2u << 20, 1);
  Plan plan = make_plan(model_->weights(), dev->caps(), {});
  ASSERT_EQ(plan.mode, Residency::kStream);
  plan.budget_bytes = 2u << 20;  // more than the window can place: allocations hit the wall first
  Cache cache(*dev, *store_, plan);
  for (int rep = 0; rep < 2; ++rep) {
    for (size_t u = 0; u < plan.units.size(); ++u) cache.acquire(int32_t(u));
  }
  EXPECT_GT(cache.stats().iova_wall_hits, 0u);
  EXPECT_GT(cache.stats().evictions, 0u);
}

TEST_F(CacheTest, ConcurrentPrefetchAndAcquireAgree) {
  auto dev = device(2u << 20, 1);
  const Plan plan = make_plan(model_->weights(), dev->caps(), {});
  Cache cache(*dev, *store_, plan);
  {
    Prefetcher prefetcher(cache, plan.prefetch_slots);
    for (int rep = 0; rep < 4; ++rep) {
      for (size_t u = 0; u < plan.units.size(); ++u) {
        prefetcher.advance(int32_t(u));
        const Cache::Lease l = cache.acquire(int32_t(u));
        EXPECT_EQ(l.weight().n, plan.slice(plan.units[u]).n1 - plan.slice(plan.units[u]).n0);
      }
    }
  }
  const CacheStats s = cache.stats();
  EXPECT_LE(s.peak_resident_bytes, plan.budget_bytes);
}

// wait_idle returns once the units after the announced one are loaded and nothing is in flight:
// the cache and the device's counters then hold still until the next advance.
TEST_F(CacheTest, ConcurrentPrefetcherWaitIdleLeavesNothingInFlight) {
  auto dev = device(2u << 20, 1);
  const Plan plan = make_plan(model_->weights(), dev->caps(), {});
  ASSERT_EQ(plan.mode, Residency::kStream);
  ASSERT_GE(plan.units.size(), size_t(plan.prefetch_slots) + 2);
  Cache cache(*dev, *store_, plan);
  Prefetcher prefetcher(cache, plan.prefetch_slots);
  prefetcher.wait_idle();  // nothing announced yet: idle at once
  for (int32_t u : {0, 3, 1}) {
    prefetcher.advance(u);
    prefetcher.wait_idle();
    const CacheStats s = cache.stats();
    const uint64_t mapped = dev->counters().total_mapped_bytes;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(cache.stats().loads, s.loads) << "a load after wait_idle, unit " << u;
    EXPECT_EQ(dev->counters().total_mapped_bytes, mapped);
    EXPECT_GT(cache.load_count(int32_t((u + 1) % plan.units.size())), 0u) << "the next unit was prefetched";
  }
}

}  // namespace
}  // namespace ork::weights
