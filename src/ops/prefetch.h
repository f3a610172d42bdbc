// Software prefetch of a byte range, for kernels whose access pattern the hardware prefetcher does
// not follow fast enough (the panel decode tiles: docs/ops.md, "Prefetching the next block").
// A hint only: results never depend on it. Thread-safe (no state).
#pragma once

#include <cstdint>

namespace ork::ops {

inline constexpr int64_t kCacheLineBytes = 64;

// Asks for every cache line of [p, p + bytes) into all cache levels, for reading (prefetcht0 on
// x86-64, prfm pldl1keep on aarch64).
inline void prefetch_bytes(const uint8_t* p, int64_t bytes) {
  for (int64_t l = 0; l < bytes; l += kCacheLineBytes) __builtin_prefetch(p + l, 0, 3);
}

}  // namespace ork::ops
