#include "npu/drm_kernel.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace ork::npu {
namespace {

TEST(DrmKernel, MemCreateIoctlFollowsDriverVersion) {
  EXPECT_EQ(mem_create_ioctl_for(905), 0xC0286442u);  // 0.9.5: 40-byte struct
  EXPECT_EQ(mem_create_ioctl_for(800), 0xC0286442u);
  EXPECT_EQ(mem_create_ioctl_for(906), 0xC0306442u);  // 0.9.6: 48 bytes with the domain id
  EXPECT_EQ(mem_create_ioctl_for(908), 0xC0306442u);
  EXPECT_FALSE(driver_has_domains(905));
  EXPECT_TRUE(driver_has_domains(906));
  EXPECT_EQ(domains_for(905), 1u);
  EXPECT_EQ(domains_for(908), 16u);
  EXPECT_EQ(format_driver_version(908), "0.9.8");
  EXPECT_EQ(format_driver_version(10203), "1.2.3");
  EXPECT_EQ(kIoctlDrmVersion, 0xC0406400u);
}

TEST(DrmKernel, DiscoveryOnAMissingDirectoryFindsNothing) {
  const DrmNodeSearch r = find_rknpu_node("/nonexistent/dri");
  EXPECT_FALSE(r.path);
  EXPECT_NE(r.detail.find("/nonexistent/dri"), std::string::npos);
}

TEST(DrmKernel, DiscoveryIgnoresNodesThatAreNotRknpu) {
  const auto dir = std::filesystem::temp_directory_path() / ("ork_dri_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* n : {"renderD128", "card0", "by-path"}) std::ofstream(dir / n) << "not a device";
  const DrmNodeSearch r = find_rknpu_node(dir.string());
  EXPECT_FALSE(r.path);
  EXPECT_NE(r.detail.find("no rknpu node among 2 DRM nodes"), std::string::npos) << r.detail;
  try {
    DrmKernel k((dir / "renderD128").string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not an rknpu device"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(DrmKernel, DiscoveryOnThisMachineIsClean) {
  const DrmNodeSearch r = find_rknpu_node();
  if (r.path) GTEST_SKIP() << "an rknpu device is present: " << *r.path;
  EXPECT_FALSE(r.detail.empty());
  EXPECT_EQ(DrmKernel::open_default(), nullptr);
}

TEST(DrmKernel, OpeningAMissingPathThrowsNamingIt) {
  try {
    DrmKernel k("/nonexistent/renderD129");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/renderD129"), std::string::npos);
  }
}

}  // namespace
}  // namespace ork::npu
