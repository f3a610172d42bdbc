// Microbenchmarks of the CPU kernels: ops::matmul (fast mode on every ISA, and the exact path) per
// weight type, decode (M=1, weights larger than the last-level cache: GB/s of weights read) and
// prefill (M=128: GOPS, 2·M·N·K per call), ops::gemm_i8, and the decode tiles' read pattern without
// their arithmetic (BM_ReadStreams). Run with --benchmark_format=json for JSON;
// the machine is named in the context (the CPU model from /proc/cpuinfo).
#include <benchmark/benchmark.h>

#include <fstream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/huge_page_arena.h"
#include "core/thread_pool.h"
#include "ops/gemm_i8.h"
#include "ops/matmul.h"
#include "ops/prefetch.h"
#include "ops/qpanels.h"
#include "ork/memory_bandwidth.h"
#include "quant/types.h"

namespace {

using namespace ork;

std::vector<uint8_t> make_weight(quant::Type type, int64_t n, int64_t k) {
  const quant::TypeTraits& tt = quant::traits(type);
  const int64_t rb = quant::row_bytes(type, k);
  std::vector<uint8_t> w(size_t(n * rb));
  std::mt19937 gen{1};
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> row(static_cast<size_t>(k));
  for (int64_t r = 0; r < n; ++r) {
    for (float& v : row) v = d(gen);
    tt.quantize(row.data(), w.data() + r * rb, k);
  }
  return w;
}

ThreadPool& pool() {
  static ThreadPool p(0);
  return p;
}

// args: type, mode (0 exact, 1 fast), isa, M, N, K
void BM_Matmul(benchmark::State& state) {
  const auto type = quant::Type(state.range(0));
  const bool fast = state.range(1) != 0;
  const auto isa = ops::Isa(state.range(2));
  const int64_t m = state.range(3), n = state.range(4), k = state.range(5);
  if (!ops::isa_supported(isa)) {
    state.SkipWithError("ISA not supported on this CPU");
    return;
  }
  const std::vector<uint8_t> w = make_weight(type, n, k);
  std::vector<float> x(size_t(m * k), 0.5f), y(size_t(m * n));
  for (auto _ : state) {
    ops::matmul(pool(), x.data(), m, k, w.data(), type, n, y.data(),
                fast ? ops::MatmulMode::kFast : ops::MatmulMode::kExact, isa);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GB/s"] = benchmark::Counter(double(w.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GOPS"] = benchmark::Counter(2.0 * double(m * n * k), benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  state.SetLabel(std::string(quant::type_name(uint32_t(type))) + (fast ? " fast " : " exact ") +
                 std::string(fast ? ops::isa_name(isa) : "") + " threads=" + std::to_string(pool().size()));
}

void matmul_args(benchmark::internal::Benchmark* b) {
  const quant::Type types[] = {quant::Type::Q8_0, quant::Type::Q4_0, quant::Type::Q4_K,
                               quant::Type::Q6_K, quant::Type::F16};
  for (quant::Type t : types) {
    // Decode: 64 MiB-class matrices (4096 × 8192 elements), larger than the LLC.
    for (int isa : {0, 1, 2, 3}) b->Args({int64_t(t), 1, isa, 1, 8192, 4096});
    b->Args({int64_t(t), 0, 0, 1, 8192, 4096});
    // Prefill: M=128 on a 1024 × 2816 matrix (an FFN of the 150 MB test model).
    for (int isa : {0, 1, 2, 3}) b->Args({int64_t(t), 1, isa, 128, 2816, 1024});
    b->Args({int64_t(t), 0, 0, 128, 2816, 1024});
  }
}
BENCHMARK(BM_Matmul)->Apply(matmul_args)->ArgNames({"type", "fast", "isa", "M", "N", "K"})->UseRealTime()->Unit(benchmark::kMillisecond);

// The panel types benchmarked one matrix at a time (BM_QPanels).
const std::vector<int64_t> kPanelBenchTypes = {
    int64_t(quant::Type::Q8_0), int64_t(quant::Type::Q4_0), int64_t(quant::Type::Q2_K), int64_t(quant::Type::Q3_K),
    int64_t(quant::Type::Q4_K), int64_t(quant::Type::Q5_K), int64_t(quant::Type::Q6_K),
    int64_t(quant::Type::IQ4_NL), int64_t(quant::Type::IQ4_XS)};

// The kPanelBenchTypes in panels (qpanels.h). args: type, isa, M, N, K (the shapes of BM_Matmul).
void BM_QPanels(benchmark::State& state) {
  const auto type = quant::Type(state.range(0));
  const auto isa = ops::Isa(state.range(1));
  const int64_t m = state.range(2), n = state.range(3), k = state.range(4);
  if (ops::panel_kernel(type, isa) == nullptr) {
    state.SkipWithError("no panel kernel for this type and ISA on this CPU");
    return;
  }
  const std::vector<uint8_t> w = make_weight(type, n, k);
  const ops::QPanels p = ops::QPanels::pack(type, w.data(), n, k, &pool());
  std::vector<float> x(size_t(m * k), 0.5f), y(size_t(m * n));
  for (auto _ : state) {
    ops::matmul_qpanels(pool(), x.data(), m, p, y.data(), isa);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GB/s"] = benchmark::Counter(double(p.bytes()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GOPS"] = benchmark::Counter(2.0 * double(m * n * k), benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  state.SetLabel(std::string(quant::type_name(uint32_t(type))) + " panels " + std::string(ops::isa_name(isa)) +
                 " threads=" + std::to_string(pool().size()));
}
BENCHMARK(BM_QPanels)
    ->ArgsProduct({kPanelBenchTypes,
                   {0, 1, 2, 3}, {1}, {8192}, {4096}})
    ->ArgsProduct({kPanelBenchTypes,
                   {0, 1, 2, 3}, {128}, {2816}, {1024}})
    // Decode over a matrix beyond a 32 MiB last-level cache for every type (Q4_0: 72 MiB), as a
    // model's weights are: 8192 × 4096 fits that cache at 4.5 bits per weight.
    ->ArgsProduct({kPanelBenchTypes,
                   {1, 2, 3}, {1}, {32768}, {4096}})
    ->ArgNames({"type", "isa", "M", "N", "K"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The tiles' arithmetic alone: one thread, M = 1, a matrix that stays in L2 (N × K small), called
// over and over. args: type, isa, N, K.
void BM_QPanelsHot(benchmark::State& state) {
  const auto type = quant::Type(state.range(0));
  const auto isa = ops::Isa(state.range(1));
  const int64_t n = state.range(2), k = state.range(3);
  static ThreadPool one(1);
  const std::vector<uint8_t> w = make_weight(type, n, k);
  const ops::QPanels p = ops::QPanels::pack(type, w.data(), n, k, &one);
  std::vector<float> x(static_cast<size_t>(k), 0.5f), y(static_cast<size_t>(n));
  for (auto _ : state) {
    ops::matmul_qpanels(one, x.data(), 1, p, y.data(), isa);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GB/s"] = benchmark::Counter(double(p.bytes()), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(quant::type_name(uint32_t(type))) + " " + std::to_string(p.bytes() >> 10) + " KiB");
}
BENCHMARK(BM_QPanelsHot)
    ->ArgsProduct({kPanelBenchTypes, {1, 2}, {256, 512}, {1024}})
    ->ArgNames({"type", "isa", "N", "K"})
    ->UseRealTime();

// Decode through a whole model's matmuls, as the forward pass issues them at M = 1: the linears of
// the 150 M-parameter llama of issue 20 (6 layers of Q/K/V and gate/up as groups, O and down alone,
// then the output), each its own packed copy, 93 M weights in all, or the same with 24 layers (325 M).
// Every call starts cold, as in a decode step; at 6 layers (58–85 MiB packed) a part of each step's
// reads still hits the development VM's 32 MiB last-level cache, at 24 (175–266 MiB) hardly any: the
// DRAM-bound case of a larger model. The panels share one HugePageArena, as a model's do
// (model::CpuMatmul). args: type, layers. GB/s counts the packed bytes read.
void BM_QPanelsModelDecode(benchmark::State& state) {
  const auto type = quant::Type(state.range(0));
  const int64_t embd = 1024, ff = 2816, vocab = 32000, layers = state.range(1);
  struct Layer {
    ops::QPanels q, k, v, o, gate, up, down;
  };
  const auto slice = [&](int64_t n, int64_t k) {
    return int64_t(HugePageArena::slice_bytes(ops::QPanels::packed_bytes(type, n, k)));
  };
  HugePageArena arena(size_t(layers * (4 * slice(embd, embd) + 2 * slice(ff, embd) + slice(embd, ff)) +
                             slice(vocab, embd)));
  const auto pack = [&](int64_t n, int64_t k) {
    const std::vector<uint8_t> w = make_weight(type, n, k);
    return ops::QPanels::pack(type, w.data(), n, k, &pool(), &arena);
  };
  std::vector<Layer> ls;
  size_t bytes = 0;
  for (int64_t l = 0; l < layers; ++l) {
    ls.push_back(Layer{pack(embd, embd), pack(embd, embd), pack(embd, embd), pack(embd, embd), pack(ff, embd),
                       pack(ff, embd), pack(embd, ff)});
    for (const ops::QPanels* p : {&ls.back().q, &ls.back().k, &ls.back().v, &ls.back().o, &ls.back().gate,
                                  &ls.back().up, &ls.back().down})
      bytes += p->bytes();
  }
  const ops::QPanels out = pack(vocab, embd);
  bytes += out.bytes();
  std::vector<float> x(size_t(ff), 0.5f), q(static_cast<size_t>(embd)), k(q), v(q), g(x), u(x),
      logits(static_cast<size_t>(vocab));
  for (auto _ : state) {
    for (const Layer& l : ls) {
      const ops::QPanels* qkv[] = {&l.q, &l.k, &l.v};
      float* qkv_out[] = {q.data(), k.data(), v.data()};
      ops::matmul_qpanels_group(pool(), x.data(), 1, qkv, qkv_out);
      ops::matmul_qpanels(pool(), x.data(), 1, l.o, q.data());
      const ops::QPanels* gu[] = {&l.gate, &l.up};
      float* gu_out[] = {g.data(), u.data()};
      ops::matmul_qpanels_group(pool(), x.data(), 1, gu, gu_out);
      ops::matmul_qpanels(pool(), x.data(), 1, l.down, q.data());
    }
    ops::matmul_qpanels(pool(), x.data(), 1, out, logits.data());
    benchmark::DoNotOptimize(logits.data());
  }
  state.counters["GB/s"] = benchmark::Counter(double(bytes), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(quant::type_name(uint32_t(type))) + " " + std::to_string(bytes >> 20) +
                 " MiB threads=" + std::to_string(pool().size()));
}
BENCHMARK(BM_QPanelsModelDecode)
    ->ArgsProduct({{int64_t(quant::Type::Q8_0), int64_t(quant::Type::Q4_0), int64_t(quant::Type::Q2_K),
                    int64_t(quant::Type::Q3_K),
                    int64_t(quant::Type::Q4_K), int64_t(quant::Type::Q5_K), int64_t(quant::Type::Q6_K),
                    int64_t(quant::Type::IQ4_XS)},
                   {6, 24}})
    ->ArgNames({"type", "layers"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The memory side of the decode tiles alone, no arithmetic but a sum: every thread of the pool reads
// its share of a 256 MiB buffer as `streams` interleaved streams (its share cut into that many
// contiguous parts), 2 KiB of each in turn — one panel's quants of a Q4_K block — with the tiles'
// software prefetch 4 KiB ahead in each stream (prefetch 1) or none (0). streams 1 is one stream a
// thread, as `ork bench`'s read probe reads (its sum_words here too; the probe also lets a thread
// done early take the other's last pieces); a decode tile of an unpaired type's two panels reads
// four streams (two panels' quants and scales). GB/s of the buffer (in 2 MiB pages where the kernel
// has transparent huge pages).
void BM_ReadStreams(benchmark::State& state) {
  const int64_t streams = state.range(0);
  const bool prefetch = state.range(1) != 0;
  constexpr size_t kBytes = size_t(256) << 20, kChunk = 2048;
  // In a HugePageArena, as the weight panels and ork bench's read probe are.
  static HugePageArena arena(kBytes);
  static const std::span<uint64_t> buf = [] {
    const std::span<uint64_t> b(reinterpret_cast<uint64_t*>(arena.take(kBytes)), kBytes / 8);
    for (size_t i = 0; i < b.size(); ++i) b[i] = i;
    return b;
  }();
  std::vector<uint64_t> sums(size_t(pool().size()));
  for (auto _ : state) {
    pool().run([&](int t, int n) {
      const size_t words = buf.size() / size_t(n), part = words / size_t(streams) / (kChunk / 8) * (kChunk / 8);
      const uint64_t* base = buf.data() + size_t(t) * words;
      uint64_t sum = 0;
      for (size_t off = 0; off < part; off += kChunk / 8) {
        for (int64_t s = 0; s < streams; ++s) {
          const uint64_t* p = base + size_t(s) * part + off;
          if (prefetch) ops::prefetch_bytes(reinterpret_cast<const uint8_t*>(p) + ops::kPrefetchAheadBytes, kChunk);
          sum += cli::sum_words(p, kChunk / 8);
        }
      }
      sums[size_t(t)] += sum;
    });
  }
  benchmark::DoNotOptimize(sums.data());
  state.counters["GB/s"] = benchmark::Counter(double(kBytes), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel("threads=" + std::to_string(pool().size()));
}
BENCHMARK(BM_ReadStreams)
    ->ArgsProduct({{1, 2, 4, 8}, {0, 1}})
    ->ArgNames({"streams", "prefetch"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_GemmI8(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  std::vector<int8_t> a(size_t(m * k), 3), b(size_t(n * k), -5);
  std::vector<int32_t> c(size_t(m * n));
  for (auto _ : state) {
    ops::gemm_i8(&pool(), a.data(), b.data(), m, n, k, c.data());
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GOPS"] = benchmark::Counter(2.0 * double(m * n * k), benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  state.counters["GB/s"] = benchmark::Counter(double(n * k), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_GemmI8)->Args({1, 8192, 4096})->Args({128, 1024, 1024})->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      benchmark::AddCustomContext("cpu_model", line.substr(line.find(':') + 2));
      break;
    }
  benchmark::AddCustomContext("best_isa", std::string(ork::ops::isa_name(ork::ops::best_isa())));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
