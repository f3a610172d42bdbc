// SentencePiece ("llama") tokenizer: expected ids worked out by hand from the merge rules.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/error.h"
#include "model/tokenizer.h"
#include "tokenizer_test_vocabs.h"

namespace ork::model {
namespace {

using testing::spm_byte;
using testing::spm_vocab;
using Ids = std::vector<int32_t>;

constexpr int32_t kFirst = 259;  // first normal piece in spm_vocab(..., true)

TEST(TokenizerSpm, HigherScoreMergesFirst) {
  // "abc": bigrams "ab" and "bc"; the higher score wins, the other pair is then gone.
  {
    Vocab v = spm_vocab({{"a", -1}, {"b", -1}, {"c", -1}, {"ab", -5}, {"bc", -2}});
    v.add_space_prefix = false;
    Tokenizer t(v);
    EXPECT_EQ(t.encode("abc", false, false), (Ids{kFirst + 0, kFirst + 4}));  // a, bc
  }
  {
    Vocab v = spm_vocab({{"a", -1}, {"b", -1}, {"c", -1}, {"ab", -2}, {"bc", -5}});
    v.add_space_prefix = false;
    Tokenizer t(v);
    EXPECT_EQ(t.encode("abc", false, false), (Ids{kFirst + 3, kFirst + 2}));  // ab, c
  }
}

TEST(TokenizerSpm, MergedPairsKeepMerging) {
  // bc (-1) first, then a+bc → "abc" (-10) although its score is the lowest: it is the only pair.
  Vocab v = spm_vocab({{"a", -1}, {"b", -1}, {"c", -1}, {"ab", -5}, {"bc", -1}, {"abc", -10}});
  v.add_space_prefix = false;
  Tokenizer t(v);
  EXPECT_EQ(t.encode("abc", false, false), (Ids{kFirst + 5}));
}

TEST(TokenizerSpm, EqualScoresMergeLeftmostFirst) {
  Vocab v = spm_vocab({{"a", -1}, {"aa", -2}});
  v.add_space_prefix = false;
  Tokenizer t(v);
  EXPECT_EQ(t.encode("aaa", false, false), (Ids{kFirst + 1, kFirst + 0}));  // aa, a
  EXPECT_EQ(t.encode("aaaa", false, false), (Ids{kFirst + 1, kFirst + 1}));
  EXPECT_EQ(t.encode("aaaaa", false, false), (Ids{kFirst + 1, kFirst + 1, kFirst + 0}));
}

TEST(TokenizerSpm, SpacePrefixAndEscape) {
  Tokenizer t(spm_vocab({{"\xE2\x96\x81", -1},          // ▁       259
                         {"a", -1},                      // a       260
                         {"b", -1},                      // b       261
                         {"\xE2\x96\x81" "a", -2},       // ▁a      262
                         {"\xE2\x96\x81" "b", -3}}));    // ▁b      263
  EXPECT_EQ(t.encode("a b", false, false), (Ids{262, 263}));
  EXPECT_EQ(t.encode("a b", true, false), (Ids{1, 262, 263}));
  // Two spaces: "▁a▁▁b" → ▁a ▁ ▁b (leftmost "▁▁" is not a token).
  EXPECT_EQ(t.encode("a  b", false, false), (Ids{262, 259, 263}));
  EXPECT_EQ(t.decode({1, 262, 259, 263}), "a  b");
  Vocab nv = t.vocab();
  nv.add_space_prefix = false;
  Tokenizer t2(nv);
  EXPECT_EQ(t2.encode("a b", false, false), (Ids{260, 263}));
  EXPECT_EQ(t2.decode({260, 263}), "a b");
}

TEST(TokenizerSpm, ByteFallbackForUnknownCharacters) {
  Tokenizer t(spm_vocab({{"\xE2\x96\x81", -1}, {"x", -1}}));
  // "é" = C3 A9 is not a piece → its two byte tokens.
  EXPECT_EQ(t.encode("\xC3\xA9", false, false), (Ids{259, spm_byte(0xC3), spm_byte(0xA9)}));
  // Emoji: 4 bytes.
  EXPECT_EQ(t.encode("x\xF0\x9F\x98\x80", false, false),
            (Ids{259, 260, spm_byte(0xF0), spm_byte(0x9F), spm_byte(0x98), spm_byte(0x80)}));
  EXPECT_EQ(t.decode(t.encode("x\xF0\x9F\x98\x80", true, false)), "x\xF0\x9F\x98\x80");
}

TEST(TokenizerSpm, MultiByteCharactersAreSymbols) {
  // CJK: "你" is a piece, "好" is not; "你好" merges only if the vocabulary has it.
  Tokenizer t(spm_vocab({{"\xE4\xBD\xA0", -1},                   // 你     259
                         {"\xF0\x9F\x98\x80", -1},               // 😀     260
                         {"\xE4\xBD\xA0\xE5\xA5\xBD", -1}}));    // 你好   261
  Vocab v = t.vocab();
  v.add_space_prefix = false;
  Tokenizer t2(v);
  EXPECT_EQ(t2.encode("\xE4\xBD\xA0\xE5\xA5\xBD", false, false), (Ids{261}));
  EXPECT_EQ(t2.encode("\xE5\xA5\xBD\xE4\xBD\xA0", false, false),
            (Ids{spm_byte(0xE5), spm_byte(0xA5), spm_byte(0xBD), 259}));
  EXPECT_EQ(t2.encode("\xF0\x9F\x98\x80\xF0\x9F\x98\x80", false, false), (Ids{260, 260}));
}

TEST(TokenizerSpm, UnknownTokenWithoutByteTokens) {
  Vocab v = spm_vocab({{"a", -1}}, /*with_bytes=*/false);
  v.add_space_prefix = false;
  Tokenizer t(v);
  // ids: 0 <unk> 1 <s> 2 </s> 3 a. One <unk> per unknown character.
  EXPECT_EQ(t.encode("a\xC3\xA9" "a", false, false), (Ids{3, 0, 3}));
  EXPECT_EQ(t.decode({3, 0, 3}), "aa");
  EXPECT_EQ(t.decode({3, 0, 3}, true), "a<unk>a");
}

TEST(TokenizerSpm, BosHandling) {
  Tokenizer t(spm_vocab({{"a", -1}}));
  EXPECT_EQ(t.encode("", true, false), (Ids{1}));
  EXPECT_EQ(t.encode("", false, false), (Ids{}));
  EXPECT_EQ(t.encode("", true, false, true), (Ids{1, 2}));
  EXPECT_TRUE(t.vocab().add_bos);
  EXPECT_EQ(t.bos(), 1);
  EXPECT_EQ(t.eos(), 2);
  EXPECT_TRUE(t.is_eog(2));
  EXPECT_FALSE(t.is_eog(1));
  EXPECT_FALSE(t.is_eog(-1));
  EXPECT_FALSE(t.is_eog(100000));
}

TEST(TokenizerSpm, SpecialTokensParsedOnlyWhenAsked) {
  Tokenizer t(spm_vocab({{"\xE2\x96\x81", -1}, {"a", -1}, {"\xE2\x96\x81" "a", -2}}));
  // With parse_special "</s>" is one id, and the text after it gets the space prefix again.
  EXPECT_EQ(t.encode("a</s>a", false, true), (Ids{261, 2, 261}));
  // Without, its characters are encoded as text (bytes here).
  EXPECT_EQ(t.encode("a</s>", false, false),
            (Ids{261, spm_byte('<'), spm_byte('/'), spm_byte('s'), spm_byte('>')}));
  EXPECT_EQ(t.decode({261, 2}), "a");
  EXPECT_EQ(t.decode({261, 2}, true), "a</s>");
  EXPECT_EQ(t.decode_token(2), "");
  EXPECT_EQ(t.decode_token(2, true), "</s>");
  EXPECT_EQ(t.decode_token(261), " a");
  EXPECT_EQ(t.decode_token(spm_byte(0x41)), "A");
  EXPECT_THROW(t.decode_token(-1), Error);
  EXPECT_THROW(t.decode_token(t.n_vocab()), Error);
}

TEST(TokenizerSpm, RoundTripIncludingInvalidUtf8) {
  Tokenizer t(spm_vocab({{"\xE2\x96\x81", -1}, {"e", -1}, {"h", -1}, {"l", -1}, {"o", -1},
                         {"he", -2}, {"ll", -2}, {"\xE2\x96\x81" "he", -3}, {"llo", -3}}));
  const std::vector<std::string> texts = {
      "hello", " hello", "hello ", "  two  spaces  ", "line\nbreak\r\n", "tab\there",
      "caf\xC3\xA9", "\xE4\xBD\xA0\xE5\xA5\xBD", "\xF0\x9F\x98\x80 emoji", "",
      // Invalid UTF-8: SPM keeps the raw bytes (byte tokens), so they round-trip exactly.
      "\xFF", "a\x80z", "\xE4\xBD", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80"};
  for (const std::string& s : texts) {
    EXPECT_EQ(t.decode(t.encode(s, true, false)), s) << s;
    EXPECT_EQ(t.decode(t.encode(s, false, false)), s) << s;
  }
  // "▁he" merges at the start of "hello".
  EXPECT_EQ(t.encode("hello", false, false), (Ids{266, 267}));
}

TEST(TokenizerSpm, ValidationNamesTheKey) {
  const auto message = [](Vocab v) {
    try {
      Tokenizer t(std::move(v));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  Vocab ok = spm_vocab({{"a", -1}});
  {
    Vocab v = ok;
    v.tokens.clear();
    v.scores.clear();
    v.types.clear();
    EXPECT_NE(message(v).find("tokenizer.ggml.tokens"), std::string::npos);
  }
  {
    Vocab v = ok;
    v.scores.pop_back();
    EXPECT_NE(message(v).find("tokenizer.ggml.scores"), std::string::npos);
  }
  {
    Vocab v = ok;
    v.types.push_back(1);
    EXPECT_NE(message(v).find("tokenizer.ggml.token_type"), std::string::npos);
  }
  {
    Vocab v = ok;
    v.bos = static_cast<int32_t>(v.tokens.size());
    EXPECT_NE(message(v).find("tokenizer.ggml.bos_token_id"), std::string::npos);
  }
  {
    Vocab v = ok;
    v.eos = -7;
    EXPECT_NE(message(v).find("tokenizer.ggml.eos_token_id"), std::string::npos);
  }
  {
    Vocab v = ok;
    v.bos = -1;
    EXPECT_NE(message(v).find("tokenizer.ggml.add_bos_token"), std::string::npos);
  }
  {
    Vocab v = ok;
    v.tokens.back() = "a";
    v.tokens.push_back("a");
    v.scores.push_back(0);
    v.types.push_back(1);
    EXPECT_NE(message(v).find("duplicate"), std::string::npos);
  }
  {
    Vocab v = ok;
    v.model = "bert";
    EXPECT_NE(message(v).find("tokenizer.ggml.model"), std::string::npos);
  }
  EXPECT_EQ(message(ok), "");
}

TEST(TokenizerSpm, ConcurrentEncodeIsSafe) {
  Tokenizer t(spm_vocab({{"\xE2\x96\x81", -1}, {"a", -1}, {"\xE2\x96\x81" "a", -2}}));
  const Ids expect = t.encode("a a a a", true, false);
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int k = 0; k < 200; ++k) {
        if (t.encode("a a a a", true, false) != expect) bad++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace ork::model
