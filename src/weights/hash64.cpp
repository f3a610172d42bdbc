#include "weights/hash64.h"

#include <cstring>

namespace ork::weights {
namespace {

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kP3 = 0x165667B19E3779F9ull;
constexpr uint64_t kP4 = 0x85EBCA77C2B2AE63ull;
constexpr uint64_t kP5 = 0x27D4EB2F165667C5ull;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

inline uint64_t round(uint64_t acc, uint64_t w) { return rotl(acc + w * kP2, 31) * kP1; }
inline uint64_t merge(uint64_t h, uint64_t v) { return (h ^ round(0, v)) * kP1 + kP4; }

}  // namespace

uint64_t hash64(const void* data, size_t size, uint64_t seed) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  const uint8_t* const end = p + size;
  uint64_t h;
  if (size >= 32) {
    uint64_t v0 = seed + kP1 + kP2, v1 = seed + kP2, v2 = seed, v3 = seed - kP1;
    const uint8_t* const limit = end - 32;
    do {
      v0 = round(v0, load64(p));
      v1 = round(v1, load64(p + 8));
      v2 = round(v2, load64(p + 16));
      v3 = round(v3, load64(p + 24));
      p += 32;
    } while (p <= limit);
    h = rotl(v0, 1) + rotl(v1, 7) + rotl(v2, 12) + rotl(v3, 18);
    h = merge(h, v0);
    h = merge(h, v1);
    h = merge(h, v2);
    h = merge(h, v3);
  } else {
    h = seed + kP5;
  }
  h += uint64_t(size);
  for (; p + 8 <= end; p += 8) h = rotl(h ^ round(0, load64(p)), 27) * kP1 + kP4;
  for (; p < end; ++p) h = rotl(h ^ (uint64_t(*p) * kP5), 11) * kP1;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

}  // namespace ork::weights
