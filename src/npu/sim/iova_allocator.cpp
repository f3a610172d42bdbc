#include "npu/sim/iova_allocator.h"

#include <algorithm>
#include <bit>

#include "core/error.h"

namespace ork::npu::sim {

namespace {
constexpr uint64_t kAnchorPfn = ~uint64_t(0);  // the sentinel node above every range
}

IovaAllocator::IovaAllocator(uint64_t window_bytes) {
  ORK_CHECK(window_bytes % kPageBytes == 0 && window_bytes >= 2 * kPageBytes &&
                window_bytes <= (uint64_t(1) << 32),
            "IOVA window of ", window_bytes,
            " bytes: must be a multiple of 4096 in [8192, 4294967296]");
  end_pfn_ = window_bytes / kPageBytes;
  cached_ = ranges_.end();
  max_alloc_pages_ = end_pfn_;
}

uint64_t IovaAllocator::reserved_pages(uint64_t bytes) {
  const uint64_t pages = bytes / kPageBytes + (bytes % kPageBytes != 0);
  if (pages < kRoundUpBelowPages) return std::bit_ceil(pages);
  return pages;
}

std::optional<uint64_t> IovaAllocator::alloc(uint64_t bytes, bool size_aligned) {
  if (bytes == 0) return std::nullopt;
  const uint64_t size = reserved_pages(bytes);
  if (size >= max_alloc_pages_) return std::nullopt;
  // Aligned to the size rounded up to a power of two: mask off the low fls(size - 1) bits.
  const uint64_t align_mask = size_aligned ? ~uint64_t(0) << std::bit_width(size - 1) : ~uint64_t(0);
  const auto lo_of = [&](Ranges::iterator it) { return it == ranges_.end() ? kAnchorPfn : it->first; };
  const auto hi_of = [&](Ranges::iterator it) { return it == ranges_.end() ? kAnchorPfn : it->second; };

  uint64_t high = end_pfn_;
  uint64_t low = start_pfn_;
  Ranges::iterator curr = cached_;
  const uint64_t retry_pfn = hi_of(curr) == kAnchorPfn ? kAnchorPfn : hi_of(curr) + 1;
  uint64_t new_pfn = 0;
  for (;;) {
    // Walk down from `curr`: try the gap just below each node until the candidate clears the next
    // lower node (or drops below `low`).
    for (;;) {
      high = std::min(high, lo_of(curr));
      new_pfn = (high - size) & align_mask;  // wraps when high < size; caught below
      if (curr == ranges_.begin()) break;
      --curr;
      if (!(new_pfn <= curr->second && new_pfn >= low)) break;
    }
    if (high >= size && new_pfn >= low) break;
    if (low == start_pfn_ && retry_pfn < end_pfn_) {  // once more, from the top down to retry_pfn
      high = end_pfn_;
      low = retry_pfn;
      curr = ranges_.end();
      continue;
    }
    max_alloc_pages_ = size;
    return std::nullopt;
  }
  cached_ = ranges_.emplace(new_pfn, new_pfn + size - 1).first;
  used_pages_ += size;
  return new_pfn * kPageBytes;
}

void IovaAllocator::free(uint64_t iova) {
  const auto it = iova % kPageBytes == 0 ? ranges_.find(iova / kPageBytes) : ranges_.end();
  ORK_CHECK(it != ranges_.end(), "IOVA free of 0x", std::hex, iova, ": no range starts there");
  if (it == cached_ || (cached_ != ranges_.end() && it->first >= cached_->first)) cached_ = std::next(it);
  max_alloc_pages_ = end_pfn_;
  used_pages_ -= it->second - it->first + 1;
  ranges_.erase(it);
}

uint64_t IovaAllocator::range_bytes(uint64_t iova) const {
  if (iova % kPageBytes != 0) return 0;
  const auto it = ranges_.find(iova / kPageBytes);
  return it == ranges_.end() ? 0 : (it->second - it->first + 1) * kPageBytes;
}

}  // namespace ork::npu::sim
