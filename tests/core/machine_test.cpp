#include "core/machine.h"

#include <gtest/gtest.h>

#include <thread>

namespace ork {
namespace {

TEST(Machine, NamesTheCpuAndTheCoreCount) {
  const std::string m = machine_name();
  const std::string cores = "(" + std::to_string(std::thread::hardware_concurrency()) + " cores)";
  ASSERT_GT(m.size(), cores.size());
  EXPECT_EQ(m.substr(m.size() - cores.size()), cores) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_EQ(m.find('\0'), std::string::npos);
}

}  // namespace
}  // namespace ork
