// runtime::PromptLookup — drafting without a draft model ("prompt lookup decoding", Saxena 2023,
// github.com/apoorvumang/prompt-lookup-decoding; llama.cpp's n-gram lookup): the last n tokens of
// the sequence are searched for earlier in the sequence, and the tokens that followed the latest
// earlier occurrence are proposed. Longest n first (n_max down to n_min).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/draft_source.h"

namespace ork::runtime {

class PromptLookup final : public DraftSource {
 public:
  // n_max >= n_min >= 1 (ork::Error otherwise): the n-gram lengths tried, longest first.
  explicit PromptLookup(int64_t n_max, int64_t n_min = 1);

  // Deterministic proposals (Draft::q empty). O(seq.size() · n_max) per call.
  void propose(const std::vector<int32_t>& seq, int64_t max_k, Draft& out) override;
  const char* name() const override { return "lookup"; }

 private:
  int64_t n_max_, n_min_;
};

}  // namespace ork::runtime
