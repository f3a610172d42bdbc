// runtime::Engine maps the embedding rows of its GGUF at load (MappedFile::map_pages), so the lookup
// of a token not seen yet takes no page fault mid-step — also when a tied output was packed from
// them (model::CpuMatmul keeps a tied output's pages, it drops the other packed weights').
#include <gtest/gtest.h>

#include <cstdint>

#include "gen_model/gen_model.h"
#include "model/mapped_rss.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "runtime/engine.h"

namespace ork::runtime {
namespace {

TEST(EngineEmbeddingRows, MappedAtLoadOnTheCpuTiedOrNot) {
  for (const bool tied : {false, true}) {
    testing::TempDir dir;
    const std::string path = dir.file("m.gguf");
    gen::ModelSpec spec = testing::small_q8_model();
    spec.n_vocab = 4096;  // rows of 1 MiB or more in all
    spec.tied_output = tied;
    gen::write_model(spec, path);
    EngineOptions o;
    o.model_path = path;
    o.device = "cpu";
    o.threads = 1;
    Engine e(o);
    const gguf::TensorInfo& embd = *e.model().weights().token_embd;
    const int64_t rss = testing::mapped_rss_kb(e.model().file().mapping().data());
    if (rss <= 0) GTEST_SKIP() << "/proc/self/smaps gives no resident size for the mapping";
    ASSERT_GT(embd.n_bytes, 256u << 10);
    // The rows' pages, all but at most a partial page at each end (nothing else read them: the
    // linears' pages were dropped after packing, where a panel kernel exists).
    EXPECT_GE(rss, int64_t(embd.n_bytes / 1024) - 8) << (tied ? "tied" : "untied") << ": " << rss << " kB resident, "
                                                     << embd.n_bytes / 1024 << " kB of embedding rows";
  }
}

}  // namespace
}  // namespace ork::runtime
