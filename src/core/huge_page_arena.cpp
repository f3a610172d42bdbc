#include "core/huge_page_arena.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/checked.h"
#include "core/env.h"
#include "core/error.h"

// Under AddressSanitizer what has not been handed out is poisoned, so a read past the last slice is
// reported (slices lie back to back: one past a slice's end reads the next, unreported).
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define ORK_ARENA_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define ORK_ARENA_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define ORK_ARENA_POISON(p, n) ((void)(p), (void)(n))
#define ORK_ARENA_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace ork {

HugePageArena::HugePageArena(size_t capacity) {
  const bool want_huge = env_flag("ORK_HUGE_PAGES", true);  // read first: a malformed value throws
  if (capacity == 0) return;
  ORK_CHECK(capacity <= (size_t(1) << 48), "HugePageArena: ", capacity, " bytes is more than any mapping");
  capacity_ = size_t(align_up(capacity, kHugePageBytes));
  // One huge page more than asked, so a 2 MiB-aligned start fits inside; the unused head and tail
  // are never written, so they take no memory.
  map_bytes_ = capacity_ + kHugePageBytes;
  void* p = ::mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) fail("HugePageArena: cannot map ", map_bytes_, " bytes: ", std::strerror(errno));
  map_ = static_cast<uint8_t*>(p);
  const uintptr_t a = reinterpret_cast<uintptr_t>(map_);
  base_ = map_ + ((kHugePageBytes - a % kHugePageBytes) % kHugePageBytes);
#ifndef MADV_HUGEPAGE
  (void)want_huge;
#else
  advised_ = want_huge && ::madvise(base_, capacity_, MADV_HUGEPAGE) == 0;
#endif
  ORK_ARENA_POISON(base_, capacity_);  // under ASan, what is not handed out is not to be touched
}

HugePageArena::~HugePageArena() {
  if (map_ == nullptr) return;
  ORK_ARENA_UNPOISON(base_, capacity_);
  ::munmap(map_, map_bytes_);
}

uint8_t* HugePageArena::take(size_t bytes) {
  const size_t start = slice_bytes(used_);
  ORK_CHECK(start <= capacity_ && bytes <= capacity_ - start, "HugePageArena: ", bytes, " bytes asked, ",
            capacity_ - std::min(start, capacity_), " left of ", capacity_);
  used_ = start + bytes;
  ORK_ARENA_UNPOISON(base_ + start, bytes);
  return base_ + start;
}

}  // namespace ork
