#include "core/json.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

#include "core/error.h"

namespace ork {
namespace {

TEST(Json, NestedContainersAndKeyOrder) {
  JsonWriter j;
  j.begin_object().key("n").value(3).key("xs").begin_array().value(1.5).value(int64_t(-2)).end_array();
  j.key("o").begin_object().key("z").value(true).key("b").null().end_object().end_object();
  EXPECT_EQ(j.str(), R"({"n":3,"xs":[1.5,-2],"o":{"z":true,"b":null}})");
}

TEST(Json, EscapesStringsAndWritesNonFiniteAsNull) {
  JsonWriter j;
  j.begin_array().value("a\"b\\c\n\x01").value(std::nan("")).value(uint64_t(1) << 40);
  j.value(std::numeric_limits<double>::infinity()).value(-std::numeric_limits<float>::infinity());
  j.end_array();
  EXPECT_EQ(j.str(), "[\"a\\\"b\\\\c\\n\\u0001\",null,1099511627776,null,null]");
}

// Numbers in the shortest form that reads back to the same value (the writer used to print %.6g,
// which lost digits: 0.1234567 → 0.123457, 123456789.5 → 1.23457e+08).
TEST(Json, NumbersRoundTrip) {
  JsonWriter j;
  j.begin_array().value(0.1234567).value(123456789.5).value(2.0).value(1e-7).value(0.1f);
  j.value(int64_t(-9007199254740993)).value(std::numeric_limits<uint64_t>::max()).end_array();
  EXPECT_EQ(j.str(), "[0.1234567,123456789.5,2.0,1e-07,0.1,-9007199254740993,18446744073709551615]");
  const double values[] = {1.0 / 3, 6.02214076e23, -4.9e-324, 0.30000000000000004, 1e300};
  for (const double v : values) {
    JsonWriter k;
    k.value(v);
    EXPECT_EQ(nlohmann::json::parse(k.str()).get<double>(), v) << k.str();
  }
}

// Invalid UTF-8 (a token's bytes that end mid-character, stray continuation bytes, overlong forms,
// surrogates) becomes U+FFFD, so the output always parses as strict UTF-8 JSON.
TEST(Json, InvalidUtf8BecomesReplacementCharacters) {
  JsonWriter j;
  j.begin_array().value("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80").value("ok\xe2\x82").value("\x80x");
  j.value("\xc0\xaf").value("\xed\xa0\x80").end_array();
  const std::string r = "\xef\xbf\xbd";  // U+FFFD
  EXPECT_EQ(j.str(), "[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\",\"ok" + r + "\",\"" + r + "x\",\"" + r +
                         r + "\",\"" + r + r + r + "\"]");
  EXPECT_TRUE(nlohmann::json::accept(j.str()));
  JsonWriter k;
  k.begin_object().key("\xff").value(1).end_object();
  EXPECT_EQ(k.str(), "{\"" + r + "\":1}");
  // Every single byte value, alone and after a valid prefix: the result parses strictly.
  for (int b = 0; b < 256; ++b) {
    JsonWriter w;
    w.begin_array().value(std::string(1, char(b))).value("\xe2" + std::string(1, char(b))).end_array();
    EXPECT_TRUE(nlohmann::json::accept(w.str())) << "byte " << b;
  }
}

TEST(Json, RawInsertsParsedJson) {
  JsonWriter inner;
  inner.begin_object().key("a").value(1).end_object();
  JsonWriter j;
  j.begin_object().key("inner").raw(inner.str()).key("b").value(false).end_object();
  EXPECT_EQ(j.str(), R"({"inner":{"a":1},"b":false})");
  JsonWriter bad;
  bad.begin_array();
  EXPECT_THROW(bad.raw("{\"a\":"), Error);
}

TEST(Json, MisuseIsAnError) {
  JsonWriter open;
  open.begin_object().key("a").value(1);
  EXPECT_THROW((void)open.str(), Error);  // not closed
  JsonWriter no_key;
  no_key.begin_object();
  EXPECT_THROW(no_key.value(1), Error);
  JsonWriter twice;
  twice.begin_object().key("a").value(1).key("a");
  EXPECT_THROW(twice.value(2), Error);
  JsonWriter mismatch;
  mismatch.begin_array();
  EXPECT_THROW(mismatch.end_object(), Error);
  EXPECT_THROW((void)JsonWriter().str(), Error);  // nothing written
  JsonWriter two;
  two.value(1);
  EXPECT_THROW(two.value(2), Error);
}

}  // namespace
}  // namespace ork
