// Attention cost at depth: ops::attention (one K/V load per (token, head)) against
// ops::attention_blocked (one per tile of query rows), for a prefill batch of 32 query tokens and
// for one decoded token after 1K, 4K and 16K tokens of f32 KV cache, in a Llama-3.2-1B-like shape
// (32 query heads over 8 KV heads of 64). Both give bit-identical outputs (tests/ops/
// attention_blocked_test.cpp). Run with --benchmark_format=json --benchmark_repetitions=N for JSON
// medians and spreads; the machine is named in the context. Host wall clock of this machine only.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/fp16.h"
#include "core/thread_pool.h"
#include "ops/attention.h"
#include "ops/attention_blocked.h"
#include "ops/attention_f16.h"

namespace {

using namespace ork;

constexpr int64_t kHeads = 32, kHeadsKv = 8, kHeadDim = 64;

ThreadPool& pool() {
  static ThreadPool p(0);
  return p;
}

// args: blocked (0/1), depth (keys before the batch), query tokens
void BM_Attention(benchmark::State& state) {
  const bool blocked = state.range(0) != 0;
  const int64_t depth = state.range(1), n_q = state.range(2);
  const int64_t n_kv = depth + n_q;
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> q(size_t(n_q * kHeads * kHeadDim)), k(size_t(n_kv * kHeadsKv * kHeadDim)), v(k.size()),
      out(q.size());
  for (float& x : q) x = nd(rng);
  for (float& x : k) x = nd(rng);
  for (float& x : v) x = nd(rng);
  const ops::AttentionOptions o;
  for (auto _ : state) {
    if (blocked) {
      ops::attention_blocked(pool(), q.data(), n_q, depth, kHeads, kHeadsKv, kHeadDim, k.data(), v.data(), out.data(), o);
    } else {
      ops::attention(pool(), q.data(), n_q, depth, kHeads, kHeadsKv, kHeadDim, k.data(), v.data(), out.data(), o);
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["tok/s"] = benchmark::Counter(double(n_q), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(blocked ? "blocked" : "per-row") + " depth=" + std::to_string(depth) +
                 " n_q=" + std::to_string(n_q) + " threads=" + std::to_string(pool().size()));
}

void args(benchmark::internal::Benchmark* b) {
  for (int64_t depth : {1024, 4096, 16384}) {
    for (int64_t n_q : {32, 1}) {
      if (n_q == 1) {
        b->Args({0, depth, 1});  // decode runs the per-row kernel (Forward)
        continue;
      }
      for (int64_t blocked : {0, 1}) b->Args({blocked, depth, n_q});
    }
  }
}
BENCHMARK(BM_Attention)->Apply(args)->ArgNames({"blocked", "depth", "n_q"})->UseRealTime()->Unit(benchmark::kMillisecond);

// One decoded token over a short f16 cache in the shape of issue 20's 150 M model (16 query heads,
// 16 KV heads of 64), the cache rows in cache (the same rows every iteration): the fixed cost of a
// decode step's attention, apart from memory. args: keys, threads (1: the calling thread alone).
void BM_DecodeF16Short(benchmark::State& state) {
  const int64_t n_keys = state.range(0), heads = 16, dim = 64;
  static ThreadPool one(1);
  ThreadPool& p = state.range(1) == 1 ? one : pool();
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> q(size_t(heads * dim)), out(q.size());
  std::vector<uint16_t> k(size_t(n_keys * heads * dim)), v(k.size());
  for (float& x : q) x = nd(rng);
  for (auto* c : {&k, &v})
    for (uint16_t& x : *c) x = f32_to_f16(nd(rng));
  const ops::AttentionOptions o;
  for (auto _ : state) {
    ops::attention_f16(p, q.data(), 1, n_keys - 1, heads, heads, dim, k.data(), v.data(), out.data(), o);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetLabel("keys=" + std::to_string(n_keys) + " threads=" + std::to_string(p.size()));
}
BENCHMARK(BM_DecodeF16Short)
    ->ArgsProduct({{16, 32, 64, 256}, {1, 2}})
    ->ArgNames({"keys", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("machine", ork::bench::machine_name());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
