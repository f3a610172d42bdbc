#include "npu/probe_dma.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace ork::npu {
namespace {

constexpr uint64_t kMiB = uint64_t(1) << 20;

TEST(ProbeDma, DefaultSimHitsTheWallAt63) {
  auto dev = Device::open_sim();
  const DmaProbeResult r = probe_dma(*dev);
  ASSERT_EQ(r.domains.size(), 1u);
  EXPECT_EQ(r.domains[0].buffers, 63u);
  EXPECT_EQ(r.domains[0].bytes, 4227858432u);
  EXPECT_EQ(r.domains[0].err, 14);
  EXPECT_EQ(r.total_bytes, 4227858432u);
  EXPECT_EQ(r.to_json(),
            R"({"domains":[{"id":0,"buffers":63,"bytes":4227858432,"errno":14}],"total_bytes":4227858432,)"
            R"("chunk_bytes":67108864})");
  EXPECT_EQ(dev->sim_kernel()->stats().live_buffers, 0u);  // everything freed
  EXPECT_EQ(dev->counters().creates, 63u);
}

TEST(ProbeDma, SixteenDomainsAreIndependent) {
  auto dev = Device::open_sim();
  const DmaProbeResult r = probe_dma(*dev, 64 * kMiB, 16);
  ASSERT_EQ(r.domains.size(), 16u);
  for (const DmaProbeDomain& d : r.domains) {
    EXPECT_EQ(d.buffers, 63u) << "domain " << d.id;
    EXPECT_EQ(d.err, 14);
  }
  EXPECT_EQ(r.total_bytes, 16 * 4227858432ull);
  EXPECT_EQ(dev->sim_kernel()->stats().peak_total_mapped_bytes, 16 * 4227858432ull);  // all held at once
  EXPECT_EQ(dev->sim_kernel()->stats().live_buffers, 0u);
  EXPECT_EQ(dev->counters().destroys, 16 * 63u);
}

TEST(ProbeDma, SmallerWindowAndOtherChunks) {
  auto dev = Device::open_sim({256 * kMiB, 2, 3});
  EXPECT_EQ(probe_dma(*dev, 64 * kMiB, 2).total_bytes, 2 * 3 * 64 * kMiB);
  EXPECT_EQ(probe_dma(*dev, 256 * kMiB).domains[0].buffers, 0u);
  EXPECT_EQ(probe_dma(*dev, 100 * kMiB).domains[0].buffers, 1u);  // aligned to 128 MiB: slot 128 MiB only
}

TEST(ProbeDma, BadArgumentsThrow) {
  auto dev = Device::open_sim({256 * kMiB, 2, 3});
  EXPECT_THROW(probe_dma(*dev, 0), Error);
  EXPECT_THROW(probe_dma(*dev, kMiB, 0), Error);
  EXPECT_THROW(probe_dma(*dev, kMiB, 3), Error);
}

}  // namespace
}  // namespace ork::npu
