// UTF-8 validation shared by the error quoting (core/quote.h) and the JSON writer (core/json.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ork {

// Length (1..4) of the valid UTF-8 sequence at the start of s, 0 when s is empty or does not start
// with one (a stray continuation byte, an overlong form, a surrogate, a code point past U+10FFFF, a
// truncated sequence). O(1).
inline size_t utf8_valid_prefix(std::string_view s) {
  if (s.empty()) return 0;
  const auto b = [&](size_t i) { return uint8_t(s[i]); };
  const uint8_t c = b(0);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, cp = c & 0x07;
  } else {
    return 0;  // a continuation byte, C0/C1 (overlong 2-byte), or F5..FF
  }
  if (s.size() < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i) & 0x3F);
  }
  if (n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return 0;
  if (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return 0;
  return n;
}

}  // namespace ork
