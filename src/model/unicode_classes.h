// The character classes of the pre-tokenizer regexes, as llama.cpp defines them: \p{L} \p{N} \p{M}
// \p{P} \p{S} \p{Z} \p{C} from its Unicode 15.1 tables and \s from its whitespace set (llama.cpp
// src/unicode-data.cpp; generated into unicode_classes_data.cpp by bench/llama_cpp/make_unicode_classes.sh).
// PCRE2's own \p{..} follow the Unicode version PCRE2 was built with (Debian 12's 10.42: Unicode 14)
// and its \s includes U+180E, so the patterns are rewritten into these explicit ranges before they
// are compiled (docs/tokenizer.md). Pure data and functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ork::model::unicode {

// Code points first..last, inclusive. The tables are sorted, disjoint, and hold no surrogate.
struct CodeRange {
  uint32_t first, last;
};

// The classes, by the letter the patterns name them with (W is \s).
enum class CharClass : char {
  kLetter = 'L',
  kNumber = 'N',
  kMark = 'M',
  kPunctuation = 'P',
  kSymbol = 'S',
  kSeparator = 'Z',
  kControl = 'C',
  kWhitespace = 'W',
};

// The ranges of `c`.
std::span<const CodeRange> ranges(CharClass c);

// `pattern` (PCRE2 syntax) with each \p{X} (X one of L N M P S Z C), \s and \S replaced by explicit
// ranges of these tables: outside a bracket class \p{X} and \s become [..] and \S [^..]; inside one,
// their ranges are inserted (\S: the complement's). Other text is kept as it is. Throws ork::Error
// naming the escape for a class it does not know (\p{Lu}, \P{..}, \p without braces).
std::string expand_classes(std::string_view pattern);

// The tables (unicode_classes_data.cpp, generated).
extern const CodeRange kLetter[], kNumber[], kMark[], kPunctuation[], kSymbol[], kSeparator[], kControl[],
    kWhitespace[];
extern const size_t kLetterSize, kNumberSize, kMarkSize, kPunctuationSize, kSymbolSize, kSeparatorSize,
    kControlSize, kWhitespaceSize;

}  // namespace ork::model::unicode
