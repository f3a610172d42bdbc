// ork convert --dtype: an int4 pack (`i4`, or `auto` on a 4-bit GGUF) is what `--npu-wtype i4`
// loads — a run on it packs nothing and gives the tokens of a run that packed every weight itself;
// a bad --dtype is one usage error and writes nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "tools/run_ork.h"

namespace ork {
namespace {

gen::ModelSpec q4_model() {
  gen::ModelSpec s = testing::small_q8_model();
  s.n_layer = 2;
  s.weight_type = quant::Type::Q4_0;
  return s;
}

TEST(CliConvert, AnInt4PackIsWhatTheInt4DevicePathLoads) {
  testing::TempDir dir;
  const std::string model = dir.file("m.gguf"), pack = dir.file("m.i4.orkpack");
  gen::write_model(q4_model(), model);
  const testing::OrkResult c = testing::run_ork("convert -m " + model + " -o " + pack + " --dtype auto --json", dir);
  ASSERT_EQ(c.status, 0) << c.err;
  const nlohmann::json j = nlohmann::json::parse(c.out);
  EXPECT_EQ(j["dtype"], "i4");  // auto: a Q4_0 model's device form is int4
  EXPECT_EQ(j["weights"].get<int>(), 2 * 7 + 1);  // 7 per layer and the output

  const std::string run = "run -m " + model + " -p 'the cat' -n 6 --temp 0 --device sim --npu-wtype i4 --stats";
  const testing::OrkResult packed = testing::run_ork(run, dir);
  ASSERT_EQ(packed.status, 0) << packed.err;
  EXPECT_NE(packed.err.find("packed 15 ("), std::string::npos) << packed.err;
  const testing::OrkResult loaded = testing::run_ork(run + " --persist " + pack, dir);
  ASSERT_EQ(loaded.status, 0) << loaded.err;
  EXPECT_NE(loaded.err.find("packed 0 ("), std::string::npos) << loaded.err;
  EXPECT_NE(loaded.err.find("loaded 15 ("), std::string::npos) << loaded.err;
  EXPECT_EQ(loaded.out, packed.out);
  // W4A4 (`--npu-wtype i4a4`) runs the same int4 weights: it loads them from the same pack.
  const testing::OrkResult a4 = testing::run_ork(
      "run -m " + model + " -p 'the cat' -n 6 --temp 0 --device sim --npu-wtype i4a4 --stats --persist " + pack, dir);
  ASSERT_EQ(a4.status, 0) << a4.err;
  EXPECT_NE(a4.err.find("packed 0 ("), std::string::npos) << a4.err;
  EXPECT_NE(a4.err.find("loaded 15 ("), std::string::npos) << a4.err;

  // The int8 path does not take an int4 pack: it packs every weight from the GGUF (one warning).
  std::filesystem::copy_file(pack, dir.file("i4-as-i8.orkpack"));
  const testing::OrkResult wrong = testing::run_ork(
      "run -m " + model + " -p 'the cat' -n 2 --temp 0 --device sim --stats --persist " + dir.file("i4-as-i8.orkpack"),
      dir);
  ASSERT_EQ(wrong.status, 0) << wrong.err;
  EXPECT_NE(wrong.err.find("holds i4 weights, i8 are needed; repacking"), std::string::npos) << wrong.err;
  EXPECT_NE(wrong.err.find("packed 15 ("), std::string::npos) << wrong.err;
}

TEST(CliConvert, ABadDtypeIsOneUsageErrorAndWritesNothing) {
  testing::TempDir dir;
  const std::string model = dir.file("m.gguf"), pack = dir.file("m.orkpack");
  gen::write_model(q4_model(), model);
  const testing::OrkResult r = testing::run_ork("convert -m " + model + " -o " + pack + " --dtype i3", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--dtype: 'i3' is not one of i8, i4, auto, f16"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(pack));
  EXPECT_FALSE(std::filesystem::exists(pack + ".tmp"));
}

TEST(CliConvert, AnInt4DeviceFormOnTheCpuNamesTheCpuFlag) {
  testing::TempDir dir;
  const std::string model = dir.file("m.gguf");
  gen::write_model(q4_model(), model);
  const testing::OrkResult r = testing::run_ork("run -m " + model + " -p hi -n 1 --device cpu --npu-wtype i4a4", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--npu-wtype needs --device npu or sim (on the cpu: --cpu-int4 w4a4)"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace ork
