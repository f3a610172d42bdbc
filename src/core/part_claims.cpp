#include "core/part_claims.h"

#include <algorithm>

#include "core/error.h"

namespace ork {
namespace {

constexpr uint64_t pack(int64_t front, int64_t back) { return uint64_t(front) | (uint64_t(back) << 32); }
constexpr int64_t front_of(uint64_t r) { return int64_t(r & 0xffffffffu); }
constexpr int64_t back_of(uint64_t r) { return int64_t(r >> 32); }

}  // namespace

PartClaims::PartClaims(std::span<const int64_t> bounds, int64_t piece, int64_t tail_piece)
    : n_parts_(int(bounds.size()) - 1), piece_(piece), tail_piece_(tail_piece == 0 ? piece : tail_piece) {
  ORK_CHECK(bounds.size() >= 2 && bounds.front() == 0 && bounds.back() < (int64_t(1) << 31),
            "PartClaims: ", bounds.size(), " bounds, from ", bounds.empty() ? -1 : bounds.front(), " to ",
            bounds.empty() ? -1 : bounds.back(), " (want at least 2, from 0, below 2^31)");
  ORK_CHECK(piece >= 1, "PartClaims: pieces of ", piece, " items");
  ORK_CHECK(tail_piece_ >= 1 && tail_piece_ <= piece, "PartClaims: last pieces of ", tail_piece, " items for pieces of ",
            piece);
  if (n_parts_ > kInlineParts) {
    heap_parts_ = std::make_unique<Part[]>(size_t(n_parts_));
    parts_ = heap_parts_.get();
  }
  for (int t = 0; t < n_parts_; ++t) {
    ORK_CHECK(bounds[size_t(t)] <= bounds[size_t(t) + 1], "PartClaims: bound ", t + 1, " (", bounds[size_t(t) + 1],
              ") below bound ", t, " (", bounds[size_t(t)], ")");
    parts_[size_t(t)].range.store(pack(bounds[size_t(t)], bounds[size_t(t) + 1]), std::memory_order_relaxed);
  }
}

int64_t PartClaims::piece_for(int64_t left) const {
  if (left >= 2 * piece_) return piece_;
  return std::min(left, std::max(tail_piece_, (left + 1) / 2));
}

bool PartClaims::take_front(Part& p, int64_t* begin, int64_t* end) const {
  uint64_t r = p.range.load(std::memory_order_relaxed);
  for (;;) {
    const int64_t f = front_of(r), b = back_of(r);
    if (f >= b) return false;
    const int64_t nf = f + piece_for(b - f);
    if (p.range.compare_exchange_weak(r, pack(nf, b), std::memory_order_relaxed)) {
      *begin = f;
      *end = nf;
      return true;
    }
  }
}

bool PartClaims::take_back(Part& p, int64_t* begin, int64_t* end) const {
  uint64_t r = p.range.load(std::memory_order_relaxed);
  for (;;) {
    const int64_t f = front_of(r), b = back_of(r);
    if (f >= b) return false;
    const int64_t nb = b - piece_for(b - f);
    if (p.range.compare_exchange_weak(r, pack(f, nb), std::memory_order_relaxed)) {
      *begin = nb;
      *end = b;
      return true;
    }
  }
}

bool PartClaims::claim(int part, int64_t* begin, int64_t* end) {
  ORK_CHECK(part >= 0 && part < n_parts_, "PartClaims: part ", part, " of ", n_parts_);
  if (take_front(parts_[size_t(part)], begin, end)) return true;
  for (int i = 1; i < n_parts_; ++i)
    if (take_back(parts_[size_t((part + i) % n_parts_)], begin, end)) return true;
  return false;
}

}  // namespace ork
