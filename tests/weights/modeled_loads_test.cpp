// weights::ModeledLoads against hand-computed pipelines: a loader that keeps up hides every load, one
// that is slower makes compute wait, the prefetch depth bounds how early a load may start, and units
// not loaded again cost nothing, a load starts no earlier than its request.
#include <gtest/gtest.h>

#include "weights/modeled_loads.h"

namespace ork::weights {
namespace {

// 1 byte per ns: a unit of B bytes loads in B ns.
TEST(ModeledLoads, ALoaderThatKeepsUpIsHidden) {
  ModeledLoads m(2, 1.0);
  // Compute needs a unit every 100 ns; loads take 50 ns. The first has nothing to hide behind.
  EXPECT_DOUBLE_EQ(m.acquire(0, 50, true), 50);
  for (int i = 1; i < 10; ++i) EXPECT_DOUBLE_EQ(m.acquire(100.0 * i, 50, true), 0) << i;
  EXPECT_EQ(m.stats().loads, 10u);
  EXPECT_DOUBLE_EQ(m.stats().load_ns, 500);
  EXPECT_DOUBLE_EQ(m.stats().stall_ns, 50);
  EXPECT_DOUBLE_EQ(m.stats().hidden_fraction(), 0.9);
}

TEST(ModeledLoads, ASlowerLoaderMakesComputeWait) {
  ModeledLoads m(4, 1.0);
  // Loads of 150 ns every 100 ns of compute: the loader is the bottleneck, 50 ns lost per unit once
  // the pipeline runs.
  double total = 0;
  for (int i = 0; i < 8; ++i) total += m.acquire(100.0 * i, 150, true);
  // ready(s) = 150 (s + 1): the first waits 150 ns, every later one 50 ns.
  EXPECT_DOUBLE_EQ(total, 150.0 * 8 - 100.0 * 7);
  EXPECT_DOUBLE_EQ(m.stats().stall_ns, total);
}

TEST(ModeledLoads, TheDepthBoundsHowEarlyALoadStarts) {
  // Units of 180 and 20 bytes alternating, 100 ns of compute each: on average the loader keeps up.
  // With one slot a load starts only once compute reached the unit before it, so each large unit
  // shows 80 ns; with four the loader runs ahead and only the first load shows.
  ModeledLoads shallow(1, 1.0), deep(4, 1.0);
  double s1 = 0, s4 = 0;
  for (int i = 0; i < 6; ++i) {
    const uint64_t bytes = i % 2 == 0 ? 180 : 20;
    s1 += shallow.acquire(100.0 * i, bytes, true);
    s4 += deep.acquire(100.0 * i, bytes, true);
  }
  EXPECT_DOUBLE_EQ(s1, 180 + 80 + 80);
  EXPECT_DOUBLE_EQ(s4, 180);
}

TEST(ModeledLoads, UnitsNotLoadedAgainAreFree) {
  ModeledLoads m(2, 1.0);
  EXPECT_DOUBLE_EQ(m.acquire(0, 1000, true), 1000);
  EXPECT_DOUBLE_EQ(m.acquire(10, 1000, false), 0);
  EXPECT_EQ(m.stats().loads, 1u);
}

TEST(ModeledLoads, ALoadWaitsForItsRequest) {
  // Three routed experts of 50 bytes, named by the router at 1000 ns, used at 1000, 1100, 1200: the
  // first waits its whole load, the others are hidden behind the compute of the one before.
  ModeledLoads routed(8, 1.0);
  EXPECT_DOUBLE_EQ(routed.acquire(1000, 50, true, 1000), 50);
  EXPECT_DOUBLE_EQ(routed.acquire(1100, 50, true, 1000), 0);
  EXPECT_DOUBLE_EQ(routed.acquire(1200, 50, true, 1000), 0);
  // Guessed at 900 (the layer before): even the first is hidden.
  ModeledLoads guessed(8, 1.0);
  EXPECT_DOUBLE_EQ(guessed.acquire(1000, 50, true, 900), 0);
  // A request after the acquire (a miss) counts from the acquire itself.
  ModeledLoads missed(8, 1.0);
  EXPECT_DOUBLE_EQ(missed.acquire(1000, 50, true, 5000), 50);
  EXPECT_DOUBLE_EQ(missed.timeline(1000), 1050);
}

TEST(ModeledLoads, RoutedUnitsAreClassifiedAsTheDeviceFoundThem) {
  ModeledLoads m(8, 1.0);
  // Guessed at 0, used at 1000: loaded in time (hit).
  EXPECT_DOUBLE_EQ(m.acquire(1000, 50, true, 0, true), 0);
  // Named at 1040, used at 1050: loading ends at 1090 (late, 40 ns).
  EXPECT_DOUBLE_EQ(m.acquire(1050, 50, true, 1040, true), 40);
  // Nobody asked before the acquire (miss), at 1100 + 40 of earlier stall.
  EXPECT_DOUBLE_EQ(m.acquire(1100, 50, true, 1e9, true), 50);
  // Still on the device from its last use (reused), and a dense unit (not counted).
  EXPECT_DOUBLE_EQ(m.acquire(1200, 50, false, 0, true), 0);
  EXPECT_DOUBLE_EQ(m.acquire(1300, 50, true, 0, false), 0);
  const ModeledRoutedStats& r = m.routed_stats();
  EXPECT_EQ(r.acquires, 4u);
  EXPECT_EQ(r.reused, 1u);
  EXPECT_EQ(r.hits, 1u);
  EXPECT_EQ(r.late, 1u);
  EXPECT_EQ(r.misses, 1u);
  EXPECT_EQ(r.loads(), 3u);
  EXPECT_DOUBLE_EQ(r.hit_rate(), 1.0 / 3.0);
}

TEST(ModeledLoads, AWastedGuessTakesTheLoadersTime) {
  // Two experts of 100 bytes used at 1000 and 1100, both requested at 0: both hidden. A wrong guess
  // of 950 bytes charged from 0 before them makes the first ready at 1050 (50 ns late); compute, now
  // 50 ns behind, uses the second at 1150, when it is ready.
  ModeledLoads clean(8, 1.0), wasted(8, 1.0);
  EXPECT_DOUBLE_EQ(clean.acquire(1000, 100, true, 0, true) + clean.acquire(1100, 100, true, 0, true), 0);
  wasted.charge_wasted(950, 0);
  EXPECT_DOUBLE_EQ(wasted.acquire(1000, 100, true, 0, true), 50);
  EXPECT_DOUBLE_EQ(wasted.acquire(1100, 100, true, 0, true), 0);
  EXPECT_EQ(wasted.routed_stats().wasted, 1u);
  EXPECT_EQ(wasted.routed_stats().wasted_bytes, 950u);
  EXPECT_EQ(wasted.routed_stats().late, 1u);
  EXPECT_EQ(wasted.routed_stats().hits, 1u);
  EXPECT_EQ(wasted.stats().loads, 2u);  // the wasted load is not an acquire's
  // A guess charged later than the loader is free starts at its request.
  ModeledLoads later(8, 1.0);
  later.charge_wasted(100, 2000);
  EXPECT_DOUBLE_EQ(later.acquire(2050, 10, true, 0, true), 60);
}

}  // namespace
}  // namespace ork::weights
