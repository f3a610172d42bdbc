// Pre-tokenizer regexes (per tokenizer.ggml.pre) and the UTF-8 / GPT-2 byte table helpers.
#include <gtest/gtest.h>

#include "core/error.h"
#include "model/tokenizer_pretok.h"
#include "model/tokenizer_unicode.h"

namespace ork::model {
namespace {

using Words = std::vector<std::string>;

Words split(const char* pre, std::string_view text) {
  PreTokenizer p(pre);
  std::vector<std::string_view> out;
  p.split(text, out);
  return Words(out.begin(), out.end());
}

TEST(PreTokenizer, ResolvesNames) {
  EXPECT_EQ(PreTokenizer("llama-bpe").spec().family, "llama3");
  EXPECT_TRUE(PreTokenizer("llama-bpe").spec().ignore_merges);
  EXPECT_EQ(PreTokenizer("qwen2").spec().family, "qwen2");
  EXPECT_FALSE(PreTokenizer("qwen2").spec().ignore_merges);
  EXPECT_EQ(PreTokenizer("gpt-2").spec().family, "gpt2");
  EXPECT_EQ(PreTokenizer("").spec().family, "default");
  EXPECT_EQ(PreTokenizer("default").spec().regexes.size(), 4u);
  try {
    PreTokenizer p("no-such-pre\n");
    ADD_FAILURE() << "an unknown pre-tokenizer was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.pre 'no-such-pre\\n' is not a pre-tokenizer ork knows"),
              std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--tokenizer-pre"), std::string::npos) << e.what();
  }
  EXPECT_EQ(find_pre_tokenizer("no-such-pre"), nullptr);
}

// The families llama.cpp added for Qwen3.5, Mistral Nemo and DeepSeek (src/llama-vocab.cpp regexes).
TEST(PreTokenizer, Qwen35KeepsMarksInWordsAndSplitsEveryNumber) {
  EXPECT_EQ(split("qwen35", "ied 4 \xC2\xBD months"), (Words{"ied", " ", "4", " ", "\xC2\xBD", " months"}));
  // e + U+0301 (combining acute) + te: one word for qwen35; qwen2 starts a word at the mark.
  EXPECT_EQ(split("qwen35", "e\xCC\x81te"), (Words{"e\xCC\x81te"}));
  EXPECT_EQ(split("qwen2", "e\xCC\x81te"), (Words{"e", "\xCC\x81te"}));
}

TEST(PreTokenizer, TekkenSplitsCamelCaseAndDigits) {
  EXPECT_EQ(split("tekken", "HelloWorld ABCdef"), (Words{"Hello", "World", " ABCdef"}));
  EXPECT_EQ(split("tekken", "2024"), (Words{"2", "0", "2", "4"}));
  EXPECT_TRUE(PreTokenizer("tekken").spec().ignore_merges);
  EXPECT_TRUE(PreTokenizer("tekken").spec().add_bos);
}

TEST(PreTokenizer, DeepseekLlmAndCoder) {
  EXPECT_EQ(split("deepseek-llm", "Hello, \xE4\xB8\x96\xE7\x95\x8C 123"),
            (Words{"Hello", ",", " ", "\xE4\xB8\x96\xE7\x95\x8C", " ", "123"}));
  EXPECT_EQ(split("deepseek-coder", "foo bar\n12"), (Words{"foo", " bar", "\n", "1", "2"}));
}

TEST(PreTokenizer, Words) {
  EXPECT_EQ(split("llama3", "Hello world"), (Words{"Hello", " world"}));
  EXPECT_EQ(split("gpt2", "Hello world"), (Words{"Hello", " world"}));
  EXPECT_EQ(split("llama3", "Hi!! ok."), (Words{"Hi", "!!", " ok", "."}));
  EXPECT_EQ(split("gpt2", "Hi!! ok."), (Words{"Hi", "!!", " ok", "."}));
  // llama3/qwen2 attach one leading non-letter to a word; gpt2 only a space.
  EXPECT_EQ(split("llama3", "(word"), (Words{"(word"}));
  EXPECT_EQ(split("gpt2", "(word"), (Words{"(", "word"}));
}

TEST(PreTokenizer, Contractions) {
  EXPECT_EQ(split("llama3", "I'm don't"), (Words{"I", "'m", " don", "'t"}));
  EXPECT_EQ(split("llama3", "WE'LL"), (Words{"WE", "'LL"}));  // case-insensitive
  EXPECT_EQ(split("qwen2", "you're"), (Words{"you", "'re"}));
  EXPECT_EQ(split("gpt2", "I'm"), (Words{"I", "'m"}));
  EXPECT_EQ(split("gpt2", "I'M"), (Words{"I", "'", "M"}));  // gpt2: lower case only
}

TEST(PreTokenizer, Numbers) {
  EXPECT_EQ(split("llama3", "12345"), (Words{"123", "45"}));
  EXPECT_EQ(split("llama3", "a1234567"), (Words{"a", "123", "456", "7"}));
  EXPECT_EQ(split("qwen2", "12345"), (Words{"1", "2", "3", "4", "5"}));
  EXPECT_EQ(split("gpt2", "12345"), (Words{"12345"}));
  EXPECT_EQ(split("gpt2", "x 12345"), (Words{"x", " 12345"}));
  EXPECT_EQ(split("starcoder", "x 123"), (Words{"x", " ", "1", "2", "3"}));
  // default: punctuation runs, then gpt2, then \p{N}+, then groups of 3 ASCII digits.
  EXPECT_EQ(split("default", "a,b 1234"), (Words{"a", ",", "b", " ", "123", "4"}));
}

TEST(PreTokenizer, WhitespaceAndNewlines) {
  EXPECT_EQ(split("llama3", "a   b"), (Words{"a", "  ", " b"}));
  EXPECT_EQ(split("gpt2", "a   b"), (Words{"a", "  ", " b"}));
  EXPECT_EQ(split("llama3", "a  "), (Words{"a", "  "}));
  EXPECT_EQ(split("llama3", "a\n\nb"), (Words{"a", "\n\n", "b"}));
  EXPECT_EQ(split("llama3", "a \n b"), (Words{"a", " \n", " b"}));
  EXPECT_EQ(split("gpt2", "a\n\nb"), (Words{"a", "\n", "\n", "b"}));
  EXPECT_EQ(split("llama3", "x.\n\ny"), (Words{"x", ".\n\n", "y"}));
  EXPECT_EQ(split("llama3", "\tb"), (Words{"\tb"}));
  EXPECT_EQ(split("gpt2", "\tb"), (Words{"\t", "b"}));
}

TEST(PreTokenizer, Unicode) {
  EXPECT_EQ(split("llama3", "h\xC3\xA9llo w\xC3\xB6rld"), (Words{"h\xC3\xA9llo", " w\xC3\xB6rld"}));
  EXPECT_EQ(split("llama3", "\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C"),
            (Words{"\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C"}));
  EXPECT_EQ(split("llama3", "hi \xF0\x9F\x98\x80\xF0\x9F\x98\x80"),
            (Words{"hi", " \xF0\x9F\x98\x80\xF0\x9F\x98\x80"}));
  // U+00A0 (no-break space) is \s for PCRE2 UCP.
  EXPECT_EQ(split("llama3", "a\xC2\xA0\xC2\xA0" "b"), (Words{"a", "\xC2\xA0", "\xC2\xA0" "b"}));
  EXPECT_EQ(split("gpt2", "a\xC2\xA0\xC2\xA0" "b"), (Words{"a", "\xC2\xA0", "\xC2\xA0", "b"}));
}

TEST(PreTokenizer, PiecesCoverTheText) {
  const std::string text = "Mixed: 3.14159 + x_y / \"quoted\" \xE2\x80\x94 done!\r\n\tEnd  ";
  for (const char* pre : {"llama3", "qwen2", "gpt2", "starcoder", "falcon", "default"}) {
    std::string joined;
    for (const std::string& w : split(pre, text)) {
      EXPECT_FALSE(w.empty()) << pre;
      joined += w;
    }
    EXPECT_EQ(joined, text) << pre;
  }
}

TEST(Utf8, Sanitize) {
  EXPECT_EQ(utf8::sanitize("plain"), "plain");
  EXPECT_EQ(utf8::sanitize("\xE4\xBD\xA0"), "\xE4\xBD\xA0");
  EXPECT_EQ(utf8::sanitize("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(utf8::sanitize("\xFF"), r);
  EXPECT_EQ(utf8::sanitize("a\x80" "b"), "a" + r + "b");
  EXPECT_EQ(utf8::sanitize("\xE4\xBD"), r + r);
  EXPECT_EQ(utf8::sanitize("\xC1\xBF"), r + r);           // overlong
  EXPECT_EQ(utf8::sanitize("\xE0\x80\x80"), r + r + r);   // overlong
  EXPECT_EQ(utf8::sanitize("\xED\xBF\xBF"), r + r + r);   // surrogate
  EXPECT_EQ(utf8::sanitize("\xF4\x90\x80\x80"), r + r + r + r);  // > U+10FFFF
  EXPECT_EQ(utf8::sanitize("\xF4\x8F\xBF\xBF"), "\xF4\x8F\xBF\xBF");  // U+10FFFF
}

TEST(ByteUnicode, Gpt2Table) {
  EXPECT_EQ(byte_unicode::code_point('A'), uint32_t{'A'});
  EXPECT_EQ(byte_unicode::code_point(0x00), 0x100u);
  EXPECT_EQ(byte_unicode::code_point(0x0A), 0x10Au);
  EXPECT_EQ(byte_unicode::code_point(0x20), 0x120u);
  EXPECT_EQ(byte_unicode::code_point(0x7F), 0x121u);
  EXPECT_EQ(byte_unicode::code_point(0xA0), 0x142u);
  EXPECT_EQ(byte_unicode::code_point(0xAD), 0x143u);
  EXPECT_EQ(byte_unicode::code_point(0xFF), 0xFFu);
  EXPECT_EQ(byte_unicode::text(' '), "\xC4\xA0");  // Ġ
  for (int b = 0; b < 256; ++b) {
    EXPECT_EQ(byte_unicode::byte_of(byte_unicode::code_point(static_cast<uint8_t>(b))), b);
  }
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  std::string mapped;
  byte_unicode::encode(all, mapped);
  EXPECT_EQ(byte_unicode::decode(mapped), all);
  // Characters outside the table pass through.
  EXPECT_EQ(byte_unicode::decode("\xE4\xBD\xA0"), "\xE4\xBD\xA0");
}

}  // namespace
}  // namespace ork::model
