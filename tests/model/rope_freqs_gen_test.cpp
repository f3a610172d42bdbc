// The generator's rope_freqs.weight (gen::ModelSpec::rope_freqs): Llama 3.1's factors checked against
// an independent formulation of the "llama3" rope scaling, the tensor's layout in the file, and the
// seeded factors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "gguf/file.h"
#include "model/model.h"
#include "temp_dir.h"

namespace ork::model {
namespace {

using ork::testing::TempDir;

// Llama 3.1 as Hugging Face's transformers states it (_compute_llama3_parameters): the scaled
// inverse frequency; the factor is then old / new. Written apart from the generator's form.
std::vector<double> hf_llama3_factors(int dim, double base, double factor, double lo, double hi,
                                      double old_ctx) {
  std::vector<double> out;
  for (int j = 0; j < dim; j += 2) {
    const double inv = 1.0 / std::pow(base, double(j) / dim);
    const double wavelen = 2 * 3.14159265358979323846 / inv;
    double scaled = inv;
    if (wavelen > old_ctx / lo) {
      scaled = inv / factor;
    } else if (wavelen >= old_ctx / hi) {
      const double smooth = (old_ctx / wavelen - lo) / (hi - lo);
      scaled = (1 - smooth) * inv / factor + smooth * inv;
    }
    out.push_back(inv / scaled);
  }
  return out;
}

TEST(RopeFreqsGen, Llama31FactorsMatchTheReferenceFormula) {
  // Llama 3.1 8B / 3.2 1B: head_dim 64 or 128, rope_theta 500000, factor 8 (3.2: 32), 1, 4, 8192.
  for (int dim : {64, 128}) {
    for (float factor : {8.0f, 32.0f}) {
      const std::vector<float> got = gen::llama3_rope_factors(dim, 500000.0f, factor, 1.0f, 4.0f, 8192);
      const std::vector<double> want = hf_llama3_factors(dim, 500000.0, factor, 1.0, 4.0, 8192.0);
      ASSERT_EQ(got.size(), size_t(dim / 2));
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6 * want[i]) << i;
      // High frequencies untouched, the lowest slowed by the full factor, monotonic in between.
      EXPECT_EQ(got.front(), 1.0f);
      EXPECT_EQ(got.back(), factor);
      for (size_t i = 1; i < got.size(); ++i) EXPECT_GE(got[i], got[i - 1]) << i;
      int ramp = 0;
      for (float f : got) ramp += f > 1.0f && f < factor;
      EXPECT_GE(ramp, 1);  // 500000^(2i/d) crosses 8192/(2π)·[1/4, 1] within the pairs
    }
  }
  EXPECT_THROW(gen::llama3_rope_factors(64, 500000.0f, 8.0f, 4.0f, 4.0f, 8192), Error);
  EXPECT_THROW(gen::llama3_rope_factors(63, 500000.0f, 8.0f, 1.0f, 4.0f, 8192), Error);
  EXPECT_THROW(gen::llama3_rope_factors(64, 500000.0f, 0.0f, 1.0f, 4.0f, 8192), Error);
}

TEST(RopeFreqsGen, TheFileHoldsOneF32TensorOfHalfTheHead) {
  TempDir dir;
  for (const char* kind : {"llama3", "random"}) {
    gen::ModelSpec spec;  // head_dim 16
    spec.rope_freqs = kind;
    spec.rope_freq_base = 500000.0f;
    spec.llama3_original_ctx = 64;
    const std::string path = dir.file(std::string(kind) + ".gguf");
    gen::write_model(spec, path);
    const gguf::File f = gguf::File::open(path);
    const gguf::TensorInfo* t = f.find_tensor("rope_freqs.weight");
    ASSERT_NE(t, nullptr) << kind;
    EXPECT_EQ(t->type, quant::Type::F32);
    EXPECT_EQ(t->dims, std::vector<uint64_t>{8});
    EXPECT_EQ(f.find_tensor("blk.0.rope_freqs.weight"), nullptr);
    EXPECT_EQ(f.get_string_or("llama.rope.scaling.type", "absent"), "absent");  // as Llama 3.1 GGUFs
    std::vector<float> v(8);
    std::memcpy(v.data(), t->data, 32);
    if (std::string(kind) == "llama3") {
      const std::vector<double> want = hf_llama3_factors(16, 500000.0, 8.0, 1.0, 4.0, 64.0);
      for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], want[i], 1e-6 * want[i]) << i;
    } else {
      for (float x : v) {
        EXPECT_GE(x, 0.125f);
        EXPECT_LT(x, 8.0f);
      }
      EXPECT_NE(v[0], v[1]);
    }
    const auto m = Model::load(path);
    ASSERT_NE(m->weights().rope_freqs, nullptr);
    for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(m->weights().rope_freqs[i], v[i]);
  }
  gen::ModelSpec bad;
  bad.rope_freqs = "yarn";
  EXPECT_THROW(gen::validate(bad), Error);
  gen::ModelSpec plain;
  EXPECT_TRUE(gen::tensor_specs(plain).front().name != "rope_freqs.weight");
}

}  // namespace
}  // namespace ork::model
