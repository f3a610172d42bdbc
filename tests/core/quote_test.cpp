// quote() and one_line(): text from files or from outside becomes one printable, capped line.
#include "core/quote.h"
#include "core/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace ork {
namespace {

using namespace std::string_literals;

TEST(Quote, PlainNamesAndValidUtf8AreKept) {
  EXPECT_EQ(quote("blk.0.attn_q.weight"), "'blk.0.attn_q.weight'");
  EXPECT_EQ(quote("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "'caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80'");
  EXPECT_EQ(quote(""), "''");
}

TEST(Quote, ControlBytesQuotesAndBackslashesAreEscaped) {
  EXPECT_EQ(quote("a\nork: error: forged"), "'a\\nork: error: forged'");
  EXPECT_EQ(quote("a\r\tb"), "'a\\r\\tb'");
  EXPECT_EQ(quote("x\0y"s), "'x\\x00y'");
  EXPECT_EQ(quote("\x1b[31mred"), "'\\x1b[31mred'");
  EXPECT_EQ(quote("del\x7f"), "'del\\x7f'");
  EXPECT_EQ(quote("it's a\\b"), "'it\\'s a\\\\b'");
  // U+009B (CSI, C2 9B) is a terminal control too; U+00A0 is not.
  EXPECT_EQ(quote("\xc2\x9b" "2J\xc2\xa0"), "'\\xc2\\x9b2J\xc2\xa0'");
}

TEST(Quote, InvalidUtf8IsEscapedBytewise) {
  EXPECT_EQ(quote("\xff"), "'\\xff'");
  EXPECT_EQ(quote("\xc3"), "'\\xc3'");                  // truncated
  EXPECT_EQ(quote("\xc0\xaf"), "'\\xc0\\xaf'");         // overlong '/'
  EXPECT_EQ(quote("\xed\xa0\x80"), "'\\xed\\xa0\\x80'");  // a surrogate
  EXPECT_EQ(quote("\xf4\x90\x80\x80"), "'\\xf4\\x90\\x80\\x80'");  // past U+10FFFF
  EXPECT_EQ(quote("\x80" "a"), "'\\x80a'");
}

TEST(Quote, LongNamesAreCappedWithTheirSize) {
  const std::string longname(5000, 'n');
  const std::string q = quote(longname);
  EXPECT_EQ(q, "'" + std::string(kQuoteMaxBytes, 'n') + "...' (5000 bytes)");
  // The cap never cuts a UTF-8 sequence in two.
  std::string euros;
  for (int i = 0; i < 100; ++i) euros += "\xe2\x82\xac";
  const std::string e = quote(euros, 10);
  EXPECT_EQ(e, "'\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac...' (300 bytes)");
}

TEST(OneLine, EscapesWithoutQuotingAndCapsTheMessage) {
  EXPECT_EQ(one_line("model.gguf: tensor 'a' is bad"), "model.gguf: tensor 'a' is bad");
  // A message holding a quoted name is not escaped twice.
  EXPECT_EQ(one_line("arch " + quote("x\ny")), "arch 'x\\ny'");
  EXPECT_EQ(one_line("two\nlines\x1b]0;title\x07"), "two\\nlines\\x1b]0;title\\x07");
  const std::string m = one_line(std::string(3000, 'x'));
  EXPECT_EQ(m, std::string(kErrorLineMaxBytes, 'x') + "... (3000 bytes)");
}

TEST(Utf8ValidPrefix, LengthsOfEachForm) {
  EXPECT_EQ(utf8_valid_prefix(""), 0u);
  EXPECT_EQ(utf8_valid_prefix("a"), 1u);
  EXPECT_EQ(utf8_valid_prefix("\xc3\xa9x"), 2u);
  EXPECT_EQ(utf8_valid_prefix("\xe2\x82\xac"), 3u);
  EXPECT_EQ(utf8_valid_prefix("\xf0\x9f\x98\x80"), 4u);
  EXPECT_EQ(utf8_valid_prefix("\xe0\x80\x80"), 0u);  // overlong 3-byte
  EXPECT_EQ(utf8_valid_prefix("\xf0\x80\x80\x80"), 0u);  // overlong 4-byte
  EXPECT_EQ(utf8_valid_prefix("\xe2\x82"), 0u);
}

}  // namespace
}  // namespace ork
