// Overflow-checked arithmetic on sizes read from untrusted input (files, device replies).
#pragma once

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace ork {

// a + b, or ork::Error naming `what` when the sum overflows uint64_t.
inline uint64_t checked_add(uint64_t a, uint64_t b, const char* what) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail(what, ": size overflows (", a, " + ", b, ")");
  return r;
}

// a * b, or ork::Error naming `what` when the product overflows uint64_t.
inline uint64_t checked_mul(uint64_t a, uint64_t b, const char* what) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail(what, ": size overflows (", a, " * ", b, ")");
  return r;
}

// Rounds `v` up to a multiple of `align` (a power of two).
constexpr uint64_t align_up(uint64_t v, uint64_t align) { return (v + align - 1) & ~(align - 1); }

constexpr bool is_pow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// v.reserve(n), or ork::Error naming `what`, the count and the bytes when the machine cannot
// allocate them (std::bad_alloc, or a count past the vector's max_size): for sizes that a file
// decides, where a bare "out of memory" would not say which field asked for how much.
template <typename T>
void reserve_or_fail(std::vector<T>& v, uint64_t n, std::string_view what) {
  try {
    if (n > v.max_size()) throw std::length_error("too many");
    v.reserve(size_t(n));
  } catch (const std::bad_alloc&) {
    fail(what, ": cannot allocate ", n, " elements (", n, " x ", sizeof(T), " bytes)");
  } catch (const std::length_error&) {
    fail(what, ": cannot allocate ", n, " elements (", n, " x ", sizeof(T), " bytes)");
  }
}

}  // namespace ork
