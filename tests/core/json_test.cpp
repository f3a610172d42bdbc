#include "core/json.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ork {
namespace {

TEST(Json, NestedContainersAndCommas) {
  JsonWriter j;
  j.begin_object().key("n").value(3).key("xs").begin_array().value(1.5).value(int64_t(-2)).end_array();
  j.key("o").begin_object().key("b").value(true).key("z").null().end_object().end_object();
  EXPECT_EQ(j.str(), R"({"n":3,"xs":[1.5,-2],"o":{"b":true,"z":null}})");
}

TEST(Json, EscapesStringsAndNonFinite) {
  JsonWriter j;
  j.begin_array().value("a\"b\\c\n\x01").value(std::nan("")).value(uint64_t(1) << 40).end_array();
  EXPECT_EQ(j.str(), "[\"a\\\"b\\\\c\\n\\u0001\",null,1099511627776]");
}

TEST(Json, InvalidUtf8BecomesReplacementCharacters) {
  JsonWriter j;
  // Valid 2-, 3- and 4-byte sequences are kept; a truncated sequence at the end (a token that ends
  // mid-character), a stray continuation byte, an overlong form and a surrogate are replaced per byte.
  j.begin_array().value("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80").value("ok\xe2\x82").value("\x80x");
  j.value("\xc0\xaf").value("\xed\xa0\x80").end_array();
  EXPECT_EQ(j.str(), "[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\",\"ok\\ufffd\\ufffd\",\"\\ufffdx\","
                     "\"\\ufffd\\ufffd\",\"\\ufffd\\ufffd\\ufffd\"]");
  JsonWriter k;
  k.begin_object().key("\xff").value(1).end_object();
  EXPECT_EQ(k.str(), "{\"\\ufffd\":1}");
}

}  // namespace
}  // namespace ork
