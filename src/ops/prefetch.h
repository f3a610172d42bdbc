// Software prefetch of a byte range, for kernels whose access pattern the hardware prefetcher does
// not follow fast enough (the panel decode tiles: docs/ops.md, "Prefetching the next block").
// A hint only: results never depend on it. Thread-safe (no state).
#pragma once

#include <cstdint>

namespace ork::ops {

inline constexpr int64_t kCacheLineBytes = 64;

// Which caches a prefetch fills. kL2 (prefetcht1 on x86-64, prfm pldl2keep on aarch64): the second
// level and beyond, not L1 — for the decode tiles' weight streams, read once and asked for
// kilobytes ahead. With the L2 hint the 24-layer decode's matmuls ran Q8_0 × 1.12–1.44, Q4_0
// × 1.06–1.08, Q4_K / Q5_K × 1.04 faster (AVX2 tiles: Q8_0 × 1.48, Q6_K × 1.58) on an AVX-512 VNNI
// VM whose memory read at 30–36 GB/s, and × 0.99–1.00 on one reading at 55–76 (in-process A/Bs,
// docs/ops.md, "sixth session" and "fifth session") — likely because a prefetcht0 that misses holds
// one of the core's few L1 miss buffers for the whole DRAM latency. kL1 (prefetcht0, prfm
// pldl1keep): every level — for data read right after it is asked for (a block's KV rows). (The
// AVX-512 VNNI Q6_K decode tile wanted kL1 while it read both panels of a pair at once, × 0.87–1.00
// with kL2; reading them panel by panel it wants kL2, × 1.13–1.60: docs/ops.md, "seventh session".)
enum class PrefetchInto { kL1, kL2 };

// Asks for the cache line holding p, for reading, into the caches kInto names.
template <PrefetchInto kInto>
inline void prefetch_line(const void* p) {
  __builtin_prefetch(p, 0, kInto == PrefetchInto::kL1 ? 3 : 2);
}

// Asks for the lines holding p, p + step, … below p + bytes, as prefetch_line: every line with the
// default step, every n-th with step n·64 (the rest left to the hardware prefetcher).
template <PrefetchInto kInto = PrefetchInto::kL2>
inline void prefetch_bytes(const uint8_t* p, int64_t bytes, int64_t step = kCacheLineBytes) {
  for (int64_t l = 0; l < bytes; l += step) prefetch_line<kInto>(p + l);
}

// Every cache line [p, p + bytes) touches, whatever p's alignment (a block's scales: 288 or 320 bytes
// at any offset), as prefetch_bytes.
template <PrefetchInto kInto = PrefetchInto::kL2>
inline void prefetch_lines(const uint8_t* p, int64_t bytes) {
  const uintptr_t first = reinterpret_cast<uintptr_t>(p) & ~uintptr_t(kCacheLineBytes - 1);
  for (uintptr_t l = first; l < reinterpret_cast<uintptr_t>(p) + uintptr_t(bytes); l += kCacheLineBytes)
    prefetch_line<kInto>(reinterpret_cast<const void*>(l));
}

// How far ahead of its reads a decode tile asks for each panel's quants: about 4 KiB, i.e. the
// blocks_ahead(quant bytes of one panel's block) blocks after the current one. One block (2–3 KiB
// for the K types, 256 B for Q4_0) left DRAM latency exposed: kernels_bench BM_QPanelsModelDecode
// on the AVX-512 VNNI machine of docs/ops.md gained 10–25 % for Q4_0, Q4_K, Q5_K and IQ4_XS at
// 4 KiB, nothing more at 8 KiB. The Q6_K tiles stay at one pair block (6.6 KiB): two or three
// measured slower or equal — asked for once; the AVX-512 VNNI one-row Q6_K tile now asks two pair
// blocks ahead and the next one again (its comment has the figures).
// The AVX-512 VNNI Q8_0 tile asks four times as far (17 KiB) and twice again nearer (its comment has
// the figures).
inline constexpr int64_t kPrefetchAheadBytes = 4096;
constexpr int64_t blocks_ahead(int64_t quant_bytes) {
  return (kPrefetchAheadBytes + quant_bytes - 1) / quant_bytes;
}

// For the K-type panel decode tiles (ops/qpanels_*.cpp, one activation row): next_block asks at
// once for the scales of the block `ahead` blocks after b — this tile's, or past the tile's last
// block the next tile's (the caller's next panels; a prefetch past the end of the matrix is
// harmless) — and each step of a block's loop then asks for one part of that block's quants
// (prefetch_part). Spread over the loop, the prefetches overlap the arithmetic instead of queueing
// ahead of it, and a tile's first blocks no longer start cold. The scales are a stream of their own
// (the panel's first sb bytes, 288–576 bytes a block) too short for the hardware prefetcher to
// follow: `perf annotate` put a quarter of the VNNI Q6_K tile's samples on its scale loads until
// they were prefetched as well (kernels_bench BM_QPanelsModelDecode, docs/ops.md). The small-block
// tiles (Q8_0, Q4_0, IQ4_NL) prefetch their quants only: their scales too measured slower.
// panels: the tile's first panel; pb: bytes per panel; sb: its scale region's bytes; ahead >= 1.
struct NextBlock {
  const uint8_t* quants;  // panel 0's quants; panel c's at quants + c·pb
};
template <int NP>
inline NextBlock next_block(const uint8_t* panels, int64_t pb, int64_t sb, int64_t b, int64_t nb,
                            int64_t quant_bytes, int64_t scale_bytes, int64_t ahead) {
  const int64_t a = b + ahead;
  if (a < nb) {
    for (int c = 0; c < NP; ++c) prefetch_lines(panels + c * pb + a * scale_bytes, scale_bytes);
    return {panels + sb + a * quant_bytes};
  }
  if (a - nb < nb)
    for (int c = 0; c < NP; ++c) prefetch_lines(panels + (NP + c) * pb + (a - nb) * scale_bytes, scale_bytes);
  return {panels + NP * pb + sb + (a - nb) * quant_bytes};
}
// For the panel types stored in pairs (ops/qpanels.h: a pair's blocks of block_bytes one after
// another, the next pair pair_bytes on): where block a of the pair at `pair` starts — past the pair's
// last block (nb blocks), the next pair's, i.e. the next tile's — or null past that one too.
inline const uint8_t* pair_block_ahead(const uint8_t* pair, int64_t pair_bytes, int64_t block_bytes, int64_t nb,
                                       int64_t a) {
  if (a < nb) return pair + a * block_bytes;
  if (a - nb < nb) return pair + pair_bytes + (a - nb) * block_bytes;
  return nullptr;
}
// Part `part` of `parts` of the block at n, for every panel of the tile.
template <int NP>
inline void prefetch_part(const NextBlock& n, int64_t pb, int64_t quant_bytes, int part, int parts) {
  const int64_t bytes = quant_bytes / parts;
  for (int c = 0; c < NP; ++c) prefetch_bytes(n.quants + c * pb + part * bytes, bytes);
}

}  // namespace ork::ops
