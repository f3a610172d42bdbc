// The C API from C++: concurrent duplicated contexts, the memory query against the device's own
// counters and the plan, zero-copy logits through an imported memfd, shared scratch, shared weights,
// and bad input (handles, sizes, freed models).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <vector>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "ork/ork.h"
#include "runtime/engine.h"

namespace {

const std::vector<int32_t> kPrompt = {1, 7, 300, 42, 5, 99, 250, 3};

class Api : public ::testing::Test {
 protected:
  std::string make_model(const std::string& name, uint64_t seed) {
    ork::gen::ModelSpec s;
    s.n_embd = 128;
    s.n_ff = 256;
    s.n_layer = 2;
    s.n_vocab = 512;
    s.weight_type = ork::quant::Type::Q8_0;
    s.seed = seed;
    const std::string path = dir_.file(name);
    ork::gen::write_model(s, path);
    return path;
  }
  ork_model* load(const std::string& path, ork_model* scratch_with = nullptr, ork_model* weights_with = nullptr) {
    ork_model_options o;
    ork_model_options_init(&o);
    o.device = "sim";
    o.threads = 2;
    o.share_scratch_with = scratch_with;
    o.share_weights_with = weights_with;
    ork_model* m = nullptr;
    EXPECT_EQ(ork_model_load(path.c_str(), &o, &m), ORK_OK) << ork_last_error();
    return m;
  }
  // Greedy: the prompt's last logits, then 6 decode steps' logits.
  std::vector<float> run(ork_model* m) {
    ork_context* c = nullptr;
    EXPECT_EQ(ork_context_create(m, 64, &c), ORK_OK) << ork_last_error();
    std::vector<float> out;
    const float* l = nullptr;
    EXPECT_EQ(ork_eval(c, kPrompt.data(), int64_t(kPrompt.size()), &l), ORK_OK) << ork_last_error();
    ork_model_info info;
    ork_model_get_info(m, &info);
    for (int i = 0; i < 6; ++i) {
      out.insert(out.end(), l, l + info.n_vocab);
      const int32_t next = int32_t(std::max_element(l, l + info.n_vocab) - l);
      EXPECT_EQ(ork_eval(c, &next, 1, &l), ORK_OK) << ork_last_error();
    }
    ork_context_free(c);
    return out;
  }
  ork_mem_info query(ork_model* m) {
    ork_mem_info mi{};
    EXPECT_EQ(ork_query_mem(m, nullptr, &mi), ORK_OK) << ork_last_error();
    return mi;
  }
  ork::testing::TempDir dir_;
};

TEST_F(Api, ConcurrentDuplicatedContextsMatchASingleContext) {
  ork_model* m = load(make_model("a.gguf", 1));
  ork_context* base = nullptr;
  ASSERT_EQ(ork_context_create(m, 64, &base), ORK_OK);
  ork_sampler_params sp;
  ork_sampler_params_init(&sp);
  sp.seed = 7;
  auto generate = [&](ork_context* c, std::vector<int32_t>* out) {
    ork_sampler* s = nullptr;
    ASSERT_EQ(ork_sampler_create(&sp, &s), ORK_OK);
    out->assign(20, -1);
    int64_t n = 0;
    ASSERT_EQ(ork_generate(c, s, kPrompt.data(), int64_t(kPrompt.size()), 20, out->data(), 20, &n, nullptr, nullptr),
              ORK_OK)
        << ork_last_error();
    out->resize(size_t(n));
    ork_sampler_free(s);
  };
  std::vector<int32_t> expected;
  generate(base, &expected);
  ASSERT_FALSE(expected.empty());

  constexpr int kThreads = 4;
  std::vector<ork_context*> ctx(kThreads);
  for (auto& c : ctx) ASSERT_EQ(ork_context_dup(base, 0, &c), ORK_OK);
  std::vector<std::vector<int32_t>> outs(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int rep = 0; rep < 2; ++rep) {
        ork_context_reset(ctx[size_t(i)]);
        generate(ctx[size_t(i)], &outs[size_t(i)]);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& o : outs) EXPECT_EQ(o, expected);

  // A duplicate with copy_state continues where its source is.
  ork_context* fork = nullptr;
  ASSERT_EQ(ork_context_dup(base, 1, &fork), ORK_OK);
  int64_t a = 0, b = 0;
  ork_context_n_past(base, &a);
  ork_context_n_past(fork, &b);
  EXPECT_EQ(a, b);
  EXPECT_GT(b, 0);
  for (auto* c : ctx) ork_context_free(c);
  ork_context_free(fork);
  ork_context_free(base);
  ork_model_free(m);
}

TEST_F(Api, MemoryQueryAgreesWithTheDeviceCountersAndThePlan) {
  const std::string path = make_model("a.gguf", 1);
  ork::runtime::EngineOptions eo;
  eo.model_path = path;
  eo.device = "sim";
  const ork::runtime::MemoryPlan plan = ork::runtime::plan_memory(eo, 64);
  ork_model* m = load(path);
  ork_context* c = nullptr;
  ASSERT_EQ(ork_context_create(m, 64, &c), ORK_OK);
  ASSERT_EQ(ork_eval(c, kPrompt.data(), int64_t(kPrompt.size()), nullptr), ORK_OK);
  ork_mem_info mi{};
  ASSERT_EQ(ork_query_mem(nullptr, c, &mi), ORK_OK);
  EXPECT_GT(mi.weight_bytes, 0u);
  EXPECT_EQ(mi.total_dma_bytes, mi.weight_bytes + mi.internal_device_bytes);  // nothing else mapped
  EXPECT_EQ(mi.total_dma_bytes, plan.dma_bytes);
  EXPECT_EQ(mi.kv_cache_bytes, plan.kv_cache_bytes);
  EXPECT_EQ(mi.internal_bytes, mi.internal_device_bytes + mi.kv_cache_bytes + mi.scratch_host_bytes);
  EXPECT_EQ(mi.sram_bytes, 0u);
  uint64_t sum = 0;
  for (uint32_t d = 0; d < mi.n_domains; ++d) {
    sum += mi.domains[d].total_bytes;
    EXPECT_EQ(mi.domains[d].total_bytes, mi.domains[d].weight_bytes + mi.domains[d].internal_bytes);
    if (d < plan.weight_device_bytes.size()) {
      EXPECT_EQ(mi.domains[d].weight_bytes, plan.weight_device_bytes[d]);
      EXPECT_EQ(mi.domains[d].internal_bytes, plan.scratch_device_bytes[d]);
    }
  }
  EXPECT_EQ(sum, mi.total_dma_bytes);
  EXPECT_EQ(mi.io_bytes, uint64_t(512) * sizeof(float));  // the context's own logits buffer
  ork_context_free(c);
  ork_model_free(m);
}

TEST_F(Api, LogitsLandInAnImportedMemfdWithNoCopy) {
  ork_model* m = load(make_model("a.gguf", 1));
  const std::vector<float> expected = run(m);  // first entry: the prompt's last logits
  const size_t bytes = 512 * sizeof(float) + 4096;
  const int fd = memfd_create("ork-logits", 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, off_t(bytes)), 0);
  auto* mine = static_cast<float*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(mine, MAP_FAILED);
  ork_mem* mem = nullptr;
  ASSERT_EQ(ork_mem_import_fd(m, fd, bytes, &mem), ORK_OK) << ork_last_error();
  ork_mem_info before = query(m);
  EXPECT_EQ(before.domains[0].io_bytes, 8192u);
  ork_context* c = nullptr;
  ASSERT_EQ(ork_context_create(m, 64, &c), ORK_OK);
  ASSERT_EQ(ork_context_set_logits(c, mem, 4096), ORK_OK) << ork_last_error();
  const float* l = nullptr;
  ASSERT_EQ(ork_eval(c, kPrompt.data(), int64_t(kPrompt.size()), &l), ORK_OK) << ork_last_error();
  void* host = nullptr;
  ork_mem_info_get(mem, &host, nullptr);
  EXPECT_EQ(static_cast<const void*>(l), static_cast<uint8_t*>(host) + 4096);  // the caller's memory itself
  // Visible through the caller's own mapping of the memfd, bit for bit.
  EXPECT_EQ(std::memcmp(mine + 1024, expected.data(), 512 * sizeof(float)), 0);
  ork_mem_info ci{};
  ASSERT_EQ(ork_query_mem(nullptr, c, &ci), ORK_OK);
  EXPECT_EQ(ci.io_bytes, 0u) << "the context allocated a logits buffer of its own";
  EXPECT_EQ(ci.io_external_bytes, 512 * sizeof(float));

