// DecodeBatcher: threads generating on their own contexts get their decode steps gathered into
// batched steps, and each generates exactly the tokens it generates alone (same seed); an error of
// one context in a batch reaches only its thread. The names say Concurrent: scripts/test.sh runs
// these under ThreadSanitizer too.
#include <gtest/gtest.h>

#include <barrier>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "runtime/context.h"
#include "runtime/decode_batcher.h"
#include "runtime/engine.h"
#include "runtime/sampler.h"

namespace ork::runtime {
namespace {

SamplerParams sampling(uint64_t seed) {
  SamplerParams p;
  p.temperature = 0.9f;
  p.seed = seed;
  return p;
}

std::vector<int32_t> prompt_of(int i) { return {int32_t(1 + i), int32_t(40 + 3 * i), 7, int32_t(100 + i)}; }

class DecodeBatcherConcurrent : public ::testing::TestWithParam<const char*> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir;
    gen::write_model(testing::small_q8_model(), dir_->file("m.gguf"));
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static EngineOptions options() {
    EngineOptions o;
    o.model_path = dir_->file("m.gguf");
    o.device = GetParam();
    o.threads = 2;
    o.npu.sim_window_bytes = 2u << 20;
    o.npu.sim_domains = 16;
    return o;
  }
  static testing::TempDir* dir_;
};
testing::TempDir* DecodeBatcherConcurrent::dir_ = nullptr;

TEST_P(DecodeBatcherConcurrent, ThreadsGenerateWhatTheyGenerateAlone) {
  Engine e(options());
  constexpr int kThreads = 4, kTokens = 12;
  std::vector<std::vector<int32_t>> want(kThreads);
  for (int i = 0; i < kThreads; ++i) {  // alone: the same loop with Context::eval
    Context ctx(e, 64);
    Sampler s(sampling(uint64_t(100 + i)));
    for (int32_t t : prompt_of(i)) s.accept(t);
    const float* l = ctx.eval(prompt_of(i));
    for (int k = 0; k < kTokens; ++k) {
      const int32_t id = s.sample(l, int32_t(ctx.n_vocab()));
      s.accept(id);
      want[size_t(i)].push_back(id);
      if (k + 1 < kTokens) l = ctx.eval({id});
    }
  }

  // A long gather: with every thread joined before the first decode, each step holds all of them.
  DecodeBatcher batcher(e, std::chrono::seconds(10));
  std::barrier joined(kThreads);
  std::vector<std::vector<int32_t>> got(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      try {
        Context ctx(e, 64);
        Sampler s(sampling(uint64_t(100 + i)));
        const std::vector<int32_t> prompt = prompt_of(i);
        for (int32_t t : prompt) s.accept(t);
        std::vector<float> logits(size_t(ctx.n_vocab()));
        const float* l = ctx.eval(prompt);
        std::copy(l, l + ctx.n_vocab(), logits.begin());
        DecodeBatcher::Member m = batcher.join();
        joined.arrive_and_wait();
        for (int k = 0; k < kTokens; ++k) {
          const int32_t id = s.sample(logits.data(), int32_t(ctx.n_vocab()));
          s.accept(id);
          got[size_t(i)].push_back(id);
          if (k + 1 < kTokens) batcher.decode(ctx, id, logits.data());
        }
      } catch (const std::exception& ex) {
        errors[size_t(i)] = ex.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(errors[size_t(i)], "");
    EXPECT_EQ(got[size_t(i)], want[size_t(i)]) << "thread " << i;
  }
  const DecodeBatcher::Stats st = batcher.stats();
  EXPECT_EQ(st.max_rows, kThreads);
  EXPECT_EQ(st.rows, uint64_t(kThreads * (kTokens - 1)));
  EXPECT_EQ(st.steps, uint64_t(kTokens - 1));
}

TEST_P(DecodeBatcherConcurrent, AnErrorReachesOnlyItsThread) {
  Engine e(options());
  DecodeBatcher batcher(e, std::chrono::seconds(10));
  Context full(e, 4), fine(e, 64);
  full.eval({1, 2, 3, 4});
  const float* l = fine.eval({5, 6});
  (void)l;
  Context ref(e, 64);
  const float* lr = ref.eval({5, 6, 9});
  const std::vector<float> want(lr, lr + ref.n_vocab());

  std::barrier joined(2);
  std::string full_error;
  std::vector<float> got(size_t(fine.n_vocab()));
  std::thread a([&] {
    DecodeBatcher::Member m = batcher.join();
    joined.arrive_and_wait();
    try {
      std::vector<float> out(size_t(full.n_vocab()));
      batcher.decode(full, 9, out.data());
    } catch (const Error& ex) {
      full_error = ex.what();
    }
  });
  std::thread b([&] {
    DecodeBatcher::Member m = batcher.join();
    joined.arrive_and_wait();
    batcher.decode(fine, 9, got.data());
  });
  a.join();
  b.join();
  EXPECT_NE(full_error.find("full"), std::string::npos) << full_error;
  EXPECT_EQ(got, want);
  EXPECT_EQ(full.n_past(), 4);
  EXPECT_EQ(fine.n_past(), 3);
}

// cpu only: the batcher does not depend on the device, and BatchDecodeTest holds every backend's
// batched logits to the bit (a simulator run here took 77 s under ThreadSanitizer).
INSTANTIATE_TEST_SUITE_P(Devices, DecodeBatcherConcurrent, ::testing::Values("cpu"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

}  // namespace
}  // namespace ork::runtime
