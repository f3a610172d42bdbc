// weights::convert: output, f16, and crash safety (a kill at any point leaves no file under the
// final name; running again finishes).
#include "weights/convert.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "weights/pack_grouped.h"
#include "weights/pack_reader.h"
#include "weights/packed_int4.h"
#include "weights/store.h"
#include "core/error.h"
#include "weights_test_util.h"

namespace ork::weights {
namespace {

using testutil::make_model;
using testutil::same_bytes;
using testutil::write_file;

TEST(Convert, WritesEveryWeightByteIdentical) {
  ork::testing::TempDir dir;
  const auto m = make_model(dir.file("m.gguf"));
  ConvertOptions o;
  o.output_path = dir.file("m.orkpack");
  o.threads = 2;
  uint64_t calls = 0;
  o.progress = [&](uint64_t done, uint64_t total, uint64_t) {
    ++calls;
    EXPECT_LE(done, total);
  };
  const ConvertResult r = convert(*m, o);
  const auto& ls = m->weights().linears();
  EXPECT_EQ(r.weights, ls.size());
  EXPECT_EQ(calls, ls.size());
  EXPECT_EQ(r.bytes, std::filesystem::file_size(o.output_path));
  EXPECT_GT(r.peak_rss_bytes, 0u);
  const auto pack = PackReader::open(o.output_path);
  for (const model::Linear* l : ls) {
    const PackEntry* e = pack->find(l->name());
    ASSERT_NE(e, nullptr);
    EXPECT_TRUE(pack->verify(*e));
    EXPECT_TRUE(same_bytes(pack->view(*e), pack_linear(*l, nullptr).view()));
  }
  // A Store on the converted pack packs nothing.
  Store s(*m, StoreOptions{o.output_path, false});
  for (const model::Linear* l : ls) s.get(*l);
  EXPECT_EQ(s.stats().packed, 0u);
  EXPECT_EQ(s.stats().loaded, ls.size());
}

TEST(Convert, F16RoundTrip) {
  ork::testing::TempDir dir;
  const auto m = make_model(dir.file("m.gguf"));
  ConvertOptions o;
  o.output_path = dir.file("m.orkpack");
  o.dtype = npu::Dtype::kF16;
  o.evict_src = true;
  convert(*m, o);
  const auto pack = PackReader::open(o.output_path);
  for (const model::Linear* l : m->weights().linears()) {
    const PackEntry* e = pack->find(l->name());
    ASSERT_NE(e, nullptr);
    EXPECT_TRUE(pack->verify(*e));
    EXPECT_TRUE(same_bytes(pack->view(*e), pack_linear_grouped(*l, npu::Dtype::kF16, nullptr).view()));
  }
}

TEST(Convert, Int4PackHoldsPackLinearI4AndServesTheInt4Store) {
  ork::testing::TempDir dir;
  const auto m = make_model(dir.file("m.gguf"));
  ConvertOptions o;
  o.output_path = dir.file("m.orkpack");
  o.dtype = npu::Dtype::kI4;
  o.threads = 2;
  convert(*m, o);
  const auto pack = PackReader::open(o.output_path);
  EXPECT_EQ(pack->header().dtype, npu::Dtype::kI4);
  for (const model::Linear* l : m->weights().linears()) {
    const PackEntry* e = pack->find(l->name());
    ASSERT_NE(e, nullptr);
    EXPECT_TRUE(pack->verify(*e));
    EXPECT_TRUE(same_bytes(pack->view(*e), pack_linear_i4(*l, nullptr).view()));
  }
  StoreOptions so{o.output_path, false};
  so.wtype = npu::Dtype::kI4;
  Store s(*m, so);
  for (const model::Linear* l : m->weights().linears()) EXPECT_EQ(s.get(*l).view.dtype, npu::Dtype::kI4);
  EXPECT_EQ(s.stats().packed, 0u);
  EXPECT_EQ(s.stats().loaded, m->weights().linears().size());
}

TEST(Convert, FailureMidwayLeavesNoFileUnderTheFinalName) {
  ork::testing::TempDir dir;
  const auto m = make_model(dir.file("m.gguf"));
  ConvertOptions o;
  o.output_path = dir.file("m.orkpack");
  o.progress = [](uint64_t done, uint64_t, uint64_t) {
    if (done == 3) throw Error("interrupted");
  };
  EXPECT_THROW(convert(*m, o), Error);
  EXPECT_FALSE(std::filesystem::exists(o.output_path));
  EXPECT_FALSE(std::filesystem::exists(o.output_path + ".tmp"));
}

TEST(Convert, KilledConvertLeavesNoFinalFileAndRerunFinishes) {
  ork::testing::TempDir dir;
  const auto m = make_model(dir.file("m.gguf"));
  const std::string out = dir.file("m.orkpack");
  for (uint64_t kill_at : {1, 5, 15}) {
    std::filesystem::remove(out);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ConvertOptions o;
      o.output_path = out;
      o.threads = 1;
      o.progress = [kill_at](uint64_t done, uint64_t, uint64_t) {
        if (done == kill_at) ::kill(::getpid(), SIGKILL);
      };
      try {
        convert(*m, o);
      } catch (...) {
      }
      ::_exit(0);  // only reached when kill_at is past the last weight
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "kill_at " << kill_at;
    EXPECT_FALSE(std::filesystem::exists(out)) << "kill_at " << kill_at;
    EXPECT_TRUE(std::filesystem::exists(out + ".tmp"));
    ConvertOptions o;
    o.output_path = out;
    const ConvertResult r = convert(*m, o);
    EXPECT_EQ(r.weights, m->weights().linears().size());
    EXPECT_NO_THROW(PackReader::open(out));
    EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));
  }
}

TEST(Convert, GarbageTmpIsOverwritten) {
  ork::testing::TempDir dir;
  const auto m = make_model(dir.file("m.gguf"));
  ConvertOptions o;
  o.output_path = dir.file("m.orkpack");
  write_file(o.output_path + ".tmp", std::vector<uint8_t>(123457, 0xEE));
  convert(*m, o);
  EXPECT_NO_THROW(PackReader::open(o.output_path));
}

TEST(Convert, RefusesToOverwriteTheModel) {
  ork::testing::TempDir dir;
  const auto m = make_model(dir.file("m.gguf"));
  ConvertOptions o;
  o.output_path = dir.file("m.gguf");
  EXPECT_THROW(convert(*m, o), Error);
}

}  // namespace
}  // namespace ork::weights
