// Small vocabularies built in memory for the tokenizer tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/tokenizer.h"
#include "model/tokenizer_unicode.h"

namespace ork::model::testing {

// SPM: 0 <unk>, 1 <s>, 2 </s>, 3..258 <0x00>..<0xFF> (when with_bytes), then `pieces` (text, score)
// as normal tokens, in order.
inline Vocab spm_vocab(const std::vector<std::pair<std::string, float>>& pieces, bool with_bytes = true) {
  Vocab v;
  v.model = "llama";
  auto add = [&](std::string t, float s, TokenType type) {
    v.tokens.push_back(std::move(t));
    v.scores.push_back(s);
    v.types.push_back(static_cast<int32_t>(type));
  };
  add("<unk>", 0, TokenType::kUnknown);
  add("<s>", 0, TokenType::kControl);
  add("</s>", 0, TokenType::kControl);
  if (with_bytes) {
    static const char* kHex = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) add(std::string{'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'}, 0, TokenType::kByte);
  }
  for (const auto& [t, s] : pieces) add(t, s, TokenType::kNormal);
  v.unk = 0;
  v.bos = 1;
  v.eos = 2;
  v.add_bos = true;
  v.add_space_prefix = true;
  return v;
}

// id of byte b in spm_vocab(..., true)
inline int32_t spm_byte(uint8_t b) { return 3 + b; }

// GPT-2 style: tokens 0..255 are the bytes (id = byte value) mapped through the GPT-2 table, then
// one token per merge result, in merge order, then `extra` (text, type).
inline Vocab bpe_vocab(const std::string& pre, const std::vector<std::string>& merges,
                       const std::vector<std::pair<std::string, TokenType>>& extra = {}) {
  Vocab v;
  v.model = "gpt2";
  v.pre = pre;
  for (int b = 0; b < 256; ++b) v.tokens.emplace_back(byte_unicode::text(static_cast<uint8_t>(b)));
  v.types.assign(256, static_cast<int32_t>(TokenType::kNormal));
  for (const std::string& m : merges) {
    const size_t sp = m.find(' ', 1);
    v.tokens.push_back(m.substr(0, sp) + m.substr(sp + 1));
    v.types.push_back(static_cast<int32_t>(TokenType::kNormal));
  }
  v.merges = merges;
  for (const auto& [t, type] : extra) {
    v.tokens.push_back(t);
    v.types.push_back(static_cast<int32_t>(type));
  }
  v.add_bos = false;
  v.add_space_prefix = false;
  return v;
}

}  // namespace ork::model::testing
