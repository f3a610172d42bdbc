#include "model/non_finite.h"

#include "core/error.h"
#include "core/non_finite.h"
#include "core/quote.h"

namespace ork::model {

void fail_non_finite(float value, int64_t at, int64_t width, const char* what, const Linear& w) {
  fail("non-finite value (", value, ") in the ", what, " ", quote(w.name()), " at batch row ", at / width,
       ", element ", at % width, ": the weights or the input hold NaN/Inf or overflowed");
}

void check_finite(const float* m, int64_t rows, int64_t width, const char* what, const Linear& w) {
  const int64_t at = first_non_finite(m, rows * width);
  if (at >= 0) fail_non_finite(m[at], at, width, what, w);
}

}  // namespace ork::model
