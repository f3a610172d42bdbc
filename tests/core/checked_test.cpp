// reserve_or_fail: a count the machine cannot hold is an ork::Error naming the field and the size.
#include "core/checked.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ork {
namespace {

TEST(ReserveOrFail, ReservesWhatFits) {
  std::vector<double> v;
  reserve_or_fail(v, 1000, "xs");
  EXPECT_GE(v.capacity(), 1000u);
}

TEST(ReserveOrFail, ACountPastMaxSizeNamesTheFieldAndBytes) {
  std::vector<double> v;
  try {
    reserve_or_fail(v, uint64_t(1) << 62, "f.gguf: tensor_count 4611686018427387904");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "f.gguf: tensor_count 4611686018427387904: cannot allocate 4611686018427387904 elements "
              "(4611686018427387904 x 8 bytes)");
  }
}

}  // namespace
}  // namespace ork
