// CpuMatmul's packing at load: the packed linears' pages of the mapped GGUF leave the process (one
// resident copy of the weights), and other types keep running on the mapped bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/thread_pool.h"
#include "gen_model/gen_model.h"
#include "model/matmul_backend.h"
#include "model/model.h"
#include "mapped_rss.h"
#include "temp_dir.h"

namespace ork::model {
namespace {

using testing::mapped_rss_kb;

std::string write(const testing::TempDir& dir, quant::Type type, const char* name) {
  gen::ModelSpec spec;
  spec.arch = "llama";
  spec.weight_type = type;
  spec.n_vocab = 512;
  spec.n_embd = 512;
  spec.n_ff = 1024;
  spec.n_layer = 2;
  const std::string path = dir.file(name);
  gen::write_model(spec, path);
  return path;
}

// Reads the mapping so that all of its pages are resident.
void touch_all(const Model& m) {
  const auto& map = m.file().mapping();
  volatile uint8_t sink = 0;
  for (uint64_t i = 0; i < map.size(); i += 512) sink = sink + map.data()[i];
}

TEST(CpuMatmulPack, PackedWeightsLeaveTheMapping) {
  if (ops::panel_kernel(quant::Type::Q8_0, ops::best_isa()) == nullptr)
    GTEST_SKIP() << "no panel kernel on this CPU: nothing is packed";
  testing::TempDir dir;
  const std::string path = write(dir, quant::Type::Q8_0, "q8.gguf");
  const auto m = Model::load(path);
  touch_all(*m);
  const int64_t before = mapped_rss_kb(m->file().mapping().data());
  // qemu-user emulates /proc/self/smaps without resident sizes.
  if (before <= 0) GTEST_SKIP() << "/proc/self/smaps gives no resident size for the mapping";
  ThreadPool pool(2);
  const CpuMatmul backend(pool, ops::MatmulMode::kFast, &m->weights(), &m->file());
  const int64_t after = mapped_rss_kb(m->file().mapping().data());
  uint64_t linear_bytes = 0;
  for (const Linear* l : m->weights().linears()) linear_bytes += l->w->n_bytes;
  EXPECT_GE(backend.packed_bytes(), linear_bytes);
  // Every packed tensor's whole pages are dropped: at most one partial page at each end remains.
  const int64_t dropped_kb = before - after;
  const int64_t slack_kb = int64_t(m->weights().linears().size()) * 2 * 4;
  EXPECT_GE(dropped_kb, int64_t(linear_bytes / 1024) - slack_kb) << "before " << before << " kB, after " << after;
}

TEST(CpuMatmulPack, OtherTypesAndTheExactModeKeepTheMapping) {
  testing::TempDir dir;
  for (const bool exact : {false, true}) {
    const std::string path = write(dir, exact ? quant::Type::Q8_0 : quant::Type::F16, exact ? "e.gguf" : "f16.gguf");
    const auto m = Model::load(path);
    touch_all(*m);
    const int64_t before = mapped_rss_kb(m->file().mapping().data());
    ThreadPool pool(1);
    const CpuMatmul backend(pool, exact ? ops::MatmulMode::kExact : ops::MatmulMode::kFast,
                            &m->weights(), &m->file());
    EXPECT_EQ(backend.packed_bytes(), 0u);
    EXPECT_EQ(mapped_rss_kb(m->file().mapping().data()), before);
  }
}

}  // namespace
}  // namespace ork::model
