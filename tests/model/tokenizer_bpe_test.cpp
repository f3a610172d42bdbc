// Byte-level BPE ("gpt2") tokenizer: expected ids worked out by hand from the merge ranks.
// In these vocabularies id b (0..255) is byte b, and merge i produces id 256 + i.
#include <gtest/gtest.h>

#include "core/error.h"
#include "model/tokenizer.h"
#include "tokenizer_test_vocabs.h"

namespace ork::model {
namespace {

using testing::bpe_vocab;
using Ids = std::vector<int32_t>;

Ids bytes_of(std::string_view s) {
  Ids ids;
  for (char c : s) ids.push_back(static_cast<uint8_t>(c));
  return ids;
}

TEST(TokenizerBpe, Gpt2StyleVocabularyFromScratch) {
  // 256 byte tokens and 8 merges; "Ġ" is the mapped space.
  const std::vector<std::string> merges = {
      "H e",          // 256 He
      "l l",          // 257 ll
      "\xC4\xA0 w",   // 258 Ġw
      "o r",          // 259 or
      "He ll",        // 260 Hell
      "Hell o",       // 261 Hello
      "\xC4\xA0w or", // 262 Ġwor
      "l d",          // 263 ld
  };
  for (const char* pre : {"llama-bpe", "gpt2", "qwen2", ""}) {
    Tokenizer t(bpe_vocab(pre, merges));
    // "Hello": He(0) → ll(1) → He+ll(4) → Hell+o(5).
    // " world": Ġw(2) → or(3) → Ġw+or(6) → ld(7) → [Ġwor, ld]. "!" stays a byte.
    EXPECT_EQ(t.encode("Hello world!", false, false), (Ids{261, 262, 263, '!'})) << pre;
    EXPECT_EQ(t.decode({261, 262, 263, '!'}), "Hello world!");
    EXPECT_EQ(t.decode_token(262), " wor");
    // "Hellold": "Hell" "o" then "ld" — merges do not cross: He, ll, Hell, Hello, then l d.
    EXPECT_EQ(t.encode("Hellold", false, false), (Ids{261, 263})) << pre;
  }
}

TEST(TokenizerBpe, LowerRankMergesFirst) {
  {
    Tokenizer t(bpe_vocab("gpt2", {"b c", "a b"}));  // 256 bc, 257 ab
    EXPECT_EQ(t.encode("abc", false, false), (Ids{'a', 256}));
  }
  {
    Tokenizer t(bpe_vocab("gpt2", {"a b", "b c"}));  // 256 ab, 257 bc
    EXPECT_EQ(t.encode("abc", false, false), (Ids{256, 'c'}));
  }
}

TEST(TokenizerBpe, SamePairMergesLeftmostFirst) {
  Tokenizer t(bpe_vocab("gpt2", {"a a"}));  // 256 aa
  EXPECT_EQ(t.encode("aaa", false, false), (Ids{256, 'a'}));
  EXPECT_EQ(t.encode("aaaaa", false, false), (Ids{256, 256, 'a'}));
}

TEST(TokenizerBpe, Llama3IgnoresMergesForWholeWordTokens) {
  const std::vector<std::pair<std::string, TokenType>> extra = {{"abc", TokenType::kNormal}};
  Tokenizer llama3(bpe_vocab("llama-bpe", {}, extra));  // 256 abc, no merges
  EXPECT_EQ(llama3.encode("abc", false, false), (Ids{256}));
  Tokenizer qwen2(bpe_vocab("qwen2", {}, extra));
  EXPECT_EQ(qwen2.encode("abc", false, false), (Ids{'a', 'b', 'c'}));
}

TEST(TokenizerBpe, DigitsGroupedPerPreTokenizer) {
  // 256 "34", 257 "12", 258 "123", 259 "45".
  const std::vector<std::string> merges = {"3 4", "1 2", "12 3", "4 5"};
  // llama3: \p{N}{1,3} → "123" "45" → [123, 45].
  EXPECT_EQ(Tokenizer(bpe_vocab("llama3", merges)).encode("12345", false, false), (Ids{258, 259}));
  // qwen2: \p{N} → one word per digit: no merge applies.
  EXPECT_EQ(Tokenizer(bpe_vocab("qwen2", merges)).encode("12345", false, false),
            (Ids{'1', '2', '3', '4', '5'}));
  // gpt2: " ?\p{N}+" → one word: 34 (rank 0) first, then 12; "45" is stale → [12, 34, 5].
  EXPECT_EQ(Tokenizer(bpe_vocab("gpt2", merges)).encode("12345", false, false),
            (Ids{257, 256, '5'}));
}

TEST(TokenizerBpe, SpecialTokens) {
  const std::vector<std::pair<std::string, TokenType>> extra = {
      {"<|end_of_text|>", TokenType::kControl},  // 256
      {"<|user|>", TokenType::kUserDefined},     // 257
      {"<|eot_id|>", TokenType::kNormal},        // 258: looks like control → forced control, EOG
  };
  Vocab v = bpe_vocab("llama-bpe", {}, extra);
  v.eos = 256;
  v.bos = 256;
  Tokenizer t(v);
  EXPECT_EQ(t.encode("a<|end_of_text|>b", false, true), (Ids{'a', 256, 'b'}));
  EXPECT_EQ(t.encode("a<|end_of_text|>b", false, false), bytes_of("a<|end_of_text|>b"));
  // User-defined tokens are split out even without parse_special.
  EXPECT_EQ(t.encode("x<|user|>y", false, false), (Ids{'x', 257, 'y'}));
  EXPECT_EQ(t.encode("<|eot_id|><|eot_id|>", false, true), (Ids{258, 258}));
  EXPECT_EQ(t.encode("hi", true, false), (Ids{256, 'h', 'i'}));
  EXPECT_EQ(t.token_type(258), TokenType::kControl);
  EXPECT_TRUE(t.is_eog(256));
  EXPECT_TRUE(t.is_eog(258));
  EXPECT_FALSE(t.is_eog(257));
  EXPECT_FALSE(t.is_eog('a'));
  EXPECT_EQ(t.decode({'a', 256, 257, 258}), "a<|user|>");
  EXPECT_EQ(t.decode({'a', 256, 257, 258}, true), "a<|end_of_text|><|user|><|eot_id|>");
}

// The end-of-generation texts of newer llama.cpp (Phi-3's </s>, gpt-oss, Gemma 4, solar-open), and
// its two exceptions: gpt-oss's <|end|> (with <|return|> and <|call|>) and Gemma 4's </s>.
TEST(TokenizerBpe, EndOfGenerationListAndItsExceptions) {
  {
    Vocab v = bpe_vocab("llama-bpe", {}, {{"</s>", TokenType::kNormal},          // 256
                                          {"<|flush|>", TokenType::kControl},    // 257
                                          {"<turn|>", TokenType::kControl},      // 258
                                          {"<|end|>", TokenType::kControl}});    // 259
    const Tokenizer t(v);
    for (int32_t id : {256, 257, 258, 259}) EXPECT_TRUE(t.is_eog(id)) << id;
    EXPECT_EQ(t.token_type(256), TokenType::kControl);
  }
  {
    Vocab v = bpe_vocab("llama-bpe", {}, {{"<|end|>", TokenType::kControl},      // 256
                                          {"<|return|>", TokenType::kControl},   // 257
                                          {"<|call|>", TokenType::kControl}});   // 258
    const Tokenizer t(v);
    EXPECT_FALSE(t.is_eog(256));
    EXPECT_EQ(t.token_type(256), TokenType::kUserDefined);
    EXPECT_TRUE(t.is_eog(257));
    EXPECT_TRUE(t.is_eog(258));
  }
  {
    Vocab v = bpe_vocab("llama-bpe", {}, {{"</s>", TokenType::kNormal},               // 256
                                          {"<|tool_response>", TokenType::kControl}});  // 257
    const Tokenizer t(v);
    EXPECT_FALSE(t.is_eog(256));
    EXPECT_TRUE(t.is_eog(257));
  }
}

TEST(TokenizerBpe, LongestSpecialTokenWins) {
  const std::vector<std::pair<std::string, TokenType>> extra = {
      {"<|a|>", TokenType::kControl},     // 256
      {"<|a|><|b|>", TokenType::kControl}  // 257
  };
  Tokenizer t(bpe_vocab("gpt2", {}, extra));
  EXPECT_EQ(t.encode("<|a|><|b|><|a|>", false, true), (Ids{257, 256}));
}

TEST(TokenizerBpe, BosIsNotAddedWithoutAnId) {
  Tokenizer t(bpe_vocab("qwen2", {}));
  EXPECT_EQ(t.encode("", false, false), Ids{});
  EXPECT_THROW(t.encode("a", true, false), Error);
}

TEST(TokenizerBpe, RoundTrip) {
  Tokenizer t(bpe_vocab("llama3", {"\xC4\xA0 t", "h e", "\xC4\xA0t he"}));
  const std::vector<std::string> texts = {
      "the cat", " the  cat ", "I'm here, aren't you?", "line1\nline2\r\n\n", "\t\ttabs",
      "caf\xC3\xA9 na\xC3\xAFve", "\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C",
      "\xF0\x9F\x98\x80\xF0\x9F\x91\x8D emoji", "1234567890", "   ", "", "a\x7F\x01z",
      "<|not_special|>"};
  for (const std::string& s : texts) EXPECT_EQ(t.decode(t.encode(s, false, false)), s) << s;
}

TEST(TokenizerBpe, InvalidUtf8BecomesReplacementCharacters) {
  Tokenizer t(bpe_vocab("llama3", {}));
  const std::string r = "\xEF\xBF\xBD";  // U+FFFD
  EXPECT_EQ(t.decode(t.encode("a\xFFz", false, false)), "a" + r + "z");
  EXPECT_EQ(t.encode("\xFF", false, false), (Ids{0xEF, 0xBF, 0xBD}));
  EXPECT_EQ(t.decode(t.encode("\xE4\xBD", false, false)), r + r);         // truncated: per byte
  EXPECT_EQ(t.decode(t.encode("\xC0\xAF", false, false)), r + r);         // overlong
  EXPECT_EQ(t.decode(t.encode("\xED\xA0\x80", false, false)), r + r + r); // surrogate
  EXPECT_EQ(t.decode(t.encode("ok\x80", false, false)), "ok" + r);
}

TEST(TokenizerBpe, ValidationOfMerges) {
  const auto message = [](Vocab v) {
    try {
      Tokenizer t(std::move(v));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  {
    Vocab v = bpe_vocab("gpt2", {"a b"});
    v.merges.push_back("ab");
    EXPECT_NE(message(v).find("tokenizer.ggml.merges[1]"), std::string::npos);
  }
  {
    Vocab v = bpe_vocab("gpt2", {"a b"});
    v.merges.push_back("a \xC4\xA0\xC4\xA0");  // "ĠĠ" is not a token
    EXPECT_NE(message(v).find("tokenizer.ggml.merges[1]"), std::string::npos);
  }
  {
    Vocab v = bpe_vocab("gpt2", {"a b"});
    v.merges.push_back("b a");  // "ba" is not a token
    EXPECT_NE(message(v).find("is not a token"), std::string::npos);
  }
  {
    Vocab v = bpe_vocab("gpt2", {"a b"});
    v.unk = 1000;
    EXPECT_NE(message(v).find("tokenizer.ggml.unknown_token_id"), std::string::npos);
  }
  {
    Vocab v = bpe_vocab("gpt2", {"a b"});
    v.add_eos = true;
    EXPECT_NE(message(v).find("tokenizer.ggml.add_eos_token"), std::string::npos);
  }
  EXPECT_EQ(message(bpe_vocab("gpt2", {"a b"})), "");
}

TEST(TokenizerBpe, DefaultAddBosFollowsLlamaCpp) {
  EXPECT_TRUE(default_add_bos("llama", ""));
  EXPECT_TRUE(default_add_bos("gpt2", "llama-bpe"));
  EXPECT_TRUE(default_add_bos("gpt2", "llama3"));
  EXPECT_TRUE(default_add_bos("gpt2", "tekken"));
  EXPECT_FALSE(default_add_bos("gpt2", "qwen2"));
  EXPECT_FALSE(default_add_bos("gpt2", "gpt-2"));
  EXPECT_FALSE(default_add_bos("gpt2", ""));
}

}  // namespace
}  // namespace ork::model
