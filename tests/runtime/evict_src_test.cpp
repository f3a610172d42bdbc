// EngineOptions::evict_src (ORK_EVICT_SRC, --evict-src) reaches the weight store: on a device, the
// GGUF pages of every weight packed at load leave the process's mapping; without it they stay.
#include <gtest/gtest.h>

#include <cstdint>

#include "gen_model/gen_model.h"
#include "model/mapped_rss.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "runtime/engine.h"

namespace ork::runtime {
namespace {

// Resident kB of the engine's GGUF mapping after a resident load on the simulator.
int64_t rss_after_load(const std::string& path, bool evict_src, uint64_t* linear_bytes) {
  EngineOptions o;
  o.model_path = path;
  o.device = "sim";
  o.threads = 1;
  o.npu.sim_window_bytes = 64u << 20;
  o.evict_src = evict_src;
  Engine e(o);
  EXPECT_EQ(e.plan()->mode, weights::Residency::kResident);
  *linear_bytes = 0;
  for (const model::Linear* l : e.model().weights().linears()) *linear_bytes += l->w->n_bytes;
  return testing::mapped_rss_kb(e.model().file().mapping().data());
}

TEST(EngineEvictSrc, PackedWeightsLeaveTheMappingOnlyWhenAsked) {
  testing::TempDir dir;
  const std::string path = dir.file("m.gguf");
  gen::write_model(testing::small_q8_model(), path);
  uint64_t linear_bytes = 0;
  const int64_t kept = rss_after_load(path, false, &linear_bytes);
  if (kept <= 0) GTEST_SKIP() << "/proc/self/smaps gives no resident size for the mapping";
  const int64_t evicted = rss_after_load(path, true, &linear_bytes);
  ASSERT_GT(linear_bytes, 1u << 20);
  // Packing read every linear, so without eviction its pages are resident; with it, all but at most
  // one partial page at each end of each tensor are dropped.
  EXPECT_GE(kept, int64_t(linear_bytes / 1024) - 64) << "kept " << kept << " kB";
  EXPECT_LE(evicted, kept - int64_t(linear_bytes / 1024) + 2 * 4 * 64)
      << "kept " << kept << " kB, evicted " << evicted << " kB, linears " << linear_bytes / 1024 << " kB";
}

}  // namespace
}  // namespace ork::runtime
