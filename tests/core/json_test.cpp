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

}  // namespace
}  // namespace ork
