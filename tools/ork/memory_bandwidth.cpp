#include "memory_bandwidth.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/part_claims.h"
#include "core/timer.h"
#include "ops/cpu_features.h"

namespace ork::cli {

ORK_VECTOR_CLONES uint64_t sum_words(const uint64_t* __restrict p, size_t n) {
  uint64_t lanes[8] = {};
  for (size_t i = 0; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) lanes[l] += p[i + l];
  uint64_t s = 0;
  for (uint64_t v : lanes) s += v;
  return s;
}

uint64_t sum_in_parts(ThreadPool& pool, const uint64_t* p, size_t n) {
  // Items of 4 KiB (512 words; the last one shorter), the pieces a whole number of them.
  constexpr size_t kItemWords = 512;
  const int64_t items = int64_t((n + kItemWords - 1) / kItemWords);
  const int threads = pool.size();
  std::vector<int64_t> bounds(size_t(threads) + 1);
  for (int t = 0; t <= threads; ++t) bounds[size_t(t)] = items * t / threads;
  PartClaims claims(bounds, int64_t(kReadPieceBytes / 8 / kItemWords), int64_t(kReadTailBytes / 8 / kItemWords));
  std::vector<uint64_t> sums(static_cast<size_t>(threads), 0);
  pool.run([&](int t, int) {
    int64_t b = 0, e = 0;
    while (claims.claim(t, &b, &e)) {
      const size_t w0 = size_t(b) * kItemWords, w1 = std::min(n, size_t(e) * kItemWords);
      const size_t whole = (w1 - w0) / 8 * 8;  // sum_words reads whole groups of 8
      uint64_t s = sum_words(p + w0, whole);
      for (size_t w = w0 + whole; w < w1; ++w) s += p[w];
      sums[size_t(t)] += s;
    }
  });
  uint64_t total = 0;
  for (uint64_t v : sums) total += v;
  return total;
}

double copy_bandwidth_gbs(ThreadPool& pool, size_t bytes, int passes) {
  HugePageArena arena(2 * HugePageArena::slice_bytes(bytes));
  uint8_t* const src = arena.take(bytes);
  uint8_t* const dst = arena.take(bytes);
  pool.run([&](int i, int n) {
    const size_t b = bytes * size_t(i) / size_t(n), e = bytes * size_t(i + 1) / size_t(n);
    std::memset(src + b, i + 1, e - b);
    std::memset(dst + b, 0, e - b);
  });
  double best = 0;
  for (int r = 0; r <= passes; ++r) {
    const double t0 = now_ms();
    pool.run([&](int i, int n) {
      const size_t b = bytes * size_t(i) / size_t(n), e = bytes * size_t(i + 1) / size_t(n);
      std::memcpy(dst + b, src + b, e - b);
    });
    const double ms = now_ms() - t0;
    if (r > 0) best = std::max(best, 2.0 * double(bytes) / (ms * 1e6));
  }
  return best;
}

ReadProbe::ReadProbe(ThreadPool& pool, size_t bytes)
    : pool_(pool),
      words_(std::max<size_t>(bytes / 8, 8)),
      arena_(words_ * 8),
      buf_(reinterpret_cast<uint64_t*>(arena_.take(words_ * 8))) {
  pool_.run([&](int i, int n) {
    const size_t b = words_ * size_t(i) / size_t(n), e = words_ * size_t(i + 1) / size_t(n);
    for (size_t w = b; w < e; ++w) buf_[w] = w;
  });
}

double ReadProbe::gbs(int passes) {
  double best = 0;
  for (int r = 0; r <= passes; ++r) {
    const double t0 = now_ms();
    sink_ += sum_in_parts(pool_, buf_, words_);
    const double ms = now_ms() - t0;
    if (r > 0) best = std::max(best, double(words_ * 8) / (ms * 1e6));
  }
  return best;
}

}  // namespace ork::cli
