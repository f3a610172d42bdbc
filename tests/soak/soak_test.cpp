// Soak tests: long runs that must stay bounded and leak nothing. Labelled "slow": they run in the
// release build of scripts/test.sh, not under the sanitizers.
#include <gtest/gtest.h>

#include "gen_model/gen_model.h"
#include "model/model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "npu/device.h"
#include "npu/sim/sim_kernel.h"
#include "weights/cache.h"
#include "weights/plan.h"
#include "weights/store.h"

namespace ork::weights {
namespace {

// At least 10 GB of weights cycled through a 2 MiB window (from a warm .orkpack, as a streamed
// model reloads): residency stays within the budget and every byte of IOVA comes back.
TEST(Soak, TenGigabytesThroughASmallWindowWithoutLeaks) {
  testing::TempDir dir;
  const gen::ModelSpec s = testing::small_q8_model();
  gen::write_model(s, dir.file("m.gguf"));
  const auto model = model::Model::load(dir.file("m.gguf"));
  Store store(*model, StoreOptions{dir.file("m.orkpack")});
  auto dev = npu::Device::open_sim(npu::sim::SimOptions{2u << 20, 1, 3});
  const Plan plan = make_plan(model->weights(), dev->caps(), {});
  ASSERT_EQ(plan.mode, Residency::kStream);
  const uint64_t before = dev->counters().total_mapped_bytes;
  uint64_t cycled = 0;
  {
    Cache cache(*dev, store, plan);
    while (cycled < uint64_t(10) << 30) {
      for (size_t u = 0; u < plan.units.size(); ++u) cache.acquire(int32_t(u));
      cycled = cache.stats().bytes_loaded;
      ASSERT_LE(cache.stats().peak_resident_bytes, plan.budget_bytes);
    }
    EXPECT_GE(cache.stats().evictions, cache.stats().loads - plan.units.size());
  }
  EXPECT_GE(cycled, uint64_t(10) << 30);
  EXPECT_EQ(dev->counters().total_mapped_bytes, before) << "IOVA leaked";
  EXPECT_EQ(dev->counters().creates, dev->counters().destroys) << "buffers leaked";
}

}  // namespace
}  // namespace ork::weights
