// HugePageArena — one anonymous read-write mapping, 2 MiB-aligned and advised MADV_HUGEPAGE, handed
// out front to back in 64-byte-aligned slices. For data a process streams through again and again
// (the CPU decode's weight panels, read once a token): with transparent huge pages (Linux in its
// "madvise" or "always" mode) a walk through it takes a TLB miss per 2 MiB instead of per 4 KiB. On
// the AVX-512 development VM the 24-layer decode matmuls ran × 1.03–1.05 (medians of 24 in-process
// pairs) with their panels in such an arena against the same panels in 4 KiB pages (docs/ops.md,
// "seventh session"). Where the kernel has no transparent huge pages the arena is ordinary memory.
// The first write to each 2 MiB may make the kernel compact memory to find a huge page (its
// transparent_hugepage/defrag setting): a one-time cost at load, for memory then read for hours.
//
// Ownership: owns the mapping and unmaps it on destruction; slices stay valid until then. Not
// copyable or movable. Thread-safety: take() is not thread-safe; the slices may be read and written
// from any thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ork {

class HugePageArena {
 public:
  static constexpr size_t kHugePageBytes = size_t(2) << 20;
  static constexpr size_t kSliceAlign = 64;

  // Maps `capacity` bytes (rounded up to whole 2 MiB pages; 0 maps nothing). Throws ork::Error when
  // the mapping fails. Pages are allocated when first written, as with any anonymous memory.
  explicit HugePageArena(size_t capacity);
  ~HugePageArena();
  HugePageArena(const HugePageArena&) = delete;
  HugePageArena& operator=(const HugePageArena&) = delete;

  // The next `bytes` bytes, 64-byte aligned, zero until written. Throws ork::Error when fewer than
  // that are left.
  uint8_t* take(size_t bytes);
  // What a slice of `bytes` takes of the capacity, its alignment padding included: an arena of the
  // sum of these over its slices holds them all.
  static constexpr size_t slice_bytes(size_t bytes) { return (bytes + kSliceAlign - 1) / kSliceAlign * kSliceAlign; }

  size_t capacity() const { return capacity_; }  // bytes mapped (a multiple of kHugePageBytes)
  size_t used() const { return used_; }          // bytes handed out, with the alignment padding
  const uint8_t* data() const { return base_; }
  // Whether madvise(MADV_HUGEPAGE) accepted the mapping (false: no transparent huge pages in this
  // kernel, not Linux, or ORK_HUGE_PAGES=0 in the environment, which asks for none). Whether the
  // kernel then backs it with huge pages is its choice.
  bool advised() const { return advised_; }

 private:
  uint8_t* base_ = nullptr;   // 2 MiB-aligned start of what is handed out
  uint8_t* map_ = nullptr;    // the mapping as mmap returned it
  size_t map_bytes_ = 0;
  size_t capacity_ = 0, used_ = 0;
  bool advised_ = false;
};

}  // namespace ork
