#include "model/tokenizer_unicode.h"

#include <array>

namespace ork::model::utf8 {

size_t len_from_lead(uint8_t lead) {
  static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLen[lead >> 4];
}

size_t valid_len(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  const auto cont = [&](size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  const uint8_t c = b(0);
  if (c < 0x80) return 1;
  if (c < 0xC2) return 0;  // continuation byte, or overlong 2-byte lead (C0, C1)
  if (c < 0xE0) return cont(1) ? 2 : 0;
  if (c < 0xF0) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // surrogates U+D800-DFFF
    return 3;
  }
  if (c < 0xF5) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

std::string sanitize(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const size_t n = valid_len(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  return out;
}

void append(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace ork::model::utf8

namespace ork::model::byte_unicode {
namespace {

struct Table {
  std::array<uint32_t, 256> cp{};
  std::array<std::string, 256> text;
  std::array<int16_t, 512> byte_of_cp{};  // every mapped code point is < 512

  Table() {
    const auto kept = [](int b) {
      return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) cp[b] = kept(b) ? static_cast<uint32_t>(b) : next++;
    byte_of_cp.fill(-1);
    for (int b = 0; b < 256; ++b) {
      utf8::append(cp[b], text[b]);
      byte_of_cp[cp[b]] = static_cast<int16_t>(b);
    }
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

uint32_t code_point(uint8_t byte) { return table().cp[byte]; }

std::string_view text(uint8_t byte) { return table().text[byte]; }

int byte_of(uint32_t cp) { return cp < 512 ? table().byte_of_cp[cp] : -1; }

void encode(std::string_view bytes, std::string& out) {
  const Table& t = table();
  for (char c : bytes) out += t.text[static_cast<uint8_t>(c)];
}

std::string decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const size_t n = utf8::valid_len(s, i);
    if (n == 0) {  // not UTF-8: copy the byte
      out += s[i++];
      continue;
    }
    uint32_t cp = 0;
    const auto* p = reinterpret_cast<const uint8_t*>(s.data() + i);
    switch (n) {
      case 1: cp = p[0]; break;
      case 2: cp = ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu); break;
      case 3: cp = ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu); break;
      default:
        cp = ((p[0] & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu);
    }
    const int b = byte_of(cp);
    if (b >= 0) {
      out += static_cast<char>(b);
    } else {
      out.append(s.data() + i, n);
    }
    i += n;
  }
  return out;
}

}  // namespace ork::model::byte_unicode
