#include "model/unicode_classes.h"

#include <cstdio>
#include <vector>

#include "core/error.h"
#include "core/quote.h"

namespace ork::model::unicode {
namespace {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

void append_range(uint32_t a, uint32_t b, std::string& out) {
  char buf[32];
  if (a == b) {
    std::snprintf(buf, sizeof buf, "\\x{%x}", unsigned(a));
  } else {
    std::snprintf(buf, sizeof buf, "\\x{%x}-\\x{%x}", unsigned(a), unsigned(b));
  }
  out += buf;
}

// The ranges of `c` (or of its complement, surrogates left out) as class items, without brackets.
std::string items(CharClass c, bool complement) {
  std::string out;
  const auto r = ranges(c);
  if (!complement) {
    for (const CodeRange& x : r) append_range(x.first, x.last, out);
    return out;
  }
  // Complement over U+0000..U+10FFFF minus the surrogates U+D800..U+DFFF.
  auto add = [&](uint32_t a, uint32_t b) {  // a..b, inclusive, with the surrogates cut out
    if (a > b) return;
    if (b < 0xD800 || a > 0xDFFF) return append_range(a, b, out);
    if (a < 0xD800) append_range(a, 0xD7FF, out);
    if (b > 0xDFFF) append_range(0xE000, b, out);
  };
  uint32_t next = 0;
  for (const CodeRange& x : r) {
    if (x.first > next) add(next, x.first - 1);
    next = x.last + 1;
  }
  if (next <= kMaxCodePoint) add(next, kMaxCodePoint);
  return out;
}

bool class_of(char letter, CharClass& c) {
  switch (letter) {
    case 'L': case 'N': case 'M': case 'P': case 'S': case 'Z': case 'C':
      c = CharClass(letter);
      return true;
    default:
      return false;
  }
}

}  // namespace

std::span<const CodeRange> ranges(CharClass c) {
  switch (c) {
    case CharClass::kLetter: return {kLetter, kLetterSize};
    case CharClass::kNumber: return {kNumber, kNumberSize};
    case CharClass::kMark: return {kMark, kMarkSize};
    case CharClass::kPunctuation: return {kPunctuation, kPunctuationSize};
    case CharClass::kSymbol: return {kSymbol, kSymbolSize};
    case CharClass::kSeparator: return {kSeparator, kSeparatorSize};
    case CharClass::kControl: return {kControl, kControlSize};
    case CharClass::kWhitespace: return {kWhitespace, kWhitespaceSize};
  }
  fail("unicode: no character class ", int(c));
}

std::string expand_classes(std::string_view p) {
  std::string out;
  out.reserve(p.size());
  bool in_class = false;  // inside [...]
  for (size_t i = 0; i < p.size(); ++i) {
    const char ch = p[i];
    if (ch == '\\' && i + 1 < p.size()) {
      const char e = p[i + 1];
      CharClass c{};
      bool complement = false;
      if (e == 'p' || e == 'P') {
        const bool known = e == 'p' && i + 4 < p.size() && p[i + 2] == '{' && p[i + 4] == '}' &&
                           class_of(p[i + 3], c);
        if (!known) {
          const size_t end = p.find('}', i);
          fail("pre-tokenizer regex: character class ",
               quote(p.substr(i, end == std::string_view::npos ? 2 : end - i + 1)),
               " is not one ork knows (\\p{L} \\p{N} \\p{M} \\p{P} \\p{S} \\p{Z} \\p{C} \\s \\S)");
        }
        i += 4;
      } else if (e == 's' || e == 'S') {
        c = CharClass::kWhitespace;
        complement = e == 'S';
        i += 1;
      } else {  // any other escape: kept, and its character never opens or closes a class
        out += ch;
        out += e;
        ++i;
        continue;
      }
      if (in_class) {
        out += items(c, complement);
      } else {
        out += complement ? "[^" : "[";
        out += items(c, false);
        out += ']';
      }
      continue;
    }
    out += ch;
    if (!in_class && ch == '[') {
      in_class = true;
      // A ']' right after '[' or '[^' is a literal member.
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
    } else if (in_class && ch == ']') {
      in_class = false;
    }
  }
  return out;
}

}  // namespace ork::model::unicode
