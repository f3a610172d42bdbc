#include "compute_probe.h"

#include <algorithm>
#include <cstdio>
#include <random>

#include "core/timer.h"
#include "quant/types.h"

namespace ork::cli {
namespace {

constexpr quant::Type kType = quant::Type::Q4_K;
constexpr int kCallsPerPass = 100;

// n rows of kCols uniform(-1, 1) values quantized to kType (GGUF bytes).
std::vector<uint8_t> random_weight(int64_t n) {
  const quant::TypeTraits& tt = quant::traits(kType);
  const int64_t row_bytes = quant::row_bytes(kType, ComputeProbe::kCols);
  std::vector<uint8_t> w(static_cast<size_t>(n * row_bytes));
  std::mt19937 gen{7};
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> row(static_cast<size_t>(ComputeProbe::kCols));
  for (int64_t r = 0; r < n; ++r) {
    for (float& v : row) v = d(gen);
    tt.quantize(row.data(), w.data() + r * row_bytes, ComputeProbe::kCols);
  }
  return w;
}

uint64_t arena_bytes(int threads) {
  const auto slice = [](int64_t n) {
    return HugePageArena::slice_bytes(ops::QPanels::packed_bytes(kType, n, ComputeProbe::kCols));
  };
  return slice(threads * ComputeProbe::kRowsPerThread) + slice(ComputeProbe::kRowsPerThread);
}

}  // namespace

ComputeProbe::ComputeProbe(ThreadPool& pool)
    : pool_(pool), arena_(size_t(arena_bytes(pool.size()))), x_(size_t(kCols), 0.5f),
      y_(size_t(pool.size() * kRowsPerThread)) {
  const int64_t n = pool.size() * kRowsPerThread;
  const std::vector<uint8_t> w = random_weight(n);
  all_ = ops::QPanels::pack(kType, w.data(), n, kCols, &pool, &arena_);
  share_ = ops::QPanels::pack(kType, w.data(), kRowsPerThread, kCols, &pool, &arena_);
}

double ComputeProbe::rate(ThreadPool& pool, const ops::QPanels& w, int passes) {
  for (int i = 0; i < kCallsPerPass / 4; ++i) ops::matmul_qpanels(pool, x_.data(), 1, w, y_.data());
  double best_ms = 0;
  for (int p = 0; p < passes; ++p) {
    const double t0 = now_ms();
    for (int i = 0; i < kCallsPerPass; ++i) ops::matmul_qpanels(pool, x_.data(), 1, w, y_.data());
    const double ms = now_ms() - t0;
    if (p == 0 || ms < best_ms) best_ms = ms;
  }
  return best_ms > 0 ? double(w.bytes()) * kCallsPerPass / (best_ms * 1e6) : 0.0;
}

std::string ComputeProbe::Rate::describe(int threads) const {
  char line[160];
  std::snprintf(line, sizeof line, "arithmetic (an L2-resident Q4_K decode matmul): %.1f GB/s on %d threads, %.1f on one",
                all_gbs, threads, one_gbs);
  return line;
}

ComputeProbe::Rate ComputeProbe::measure(int passes) {
  Rate r;
  r.all_gbs = rate(pool_, all_, passes);
  r.one_gbs = rate(one_, share_, passes);
  return r;
}

}  // namespace ork::cli
