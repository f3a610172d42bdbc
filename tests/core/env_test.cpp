#include "core/env.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "core/error.h"

namespace ork {
namespace {

TEST(Env, ParsesIntegersStrictly) {
  EXPECT_EQ(parse_int("42", "n", 0, 100), 42);
  EXPECT_EQ(parse_int("-3", "n", -5, 5), -3);
  EXPECT_THROW(parse_int("", "n", 0, 100), Error);
  EXPECT_THROW(parse_int("4x", "n", 0, 100), Error);
  EXPECT_THROW(parse_int("101", "n", 0, 100), Error);
  EXPECT_THROW(parse_int("99999999999999999999999", "n", 0, 100), Error);
  try {
    parse_int("abc", "--threads", 1, 64);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--threads"), std::string::npos);
  }
}

TEST(Env, ParsesDoubles) {
  EXPECT_DOUBLE_EQ(parse_double("0.5", "t"), 0.5);
  EXPECT_THROW(parse_double("nan", "t"), Error);
  EXPECT_THROW(parse_double("1.0.0", "t"), Error);
}

TEST(Env, ReadsVariables) {
  ::setenv("ORK_TEST_INT", "17", 1);
  ::setenv("ORK_TEST_FLAG", "1", 1);
  ::setenv("ORK_TEST_BAD", "maybe", 1);
  EXPECT_EQ(env_int("ORK_TEST_INT", 3, 0, 100), 17);
  EXPECT_EQ(env_int("ORK_TEST_UNSET_XYZ", 3, 0, 100), 3);
  EXPECT_TRUE(env_flag("ORK_TEST_FLAG", false));
  EXPECT_THROW(env_flag("ORK_TEST_BAD", false), Error);
}

}  // namespace
}  // namespace ork