  EXPECT_EQ(ork_mem_free(mem), ORK_ERR_INVALID_ARG);  // still in use
  EXPECT_EQ(ork_context_set_logits(c, mem, bytes - 16), ORK_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(ork_context_set_logits(c, mem, UINT64_MAX - 3), ORK_ERR_BUFFER_TOO_SMALL);
  ASSERT_EQ(ork_context_set_logits(c, nullptr, 0), ORK_OK);
  EXPECT_EQ(ork_mem_free(mem), ORK_OK);
  // Imports that cannot be: too large for the fd, a bad fd.
  ork_mem* bad = nullptr;
  EXPECT_EQ(ork_mem_import_fd(m, fd, bytes * 2, &bad), ORK_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(ork_mem_import_fd(m, -1, 4096, &bad), ORK_ERR_INVALID_ARG);
  EXPECT_EQ(ork_mem_import_fd(m, fd, 0, &bad), ORK_ERR_INVALID_ARG);
  EXPECT_EQ(bad, nullptr);
  munmap(mine, bytes);
  close(fd);
  ork_context_free(c);
  ork_model_free(m);
}

TEST_F(Api, SharedScratchSavesTheSecondModelsScratch) {
  const std::string pa = make_model("a.gguf", 1), pb = make_model("b.gguf", 2);
  ork_model* alone = load(pb);
  const std::vector<float> expected_b = run(alone);
  const ork_mem_info b_alone = query(alone);
  ork_model_free(alone);

  ork_model* a = load(pa);
  const ork_mem_info a_only = query(a);
  // The plan before loading B on A's scratch says what the query says after.
  ork_model_options po;
  ork_model_options_init(&po);
  po.device = "sim";
  po.share_scratch_with = a;
  ork_mem_info plan{};
  ASSERT_EQ(ork_query_plan(pb.c_str(), &po, 64, &plan), ORK_OK) << ork_last_error();
  ork_model* b = load(pb, a, nullptr);
  ASSERT_NE(b, nullptr);
  const ork_mem_info mb = query(b);
  EXPECT_EQ(plan.internal_shared_saving, mb.internal_shared_saving);
  EXPECT_EQ(plan.total_dma_bytes, b_alone.weight_bytes);  // no scratch growth: the same shapes
  ASSERT_LE(plan.n_domains, mb.n_domains);
  for (uint32_t d = 0; d < plan.n_domains; ++d) {
    EXPECT_EQ(plan.domains[d].internal_bytes, mb.domains[d].internal_bytes) << "domain " << d;
    EXPECT_EQ(plan.domains[d].weight_bytes, mb.domains[d].weight_bytes) << "domain " << d;
  }
  EXPECT_GT(mb.internal_shared_saving, 0u);
  EXPECT_EQ(mb.internal_shared_saving, b_alone.internal_device_bytes);
  // Same shapes: B added its weights and no scratch at all.
  EXPECT_EQ(mb.total_dma_bytes, a_only.total_dma_bytes + b_alone.weight_bytes);
  EXPECT_EQ(run(b), expected_b);
  run(a);  // and A still runs on the shared scratch
  EXPECT_EQ(run(b), expected_b);
  ork_model_free(a);  // B keeps what it shares alive
  EXPECT_EQ(run(b), expected_b);
  ork_model_free(b);
}

// A larger model on a smaller model's scratch: the scratch grows, and the plan says by how much.
TEST_F(Api, PlannedSharedScratchGrowthMatchesTheDevice) {
  const std::string pa = make_model("small.gguf", 1);
  ork::gen::ModelSpec s;
  s.n_embd = 256;
  s.n_ff = 768;
  s.n_layer = 2;
  s.n_vocab = 512;
  s.weight_type = ork::quant::Type::Q8_0;
  const std::string pb = dir_.file("large.gguf");
  ork::gen::write_model(s, pb);
  ork_model* a = load(pa);
  const ork_mem_info a_only = query(a);
  ork_model_options po;
  ork_model_options_init(&po);
  po.device = "sim";
  po.share_scratch_with = a;
  ork_mem_info plan{};
  ASSERT_EQ(ork_query_plan(pb.c_str(), &po, 64, &plan), ORK_OK) << ork_last_error();
  ork_model* b = load(pb, a, nullptr);
  ASSERT_NE(b, nullptr);
  const ork_mem_info mb = query(b);
  EXPECT_GT(plan.total_dma_bytes, mb.weight_bytes);  // the weights and the scratch's growth
  EXPECT_EQ(mb.total_dma_bytes - a_only.total_dma_bytes, plan.total_dma_bytes);
  EXPECT_EQ(plan.internal_shared_saving, mb.internal_shared_saving);
  EXPECT_GT(plan.internal_shared_saving, 0u);
  for (uint32_t d = 0; d < plan.n_domains; ++d)
    EXPECT_EQ(plan.domains[d].internal_bytes, mb.domains[d].internal_bytes) << "domain " << d;
  ork_model_free(b);
  ork_model_free(a);
}

TEST_F(Api, SharedWeightsAreComparedByContent) {
  const std::string pa = make_model("a.gguf", 1);
  const std::string same = make_model("a_copy.gguf", 1), other = make_model("b.gguf", 2);
  ork_model* a = load(pa);
  const std::vector<float> expected = run(a);
  const ork_mem_info ma = query(a);

  ork_model* twin = load(same, nullptr, a);
  const ork_mem_info mt = query(twin);
  EXPECT_EQ(mt.weights_shared, 2u * 7u + 1u);  // every linear weight (7 per layer + the output)
  EXPECT_EQ(mt.weight_bytes, 0u);
  EXPECT_GT(mt.weight_shared_bytes, 0u);
  EXPECT_EQ(mt.total_dma_bytes, ma.total_dma_bytes + mt.internal_device_bytes);
  EXPECT_EQ(run(twin), expected);

  ork_model* b = load(other, nullptr, a);
  const ork_mem_info mb = query(b);
  EXPECT_EQ(mb.weights_shared, 0u);
  EXPECT_GT(mb.weight_bytes, 0u);
  ork_model_free(b);
  ork_model_free(a);
  EXPECT_EQ(run(twin), expected);  // A's weights stay while the twin uses them
  ork_model_free(twin);
}

// ork_model_options.kv_type: the plan and the context count the type's bytes (f16 by default), and
// an unknown name is refused.
TEST_F(Api, KvTypeSizesTheCacheAndUnknownNamesAreRefused) {
  const std::string path = make_model("a.gguf", 1);
  ork_model_info info{};
  std::vector<uint64_t> kv_bytes;
  for (const char* t : {static_cast<const char*>(nullptr), "f32", "f16", "q8_0"}) {
    ork_model_options o;
    ork_model_options_init(&o);
    o.device = "cpu";
    o.threads = 2;
    o.kv_type = t;
    ork_mem_info plan{};
    ASSERT_EQ(ork_query_plan(path.c_str(), &o, 64, &plan), ORK_OK) << ork_last_error();
    ork_model* m = nullptr;
    ASSERT_EQ(ork_model_load(path.c_str(), &o, &m), ORK_OK) << ork_last_error();
    ork_model_get_info(m, &info);
    ork_context* c = nullptr;
    ASSERT_EQ(ork_context_create(m, 64, &c), ORK_OK) << ork_last_error();
    const float* l = nullptr;
    ASSERT_EQ(ork_eval(c, kPrompt.data(), int64_t(kPrompt.size()), &l), ORK_OK) << ork_last_error();
    ork_mem_info mi{};
    ASSERT_EQ(ork_query_mem(nullptr, c, &mi), ORK_OK);
    EXPECT_EQ(mi.kv_cache_bytes, plan.kv_cache_bytes) << (t ? t : "default");
    kv_bytes.push_back(mi.kv_cache_bytes);
    ork_context_free(c);
    ork_model_free(m);
  }
  const uint64_t per_value = 2 * uint64_t(info.n_layer) * 64;  // K and V, every layer, 64 positions
  ASSERT_EQ(kv_bytes.size(), 4u);
  EXPECT_EQ(kv_bytes[0], kv_bytes[2]);  // the default is f16
  EXPECT_EQ(kv_bytes[1] % (per_value * 4), 0u);
  EXPECT_EQ(kv_bytes[1], 2 * kv_bytes[2]);
  EXPECT_EQ(kv_bytes[3] * 32, kv_bytes[2] / 2 * 34);  // 34 bytes per 32 values
  ork_model_options o;
  ork_model_options_init(&o);
  o.device = "cpu";
  o.kv_type = "q4_0";
  ork_model* m = nullptr;
  EXPECT_EQ(ork_model_load(path.c_str(), &o, &m), ORK_ERR_INVALID_ARG);
  EXPECT_NE(std::string(ork_last_error()).find("kv_type: unknown KV cache type 'q4_0'"), std::string::npos)
      << ork_last_error();
}

// npu_wtype "i4": the device weight bytes ork_query_mem reports per domain are at most 0.55 × the
// i8 model's; an unknown name is ORK_ERR_INVALID_ARG naming the field.
TEST_F(Api, Int4DeviceWeightsTakeAboutHalfTheBytes) {
  const std::string path = make_model("w.gguf", 3);
  ork_mem_info mem[2];
  const char* types[2] = {"i8", "i4"};
  for (int i = 0; i < 2; ++i) {
    ork_model_options o;
    ork_model_options_init(&o);
    o.device = "sim";
    o.npu_wtype = types[i];
    ork_model* m = nullptr;
    ASSERT_EQ(ork_model_load(path.c_str(), &o, &m), ORK_OK) << ork_last_error();
    ASSERT_EQ(ork_query_mem(m, nullptr, &mem[i]), ORK_OK) << ork_last_error();
    ork_model_free(m);
  }
  ASSERT_GT(mem[0].weight_bytes, 0u);
  EXPECT_LE(double(mem[1].weight_bytes), 0.55 * double(mem[0].weight_bytes));
  ASSERT_EQ(mem[0].n_domains, mem[1].n_domains);
  for (uint32_t d = 0; d < mem[0].n_domains; ++d)
    EXPECT_LE(double(mem[1].domains[d].weight_bytes), 0.55 * double(mem[0].domains[d].weight_bytes)) << d;
  ork_model_options o;
  ork_model_options_init(&o);
  o.device = "sim";
  o.npu_wtype = "int4";
  ork_model* m = nullptr;
  EXPECT_EQ(ork_model_load(path.c_str(), &o, &m), ORK_ERR_INVALID_ARG);
  EXPECT_NE(std::string(ork_last_error()).find("npu_wtype"), std::string::npos) << ork_last_error();
}

TEST_F(Api, BadInputGivesAStatusAndAMessage) {
  ork_model* m = load(make_model("a.gguf", 1));
  ork_context* c = nullptr;
  ASSERT_EQ(ork_context_create(m, 16, &c), ORK_OK);
  const float* l = nullptr;
  // Handles: null, made up, freed.
  EXPECT_EQ(ork_eval(nullptr, kPrompt.data(), 1, &l), ORK_ERR_BAD_HANDLE);
  EXPECT_NE(std::string(ork_last_error()).find("NULL"), std::string::npos);
  int junk = 0;
  EXPECT_EQ(ork_eval(reinterpret_cast<ork_context*>(&junk), kPrompt.data(), 1, &l), ORK_ERR_BAD_HANDLE);
  EXPECT_EQ(ork_query_mem(reinterpret_cast<ork_model*>(&junk), nullptr, nullptr), ORK_ERR_INVALID_ARG);
  ork_mem_info mi;
  EXPECT_EQ(ork_query_mem(reinterpret_cast<ork_model*>(&junk), nullptr, &mi), ORK_ERR_BAD_HANDLE);
  EXPECT_EQ(ork_query_mem(m, c, &mi), ORK_ERR_INVALID_ARG);
  // Sizes: negative, overflowing, too large for the context, tokens outside the vocabulary.
  EXPECT_EQ(ork_eval(c, kPrompt.data(), -5, &l), ORK_ERR_INVALID_ARG);
  EXPECT_EQ(ork_eval(c, kPrompt.data(), INT64_MAX, &l), ORK_ERR_CONTEXT_FULL);
  EXPECT_EQ(ork_context_create(m, -1, &c), ORK_ERR_INVALID_ARG);
  EXPECT_EQ(ork_context_create(m, INT64_MAX, &c), ORK_ERR_INVALID_ARG);
  const int32_t bad_token = 512;
  EXPECT_EQ(ork_eval(c, &bad_token, 1, &l), ORK_ERR_INVALID_ARG);
  std::vector<int32_t> many(17, 1);
  EXPECT_EQ(ork_eval(c, many.data(), 17, &l), ORK_ERR_CONTEXT_FULL);
  float small[8];
  EXPECT_EQ(ork_eval_into(c, kPrompt.data(), 2, 1, small, 8), ORK_ERR_BUFFER_TOO_SMALL);
  char text[2];
  uint64_t n_bytes = 0;
  EXPECT_EQ(ork_detokenize(m, kPrompt.data(), 4, text, sizeof text, &n_bytes), ORK_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(ork_detokenize(m, kPrompt.data(), -1, text, sizeof text, &n_bytes), ORK_ERR_INVALID_ARG);
  int64_t n_past = -1;
  ASSERT_EQ(ork_context_n_past(c, &n_past), ORK_OK);
  EXPECT_EQ(n_past, 0) << "a failed eval changed the context";
  // Options: unknown device and residency, sharing with a cpu model.
  ork_model_options o;
  ork_model_options_init(&o);
  o.device = "gpu";
  ork_model* x = nullptr;
  EXPECT_EQ(ork_model_load(dir_.file("a.gguf").c_str(), &o, &x), ORK_ERR_INVALID_ARG);
  o.device = "sim";
  o.residency = "everywhere";
  EXPECT_EQ(ork_model_load(dir_.file("a.gguf").c_str(), &o, &x), ORK_ERR_INVALID_ARG);
  o.residency = nullptr;
  o.device = "cpu";
  ork_model* cpu = nullptr;
  ASSERT_EQ(ork_model_load(dir_.file("a.gguf").c_str(), &o, &cpu), ORK_OK);
  o.device = "sim";
  o.share_weights_with = cpu;
  EXPECT_EQ(ork_model_load(dir_.file("a.gguf").c_str(), &o, &x), ORK_ERR_INVALID_ARG);
  EXPECT_EQ(x, nullptr);
  ork_model_free(cpu);
  // A context used after its model is freed.
  ASSERT_EQ(ork_model_free(m), ORK_OK);
  EXPECT_EQ(ork_eval(c, kPrompt.data(), 1, &l), ORK_ERR_MODEL_FREED);
  ork_context* d = nullptr;
  EXPECT_EQ(ork_context_dup(c, 0, &d), ORK_ERR_MODEL_FREED);
  EXPECT_EQ(ork_context_free(c), ORK_OK);
  EXPECT_EQ(ork_context_free(c), ORK_ERR_BAD_HANDLE);
  EXPECT_STREQ(ork_status_name(ORK_ERR_MODEL_FREED), "ORK_ERR_MODEL_FREED");
}

}  // namespace
