// IovaAllocator — one IOMMU domain's NPU address space, allocated the way the rknpu driver allocates
// it: through Linux's IOVA allocator (drivers/iommu/iova.c, alloc_iova_fast(..., size_aligned=true),
// called from rknpu_iommu_dma_alloc_iova). The model, as docs/hardware.md derives it:
//   - addresses are in 4 KiB pages; page 0 is never handed out (start_pfn = 1);
//   - a request is page-rounded, and below 32 pages rounded up to a power of two (kernels < 6.1);
//   - a range of n pages starts at a multiple of n rounded up to a power of two ("size aligned");
//   - the search runs top-down from the domain limit, below the node cached by the last allocation,
//     then once more from the top (iova.c's retry), and a failed size fails fast until a free;
//   - freed ranges return to the tree at once (the per-CPU range caches are not modelled).
// Consequence (the measured wall): 64 MiB buffers in a 4 GiB window fit 63 times, not 64.
//
// Not thread-safe: SimKernel serializes access.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace ork::npu::sim {

class IovaAllocator {
 public:
  static constexpr uint64_t kPageBytes = 4096;
  // Requests below this many pages are rounded up to a power of two (IOVA_RANGE_CACHE_MAX_SIZE - 1).
  static constexpr uint64_t kRoundUpBelowPages = 32;

  // window_bytes: the domain's address limit (the NPU reaches [0, window_bytes)); a multiple of the
  // page size in [2 pages, 4 GiB]. Throws ork::Error otherwise.
  explicit IovaAllocator(uint64_t window_bytes);

  // Reserves IOVA for `bytes` (> 0). size_aligned = false models IOMMU_LIMIT_IOVA_ALIGNMENT (no
  // alignment beyond a page). Returns the start address, or nullopt when no suitable hole exists.
  std::optional<uint64_t> alloc(uint64_t bytes, bool size_aligned = true);

  // Returns the range that starts at `iova` (an address alloc returned). Throws ork::Error when no
  // range starts there.
  void free(uint64_t iova);

  // Pages reserved for a request of `bytes`: page-rounded, small requests rounded to a power of two.
  static uint64_t reserved_pages(uint64_t bytes);

  uint64_t window_bytes() const { return end_pfn_ * kPageBytes; }
  uint64_t used_bytes() const { return used_pages_ * kPageBytes; }  // reserved IOVA, with rounding
  size_t live_ranges() const { return ranges_.size(); }
  // Bytes reserved for the live range starting at `iova`, or 0 when none starts there.
  uint64_t range_bytes(uint64_t iova) const;

 private:
  using Ranges = std::map<uint64_t, uint64_t>;  // pfn_lo -> pfn_hi (inclusive)

  uint64_t end_pfn_;               // exclusive limit (the window in pages)
  uint64_t start_pfn_ = 1;         // page 0 is reserved
  Ranges ranges_;
  Ranges::iterator cached_;        // iova.c's cached32_node; end() is the anchor above the window
  uint64_t max_alloc_pages_;       // iova.c's max32_alloc_size: sizes >= this fail fast until a free
  uint64_t used_pages_ = 0;
};

}  // namespace ork::npu::sim
