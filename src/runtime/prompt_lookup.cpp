#include "runtime/prompt_lookup.h"

#include <algorithm>

#include "core/error.h"

namespace ork::runtime {

PromptLookup::PromptLookup(int64_t n_max, int64_t n_min) : n_max_(n_max), n_min_(n_min) {
  ORK_CHECK(n_min >= 1 && n_max >= n_min, "--lookup ", n_max, ": the n-gram length must be >= ",
            std::max<int64_t>(n_min, 1));
}

void PromptLookup::propose(const std::vector<int32_t>& seq, int64_t max_k, Draft& out) {
  out.clear();
  const int64_t len = int64_t(seq.size());
  for (int64_t n = std::min(n_max_, len - 1); n >= n_min_; --n) {
    const int32_t* tail = seq.data() + (len - n);
    // The latest earlier occurrence: start s < len - n with seq[s, s+n) == tail.
    for (int64_t s = len - n - 1; s >= 0; --s) {
      if (!std::equal(tail, tail + n, seq.data() + s)) continue;
      const int64_t from = s + n, count = std::min(max_k, len - from);
      out.tokens.assign(seq.begin() + from, seq.begin() + from + count);
      return;
    }
  }
}

}  // namespace ork::runtime
