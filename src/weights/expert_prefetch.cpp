#include "weights/expert_prefetch.h"

#include "core/error.h"
#include "core/quote.h"

namespace ork::weights {

ExpertPrefetch parse_expert_prefetch(const std::string& t) {
  if (t == "predict") return ExpertPrefetch::kPredict;
  if (t == "none") return ExpertPrefetch::kNone;
  fail("expert prefetch ", quote(t), " is not one of predict, none");
}

const char* expert_prefetch_name(ExpertPrefetch p) {
  return p == ExpertPrefetch::kPredict ? "predict" : "none";
}

}  // namespace ork::weights
