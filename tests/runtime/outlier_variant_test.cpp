// gen::write_outlier_variant: the variant computes the same function as its source on the exact CPU
// path, its norm weights and input columns are scaled as stated, and bad arguments are errors.
#include "gen_model/outlier_variant.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "gguf/file.h"
#include "model/temp_dir.h"
#include "quant/decode.h"
#include "runtime/context.h"
#include "runtime/engine.h"
#include "runtime/npu_wtype.h"

namespace ork {
namespace {

std::vector<float> values(const gguf::File& f, const char* name) {
  const gguf::TensorInfo& t = f.tensor(name);
  std::vector<float> v(size_t(t.n_elements));
  const uint64_t row_bytes = t.n_bytes / t.rows();
  for (uint64_t r = 0; r < t.rows(); ++r)
    quant::decode_row(t.type, t.data + r * row_bytes, v.data() + r * t.row_length(), int64_t(t.row_length()));
  return v;
}

std::vector<float> exact_logits(const std::string& path, const std::vector<int32_t>& tokens) {
  runtime::EngineOptions eo;
  eo.model_path = path;
  eo.device = "cpu";
  eo.exact = true;
  eo.threads = 1;
  runtime::Engine engine(eo);
  runtime::Context ctx(engine, 64);
  return ctx.eval_all(tokens);
}

TEST(OutlierVariant, SameFunctionWithScaledNormsAndColumns) {
  testing::TempDir dir;
  const std::string src = dir.file("m.gguf"), var = dir.file("m-s100.gguf");
  gen::write_model(gen::preset("default"), src);
  const std::vector<int64_t> ch = gen::default_outlier_channels(128);
  ASSERT_EQ(ch, (std::vector<int64_t>{5, 42, 79, 116}));
  gen::write_outlier_variant(src, var, 100.0f, ch);

  const gguf::File a = gguf::File::open(src), b = gguf::File::open(var);
  const std::vector<float> na = values(a, "blk.1.ffn_norm.weight"), nb = values(b, "blk.1.ffn_norm.weight");
  const std::vector<float> qa = values(a, "blk.1.attn_q.weight"), qb = values(b, "blk.1.attn_q.weight");
  const std::vector<float> da = values(a, "blk.1.attn_output.weight"), db = values(b, "blk.1.attn_output.weight");
  EXPECT_EQ(b.tensor("blk.1.attn_q.weight").type, quant::Type::F32);
  EXPECT_EQ(b.tensor("blk.1.attn_output.weight").type, a.tensor("blk.1.attn_output.weight").type);
  EXPECT_EQ(da, db);  // fed by the attention, not by a norm: unchanged
  for (int64_t c = 0; c < 128; ++c) {
    const bool out = c == 5 || c == 42 || c == 79 || c == 116;
    EXPECT_EQ(nb[size_t(c)], out ? na[size_t(c)] * 100.0f : na[size_t(c)]) << c;
    EXPECT_EQ(qb[size_t(3 * 128 + c)], out ? qa[size_t(3 * 128 + c)] / 100.0f : qa[size_t(3 * 128 + c)]) << c;
  }

  const std::vector<int32_t> tokens = {1, 50, 300, 7, 999, 12, 640, 3};
  const std::vector<float> la = exact_logits(src, tokens), lb = exact_logits(var, tokens);
  ASSERT_EQ(la.size(), lb.size());
  double max_diff = 0, max_abs = 0;
  for (size_t i = 0; i < la.size(); ++i) {
    max_diff = std::max(max_diff, double(std::fabs(la[i] - lb[i])));
    max_abs = std::max(max_abs, double(std::fabs(la[i])));
  }
  EXPECT_LT(max_diff, 1e-4 * max_abs + 1e-5) << max_abs;
}

std::vector<float> int4_logits(const std::string& path, const std::vector<int32_t>& tokens, const char* device) {
  runtime::EngineOptions eo;
  eo.model_path = path;
  eo.device = device;
  eo.threads = 1;
  if (eo.device == "cpu") {
    eo.cpu_int4 = "w4a8";
  } else {
    eo.npu_wtype = runtime::NpuWtype::kI4;
  }
  runtime::Engine engine(eo);
  runtime::Context ctx(engine, 64);
  return ctx.eval_all(tokens);
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::fabs(a[i] - b[i])));
  return d;
}

// The int4 paths fold each linear's input norm weight into its weights (quant/norm_fold.h), so an
// outlier variant — norm weights × 100, the columns they feed ÷ 100 — quantizes what its source
// quantizes, up to float rounding: its int4 logits are its source's, on the CPU and on the simulated
// NPU (bit-identical to each other). Without the fold the variant's int4 error was 180 × the
// source's PPL change (docs/quant.md).
TEST(OutlierVariant, Int4PathsFoldTheNormSoTheVariantQuantizesWhatItsSourceDoes) {
  testing::TempDir dir;
  const std::string src = dir.file("m.gguf"), var = dir.file("m-s100.gguf");
  gen::write_model(gen::preset("default"), src);
  gen::write_outlier_variant(src, var, 100.0f, gen::default_outlier_channels(128));
  const std::vector<int32_t> tokens = {1, 50, 300, 7, 999, 12, 640, 3};
  const std::vector<float> exact = exact_logits(src, tokens);
  const std::vector<float> a = int4_logits(src, tokens, "cpu"), b = int4_logits(var, tokens, "cpu");
  const std::vector<float> sim = int4_logits(var, tokens, "sim");
  ASSERT_EQ(b.size(), sim.size());
  EXPECT_EQ(std::memcmp(b.data(), sim.data(), b.size() * sizeof(float)), 0);
  const double err_src = max_abs_diff(a, exact), err_var = max_abs_diff(b, exact), between = max_abs_diff(a, b);
  EXPECT_GT(err_src, 0.0);
  EXPECT_LT(err_var, 1.5 * err_src) << "source " << err_src << ", variant " << err_var;
  EXPECT_LT(between, 0.5 * err_src) << "source and variant differ by " << between;
}

TEST(OutlierVariant, BadArgumentsAreErrors) {
  testing::TempDir dir;
  const std::string src = dir.file("m.gguf");
  gen::write_model(gen::preset("default"), src);
  EXPECT_THROW(gen::write_outlier_variant(src, dir.file("o.gguf"), 0.0f, {1}), Error);
  EXPECT_THROW(gen::write_outlier_variant(src, dir.file("o.gguf"), NAN, {1}), Error);
  EXPECT_THROW(gen::write_outlier_variant(src, dir.file("o.gguf"), 30.0f, {128}), Error);
  EXPECT_THROW(gen::write_outlier_variant(dir.file("none.gguf"), dir.file("o.gguf"), 30.0f, {1}), Error);
  EXPECT_THROW(gen::default_outlier_channels(3), Error);
}

}  // namespace
}  // namespace ork
