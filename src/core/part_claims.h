// PartClaims — hands out [0, n) for a loop that streams memory: one contiguous part per thread, each
// thread taking pieces of its own part front to back (so it reads one ascending stream, and a
// prefetch past a piece's end lands in its own next piece), and, once its part is used up, pieces
// from the back of the other parts (so a thread that started late or runs on a slower core holds
// the loop up by at most about one piece). With a smaller last piece (tail_piece), a part's pieces
// shrink as it runs out — half of what is left once less than two pieces are, down to tail_piece —
// so the threads finish within about one tail piece of each other.
// Thread-safety: claim() may be called from any threads at once; every index of [0, n) is handed
// out exactly once. Not copyable or movable (the parts are atomics).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>

namespace ork {

class PartClaims {
 public:
  // bounds: the parts' edges, bounds[0] = 0 ≤ bounds[1] ≤ … ≤ bounds[P] = n < 2^31 (P ≥ 1 parts; part t
  // is [bounds[t], bounds[t+1]), empty parts allowed); piece ≥ 1 items per claim while a part has
  // at least 2 · piece left, then max(tail_piece, ⌈left / 2⌉) (and never more than is left);
  // 1 ≤ tail_piece ≤ piece, by default piece (every piece `piece` long but a part's last).
  PartClaims(std::span<const int64_t> bounds, int64_t piece, int64_t tail_piece = 0);
  PartClaims(const PartClaims&) = delete;
  PartClaims& operator=(const PartClaims&) = delete;

  // The next piece [*begin, *end) for the thread whose own part is `part` (0 ≤ part < P):
  // from the front of that part while it lasts, then from the back of parts part+1, part+2, …
  // (wrapping). False when every part is used up.
  bool claim(int part, int64_t* begin, int64_t* end);

 private:
  // One part's unclaimed range, front in the low 32 bits, back (exclusive) in the high 32 bits, on a
  // cache line of its own: the owner's claims do not contend with the other parts' owners.
  struct alignas(64) Part {
    std::atomic<uint64_t> range{0};
  };
  bool take_front(Part& p, int64_t* begin, int64_t* end) const;
  bool take_back(Part& p, int64_t* begin, int64_t* end) const;

  // The parts of a pool of up to kInlineParts threads live in the object (a decode step constructs
  // one per matmul: no allocation there), more on the heap.
  static constexpr int kInlineParts = 8;
  // Items the next claim of a part with `left` items takes (left ≥ 1).
  int64_t piece_for(int64_t left) const;

  int n_parts_;
  int64_t piece_, tail_piece_;
  Part inline_parts_[kInlineParts];
  std::unique_ptr<Part[]> heap_parts_;
  Part* parts_ = inline_parts_;
};

}  // namespace ork
