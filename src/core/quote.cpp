#include "core/quote.h"

#include <cstdint>
#include <cstdio>

#include "core/utf8.h"

namespace ork {
namespace {

void hex_byte(std::string& out, uint8_t c) {
  char buf[5];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  out += buf;
}

// Appends s escaped. quoting (quote()) also escapes the backslash and the single quote, so that the
// quoted text reads back unambiguously; one_line() keeps both (its input may hold quoted names,
// whose escapes must not be escaped twice).
void escape_into(std::string& out, std::string_view s, bool quoting) {
  size_t i = 0;
  while (i < s.size()) {
    const uint8_t c = uint8_t(s[i]);
    if (c >= 0x80) {
      const size_t n = utf8_valid_prefix(s.substr(i));
      // U+0080..U+009F (C2 80..C2 9F) are the C1 controls: CSI (U+009B) starts a terminal escape.
      if (n == 0 || (n == 2 && c == 0xC2 && uint8_t(s[i + 1]) < 0xA0)) {
        hex_byte(out, c);
        ++i;
      } else {
        out.append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\\':
      case '\'':
        if (quoting) out += '\\';
        out += char(c);
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          hex_byte(out, c);
        } else {
          out += char(c);
        }
    }
    ++i;
  }
}

// The longest prefix of s of at most max bytes that does not end inside a valid UTF-8 sequence.
std::string_view capped(std::string_view s, size_t max) {
  if (s.size() <= max) return s;
  size_t i = 0;
  while (i < max) {
    const size_t n = utf8_valid_prefix(s.substr(i));
    const size_t step = n == 0 ? 1 : n;
    if (i + step > max) break;
    i += step;
  }
  return s.substr(0, i);
}

}  // namespace

std::string quote(std::string_view s, size_t max_bytes) {
  const std::string_view shown = capped(s, max_bytes);
  std::string out = "'";
  escape_into(out, shown, true);
  if (shown.size() < s.size()) {
    out += "...' (";
    out += std::to_string(s.size());
    out += " bytes)";
  } else {
    out += '\'';
  }
  return out;
}

std::string one_line(std::string_view s, size_t max_bytes) {
  const std::string_view shown = capped(s, max_bytes);
  std::string out;
  escape_into(out, shown, false);
  if (shown.size() < s.size()) {
    out += "... (";
    out += std::to_string(s.size());
    out += " bytes)";
  }
  return out;
}

}  // namespace ork
