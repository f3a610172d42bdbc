// A NaN or Inf in the activations is one ork::Error naming the linear it entered, on every path:
// the exact CPU path (which would carry NaN into the logits), the fast CPU path and the int8 paths
// (which would quantize it to a plausible number), and the simulated NPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "runtime/context.h"
#include "runtime/engine.h"

namespace ork::runtime {
namespace {

struct Path {
  const char* name;
  const char* device;
  bool exact;
  bool int8;
};

const Path kPaths[] = {
    {"cpu-exact", "cpu", true, false},
    {"cpu-fast", "cpu", false, false},
    {"cpu-int8", "cpu", false, true},
    {"sim", "sim", false, false},
};

EngineOptions options(const std::string& model, const Path& p) {
  EngineOptions o;
  o.model_path = model;
  o.device = p.device;
  o.exact = p.exact;
  o.cpu_int8 = p.int8;
  o.threads = 2;
  o.npu.sim_window_bytes = 64u << 20;
  return o;
}

TEST(NonFinite, EveryPathReportsANonFiniteInputEmbeddingAlike) {
  testing::TempDir dir;
  const std::string model = dir.file("m.gguf");
  gen::write_model(testing::small_q8_model(), model);
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    for (const Path& p : kPaths) {
      Engine e(options(model, p));
      Context ctx(e, 16);
      const int64_t E = e.model().config().n_embd;
      std::vector<float> embd(size_t(3 * E), 0.25f);
      // A finite batch evaluates (the check does not fire on good input).
      const float* logits = ctx.eval_embd(embd.data(), 3);
      EXPECT_TRUE(std::isfinite(logits[0])) << p.name;
      embd[size_t(E + 5)] = bad;
      try {
        ctx.eval_embd(embd.data(), 3);
        ADD_FAILURE() << p.name << ": no error for " << bad;
      } catch (const Error& err) {
        const std::string msg = err.what();
        EXPECT_NE(msg.find("non-finite value"), std::string::npos) << p.name << ": " << msg;
        EXPECT_NE(msg.find("'blk.0.attn_q.weight' at batch row 1"), std::string::npos) << p.name << ": " << msg;
      }
    }
  }
}

}  // namespace
}  // namespace ork::runtime
