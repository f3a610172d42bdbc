// ork mem --schedule auto: the plan names the CPU copies of weights the schedule will make and counts
// them in the RAM to plan for; after loading and one decode step they are the copies made.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "tools/run_ork.h"

namespace ork {
namespace {

TEST(CliMemSchedule, ThePlanCountsTheSchedulesCpuCopiesInItsRam) {
  testing::TempDir dir;
  gen::write_model(testing::small_q8_model(), dir.file("m.gguf"));
  const auto mem = [&](const std::string& schedule) {
    const testing::OrkResult r = testing::run_ork(
        "mem -m " + dir.file("m.gguf") + " --device sim --ctx 64 --schedule " + schedule + " --json", dir);
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const nlohmann::json npu = mem("npu"), aut = mem("auto");
  EXPECT_EQ(npu["plan"]["cpu_copy_bytes"].get<uint64_t>(), 0u);
  // The built-in profile puts every decode call of the tiny model on the CPU: every weight copied.
  const uint64_t copies = aut["plan"]["cpu_copy_bytes"].get<uint64_t>();
  EXPECT_GT(copies, 0u);
  EXPECT_EQ(copies, aut["plan"]["cpu_copy_all_bytes"].get<uint64_t>());
  EXPECT_EQ(aut["plan"]["ram_bytes"].get<uint64_t>() - npu["plan"]["ram_bytes"].get<uint64_t>(), copies);
  EXPECT_EQ(aut["loaded"]["cpu_copy_bytes"].get<uint64_t>(), copies);
  EXPECT_EQ(npu["loaded"]["cpu_copy_bytes"].get<uint64_t>(), 0u);
}

}  // namespace
}  // namespace ork
