// The pre-tokenizer's character classes against llama.cpp's, over every code point:
// tests/fixtures/llama_unicode/classes.txt is llama.cpp's unicode_cpt_flags_from_cpt (Unicode 15.1)
// dumped by bench/llama_cpp/make_unicode_classes.sh. Each class is checked through PCRE2 as the
// pre-tokenizer compiles it (unicode::expand_classes, UTF + UCP), in and out of bracket classes.
#include "model/unicode_classes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "build_dirs.h"
#include "core/error.h"
#include "model/tokenizer_pretok.h"
#include "model/tokenizer_unicode.h"

namespace ork::model::unicode {
namespace {

constexpr uint32_t kCodePoints = 0x110000;
bool surrogate(uint32_t cp) { return cp >= 0xD800 && cp <= 0xDFFF; }

// classes.txt as one membership vector per class letter.
std::vector<bool> fixture_class(char letter) {
  const std::string path = ork::testing::source_dir() + "/tests/fixtures/llama_unicode/classes.txt";
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::vector<bool> in_class(kCodePoints, false);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line[0] != letter) continue;
    std::istringstream f(line.substr(1));
    uint32_t a = 0, b = 0;
    f >> std::hex >> a >> b;
    for (uint32_t cp = a; cp <= b && cp < kCodePoints; ++cp) in_class[cp] = true;
  }
  return in_class;
}

struct Regex {
  pcre2_code* code = nullptr;
  pcre2_match_data* md = nullptr;
  explicit Regex(const std::string& pattern) {
    const std::string p = "(?:" + expand_classes(pattern) + ")\\z";
    int err = 0;
    PCRE2_SIZE off = 0;
    code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(p.data()), p.size(), PCRE2_UTF | PCRE2_UCP | PCRE2_ANCHORED,
                         &err, &off, nullptr);
    EXPECT_NE(code, nullptr) << pattern << ": error " << err << " at " << off;
    if (code) pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // as the pre-tokenizer does, where JIT exists
    md = pcre2_match_data_create(1, nullptr);
  }
  ~Regex() {
    pcre2_match_data_free(md);
    pcre2_code_free(code);
  }
  bool matches(uint32_t cp) const {
    std::string s;
    utf8::append(cp, s);
    return pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0, 0, md, nullptr) > 0;
  }
};

// Every code point but the surrogates: `pattern` matches exactly where `want` says.
void expect_every_code_point(const std::string& pattern, const std::vector<bool>& want) {
  const Regex re(pattern);
  ASSERT_NE(re.code, nullptr);
  int64_t wrong = 0;
  for (uint32_t cp = 0; cp < kCodePoints; ++cp) {
    if (surrogate(cp) || re.matches(cp) == want[cp]) continue;
    if (++wrong <= 5) ADD_FAILURE() << pattern << ": U+" << std::hex << cp << (want[cp] ? " is" : " is not")
                                    << " in the class for llama.cpp";
  }
  EXPECT_EQ(wrong, 0) << pattern;
}

class UnicodeClass : public ::testing::TestWithParam<char> {};

TEST_P(UnicodeClass, TablesEqualLlamaCppsFlags) {
  const char letter = GetParam();
  const std::vector<bool> want = fixture_class(letter);
  std::vector<bool> got(kCodePoints, false);
  for (const CodeRange& r : ranges(CharClass(letter)))
    for (uint32_t cp = r.first; cp <= r.last; ++cp) got[cp] = true;
  EXPECT_TRUE(got == want) << letter << ": src/model/unicode_classes_data.cpp differs from the fixture "
                              "(rerun bench/llama_cpp/make_unicode_classes.sh)";
}

TEST_P(UnicodeClass, PcreMatchesLlamaCppOnEveryCodePoint) {
  const char letter = GetParam();
  const std::vector<bool> want = fixture_class(letter);
  std::vector<bool> not_want(want.size());
  for (size_t i = 0; i < want.size(); ++i) not_want[i] = !want[i];
  const std::string esc = letter == 'W' ? "\\s" : std::string("\\p{") + letter + "}";
  const std::string neg = letter == 'W' ? "\\S" : "[^" + esc + "]";
  expect_every_code_point(esc, want);              // outside a bracket class
  expect_every_code_point("[x" + esc + "]", [&] {  // inside one, beside another member
    auto w = want;
    w['x'] = true;
    return w;
  }());
  expect_every_code_point(neg, not_want);  // negated: \S, [^\p{X}]
}

INSTANTIATE_TEST_SUITE_P(Classes, UnicodeClass, ::testing::Values('L', 'N', 'M', 'P', 'S', 'Z', 'C', 'W'),
                         [](const ::testing::TestParamInfo<char>& i) { return std::string(1, i.param); });

// The differences the issue found on real vocabularies between PCRE2 10.42's own tables and llama.cpp.
TEST(UnicodeClasses, KnownDifferencesFromPcre2sOwnTablesFollowLlamaCpp) {
  const Regex space("\\s"), number("\\p{N}");
  EXPECT_FALSE(space.matches(0x180E)) << "U+180E MONGOLIAN VOWEL SEPARATOR is not whitespace to llama.cpp";
  EXPECT_TRUE(space.matches(0x85));
  EXPECT_TRUE(space.matches(0x3000));
  EXPECT_TRUE(number.matches(0x1D2C0)) << "U+1D2C0 KAKTOVIK NUMERAL ZERO (Unicode 15) is \\p{N} in 15.1";
}

TEST(UnicodeClasses, ExpandKeepsOtherSyntaxAndBrackets) {
  EXPECT_EQ(expand_classes("'[sS]|a\\[b\\]|[]x]|[^]y]|\\x{4e00}"), "'[sS]|a\\[b\\]|[]x]|[^]y]|\\x{4e00}");
  EXPECT_EQ(expand_classes("\\s"), "[\\x{9}-\\x{d}\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}-"
                                   "\\x{2029}\\x{202f}\\x{205f}\\x{3000}]");
}

TEST(UnicodeClasses, AnUnknownClassIsAnErrorNamingIt) {
  for (const char* p : {"\\p{Lu}+", "\\P{L}", "\\pL", "\\p{Q}"}) {
    try {
      (void)expand_classes(p);
      ADD_FAILURE() << p << " was accepted";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("is not one ork knows")) << p;
    }
  }
}

// Through the pre-tokenizer: llama.cpp's classes decide the pieces.
TEST(UnicodeClasses, PreTokenizerSplitsByLlamaCppsClasses) {
  const PreTokenizer gpt2("gpt2");
  std::vector<std::string_view> pieces;
  // U+180E is not whitespace (PCRE2 10.42: it is): " ?[^\s\p{L}\p{N}]+" takes it with the space
  // before it, where PCRE2's tables gave a whitespace piece " " and then U+180E.
  gpt2.split("a \xe1\xa0\x8e" "b", pieces);
  EXPECT_THAT(pieces, ::testing::ElementsAre("a", " \xe1\xa0\x8e", "b"));
  pieces.clear();
  // U+1D2C0 (Kaktovik numeral zero, Unicode 15) is a number: " ?\p{N}+" keeps it with the digit
  // before it (to PCRE2 10.42 it is unassigned, a piece of its own).
  gpt2.split("x1\xf0\x9d\x8b\x80", pieces);
  EXPECT_THAT(pieces, ::testing::ElementsAre("x", "1\xf0\x9d\x8b\x80"));
}

}  // namespace
}  // namespace ork::model::unicode
