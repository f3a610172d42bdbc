// MatmulBackend::matmul_glu: the quantizing backends compute an FFN's activation row by row while
// quantizing ffn_down's input (runtime/activation_source.h); the result must be bit-identical to the
// unfused form — the activation written whole (ops::swiglu / ops::geglu), then matmul() — on the CPU
// int8 path, the simulated NPU, and each placement of the hybrid schedule (npu, cpu, split), and a
// non-finite activation must name ffn_down's input as the unfused path does.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "ops/activation.h"
#include "runtime/engine.h"

namespace ork::runtime {
namespace {

struct Backend {
  const char* name;
  const char* device;
  bool cpu_int8;
  Schedule schedule;
};

const Backend kBackends[] = {
    {"cpu-int8", "cpu", true, Schedule::kNpu},
    {"sim", "sim", false, Schedule::kNpu},
    {"sim --schedule cpu", "sim", false, Schedule::kCpu},
    {"sim --schedule auto", "sim", false, Schedule::kAuto},
};

EngineOptions options(const std::string& model, const Backend& b) {
  EngineOptions o;
  o.model_path = model;
  o.device = b.device;
  o.cpu_int8 = b.cpu_int8;
  o.schedule = b.schedule;
  o.threads = 2;
  o.npu.sim_window_bytes = 64u << 20;
  return o;
}

std::vector<float> random_rows(int64_t m, int64_t k, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(size_t(m * k));
  for (float& x : v) x = d(rng);
  return v;
}

TEST(MatmulGlu, FusedActivationEqualsTheActivationThenMatmulOnEveryQuantizingBackend) {
  testing::TempDir dir;
  const std::string model = dir.file("m.gguf");
  gen::write_model(testing::small_q8_model(), model);
  for (const Backend& b : kBackends) {
    Engine e(options(model, b));
    const model::Linear& down = e.model().weights().layers[1].down;
    for (const ops::Glu glu : {ops::Glu::kSwiglu, ops::Glu::kGeglu}) {
      for (const int64_t m : {1, 5}) {  // a decode row (split by auto) and a prefill chunk
        const std::vector<float> gate = random_rows(m, down.k, uint32_t(m), 2.0f);
        const std::vector<float> up = random_rows(m, down.k, uint32_t(m + 7), 1.0f);
        std::vector<float> act(size_t(m * down.k)), act_scratch(size_t(m * down.k));
        ops::glu(glu, gate.data(), up.data(), m * down.k, act.data());
        std::vector<float> want(size_t(m * down.n)), got(size_t(m * down.n), -1.0f);
        e.backend().matmul(down, act.data(), m, want.data());
        e.backend().matmul_glu(down, glu, gate.data(), up.data(), m, act_scratch.data(), got.data());
        EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0)
            << b.name << " glu " << int(glu) << " m " << m;
      }
    }
  }
}

TEST(MatmulGlu, ANonFiniteActivationNamesTheDownProjectionsInput) {
  testing::TempDir dir;
  const std::string model = dir.file("m.gguf");
  gen::write_model(testing::small_q8_model(), model);
  for (const Backend& b : kBackends) {
    Engine e(options(model, b));
    const model::Linear& down = e.model().weights().layers[0].down;
    const int64_t m = 3;
    std::vector<float> gate = random_rows(m, down.k, 1, 1.0f), up = random_rows(m, down.k, 2, 1.0f);
    up[size_t(2 * down.k + 9)] = std::numeric_limits<float>::infinity();  // silu(g) · inf
    gate[size_t(2 * down.k + 9)] = 1.0f;
    std::vector<float> act(size_t(m * down.k)), y(size_t(m * down.n));
    try {
      e.backend().matmul_glu(down, ops::Glu::kSwiglu, gate.data(), up.data(), m, act.data(), y.data());
      ADD_FAILURE() << b.name << ": no error";
    } catch (const Error& err) {
      const std::string msg = err.what();
      EXPECT_NE(msg.find("non-finite value (inf) in the input of '" + std::string(down.name()) + "' at batch row 2, element 9"),
                std::string::npos)
          << b.name << ": " << msg;
    }
  }
}

}  // namespace
}  // namespace ork::runtime
