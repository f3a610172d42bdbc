#include "model/tokenizer.h"

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "core/log.h"
#include "core/quote.h"
#include "model/tokenizer_unicode.h"

namespace ork::model {
namespace {

// Token texts that end generation (llama.cpp llama-vocab.cpp, special_eog_ids). The gpt-oss
// "<|return|>"/"<|call|>" pair is left out: llama.cpp needs a further hack to then drop "<|end|>".
// Texts that end generation when they are tokens (llama.cpp llama_vocab::impl::load, its list as of
// 2026, with the DeepSeek end of sentence); the two exceptions below follow it too.
constexpr const char* kEogTexts[] = {
    "<|eot_id|>",  "<|im_end|>",       "<|end|>",          "<|return|>",    "<|call|>",
    "<|flush|>",   "<|calls|>",        "<end_of_turn>",    "<|endoftext|>", "</s>",
    "<|eom_id|>",  "<EOT>",            "_<EOT>",           "[EOT]",         "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>",      "<turn|>",       "<|tool_response>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81" "of\xE2\x96\x81" "sentence\xEF\xBD\x9C>",
};

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581 '▁'

void check_id(int32_t id, size_t n, const char* key) {
  ORK_CHECK(id >= -1 && (id < 0 || static_cast<size_t>(id) < n), key, ": token id ", id,
            " is outside the vocabulary [0, ", n, ")");
}

// "<0xNN>" → NN, or -1.
int parse_byte_token(std::string_view t) {
  if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>') return -1;
  const auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int hi = hex(t[3]), lo = hex(t[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (true) {
    const size_t p = s.find(from, i);
    if (p == std::string_view::npos) break;
    out.append(s.substr(i, p - i));
    out.append(to);
    i = p + from.size();
  }
  out.append(s.substr(i));
  return out;
}

}  // namespace

Tokenizer::Tokenizer(Vocab v) : vocab_(std::move(v)) {
  const Vocab& V = vocab_;
  ORK_CHECK(V.model == "llama" || V.model == "gpt2", "tokenizer.ggml.model: unsupported tokenizer ",
            quote(V.model), " (supported: llama, gpt2)");
  spm_ = V.model == "llama";
  const size_t n = V.tokens.size();
  ORK_CHECK(n > 0, "tokenizer.ggml.tokens: the vocabulary is empty");
  ORK_CHECK(n <= static_cast<size_t>(std::numeric_limits<int32_t>::max()),
            "tokenizer.ggml.tokens: ", n, " tokens do not fit int32 ids");
  ORK_CHECK(V.scores.empty() || V.scores.size() == n, "tokenizer.ggml.scores: ", V.scores.size(),
            " scores for ", n, " tokens");
  ORK_CHECK(V.types.empty() || V.types.size() == n, "tokenizer.ggml.token_type: ", V.types.size(),
            " types for ", n, " tokens");
  check_id(V.bos, n, "tokenizer.ggml.bos_token_id");
  check_id(V.eos, n, "tokenizer.ggml.eos_token_id");
  check_id(V.unk, n, "tokenizer.ggml.unknown_token_id");
  check_id(V.pad, n, "tokenizer.ggml.padding_token_id");
  check_id(V.eot, n, "tokenizer.ggml.eot_token_id");
  check_id(V.eom, n, "tokenizer.ggml.eom_token_id");
  ORK_CHECK(!V.add_bos || V.bos >= 0,
            "tokenizer.ggml.add_bos_token is true but tokenizer.ggml.bos_token_id is not set");
  ORK_CHECK(!V.add_eos || V.eos >= 0,
            "tokenizer.ggml.add_eos_token is true but tokenizer.ggml.eos_token_id is not set");

  // Types: values outside the enum behave as undefined (never produced, decode to "").
  types_.assign(n, TokenType::kNormal);
  for (size_t i = 0; i < V.types.size(); ++i) {
    const int32_t t = V.types[i];
    types_[i] = (t >= 0 && t <= 6) ? static_cast<TokenType>(t) : TokenType::kUndefined;
  }

  // Text → id. Empty texts (llama.cpp renames them "[EMPTY_i]") are left out of the lookup.
  token_to_id_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const std::string& t = V.tokens[i];
    if (t.empty()) continue;
    const auto [it, inserted] = token_to_id_.emplace(t, static_cast<int32_t>(i));
    ORK_CHECK(inserted, "tokenizer.ggml.tokens: duplicate token ", quote(t), " at ids ", it->second,
              " and ", i);
  }

  // End of generation.
  eog_.assign(n, 0);
  for (int32_t id : {V.eos, V.eot, V.eom}) {
    if (id >= 0) eog_[id] = 1;
  }
  for (const char* text : kEogTexts) {
    const int32_t id = find_token(text);
    if (id < 0) continue;
    eog_[id] = 1;
    if (types_[id] != TokenType::kControl) {  // llama.cpp: "control-looking token ... overridden"
      log::debug("tokenizer: token ", id, " ", quote(text), " ends generation; treating it as control");
      types_[id] = TokenType::kControl;
    }
  }
  const auto is_eog = [&](const char* text) {
    const int32_t id = find_token(text);
    return id >= 0 && eog_[id] != 0 ? id : -1;
  };
  // o200k_harmony (gpt-oss): with <|return|> and <|call|>, <|end|> ends a message, not generation.
  if (const int32_t end = is_eog("<|end|>"); end >= 0 && is_eog("<|return|>") >= 0 && is_eog("<|call|>") >= 0) {
    eog_[end] = 0;
    types_[end] = TokenType::kUserDefined;
  }
  // Gemma 4 (it has <|tool_response>): </s> is text there.
  if (const int32_t s = is_eog("</s>"); s >= 0 && is_eog("<|tool_response>") >= 0 && s != V.eos) eog_[s] = 0;

  // Special tokens, longest first (ties by id), for the partition before tokenizing.
  for (size_t i = 0; i < n; ++i) {
    const TokenType t = types_[i];
    if ((t == TokenType::kControl || t == TokenType::kUserDefined || t == TokenType::kUnknown) &&
        !V.tokens[i].empty()) {
      specials_.push_back(static_cast<int32_t>(i));
    }
  }
  std::stable_sort(specials_.begin(), specials_.end(), [&](int32_t a, int32_t b) {
    return V.tokens[a].size() > V.tokens[b].size();
  });

  // Byte fallback table (SPM): "<0xNN>", else the 1-byte token (llama.cpp byte_to_token).
  byte_token_.fill(-1);
  if (spm_) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) {
      const std::string name{'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
      int32_t id = find_token(name);
      if (id < 0) id = find_token(std::string(1, static_cast<char>(b)));
      byte_token_[b] = id;
    }
  }

  // Decoded pieces.
  pieces_.resize(n);
  hidden_.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const std::string& text = V.tokens[i];
    switch (types_[i]) {
      case TokenType::kControl:
      case TokenType::kUnknown:
        pieces_[i] = text;
        hidden_[i] = 1;
        break;
      case TokenType::kUserDefined:
        pieces_[i] = text;
        break;
      case TokenType::kByte:
        if (const int b = parse_byte_token(text); b >= 0) {
          pieces_[i] = std::string(1, static_cast<char>(b));
          break;
        }
        [[fallthrough]];  // a byte-typed token that is not "<0xNN>": decode it as normal text
      case TokenType::kNormal:
        pieces_[i] = spm_ ? replace_all(text, kSpmSpace, " ") : byte_unicode::decode(text);
        break;
      case TokenType::kUnused:
      case TokenType::kUndefined:
        break;  // "" (llama.cpp token_to_piece writes nothing for these)
    }
  }

  if (!spm_) {
    build_merges();
    pretok_ = std::make_unique<PreTokenizer>(V.pre);
  }
}

int32_t Tokenizer::find_token(std::string_view text) const {
  const auto it = token_to_id_.find(std::string(text));
  return it == token_to_id_.end() ? -1 : it->second;
}

TokenType Tokenizer::token_type(int32_t id) const {
  ORK_CHECK(id >= 0 && id < n_vocab(), "token id ", id, " is outside the vocabulary [0, ",
            n_vocab(), ")");
  return types_[id];
}

bool Tokenizer::is_eog(int32_t id) const { return id >= 0 && id < n_vocab() && eog_[id] != 0; }

std::vector<Tokenizer::Fragment> Tokenizer::partition(std::string_view text,
                                                      bool parse_special) const {
  std::vector<Fragment> frags;
  if (text.empty()) return frags;
  frags.push_back({-1, 0, text.size()});
  std::vector<Fragment> next;
  for (const int32_t sid : specials_) {
    if (!parse_special && types_[sid] != TokenType::kUserDefined) continue;
    const std::string& needle = vocab_.tokens[sid];
    bool found = false;
    next.clear();
    for (const Fragment& f : frags) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      size_t cur = f.begin;
      while (true) {
        const size_t p = text.substr(0, f.end).find(needle, cur);
        if (p == std::string_view::npos) break;
        found = true;
        if (p > cur) next.push_back({-1, cur, p});
        next.push_back({sid, p, p + needle.size()});
        cur = p + needle.size();
      }
      if (cur < f.end) next.push_back({-1, cur, f.end});
    }
    if (found) frags.swap(next);
  }
  return frags;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos, bool parse_special,
                                       bool add_eos) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 2);
  if (add_bos) {
    ORK_CHECK(vocab_.bos >= 0, "tokenizer: BOS requested but tokenizer.ggml.bos_token_id is not set");
    out.push_back(vocab_.bos);
  }
  // SPM adds the space prefix to the text at the start and after each special token (llama.cpp).
  bool prev_special = true;
  for (const Fragment& f : partition(text, parse_special)) {
    if (f.token >= 0) {
      out.push_back(f.token);
      prev_special = true;
      continue;
    }
    const std::string_view raw = text.substr(f.begin, f.end - f.begin);
    if (spm_) {
      std::string s;
      if (vocab_.add_space_prefix && prev_special) s += ' ';
      s.append(raw);
      encode_spm(replace_all(s, " ", kSpmSpace), out);
    } else {
      encode_bpe(raw, out);
    }
    prev_special = false;
  }
  if (add_eos) {
    ORK_CHECK(vocab_.eos >= 0, "tokenizer: EOS requested but tokenizer.ggml.eos_token_id is not set");
    out.push_back(vocab_.eos);
  }
  return out;
}

std::string Tokenizer::decode_token(int32_t id, bool render_special) const {
  ORK_CHECK(id >= 0 && id < n_vocab(), "decode: token id ", id, " is outside the vocabulary [0, ",
            n_vocab(), ")");
  if (hidden_[id] && !render_special) return {};
  return pieces_[id];
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool render_special) const {
  std::string out;
  bool strip = spm_ && vocab_.add_space_prefix;
  for (const int32_t id : ids) {
    ORK_CHECK(id >= 0 && id < n_vocab(), "decode: token id ", id,
              " is outside the vocabulary [0, ", n_vocab(), ")");
    if (hidden_[id] && !render_special) continue;
    const std::string& p = pieces_[id];
    if (p.empty()) continue;
    if (strip) {
      strip = false;
      const TokenType t = types_[id];
      if ((t == TokenType::kNormal || t == TokenType::kByte) && p[0] == ' ') {
        out.append(p, 1, std::string::npos);
        continue;
      }
    }
    out += p;
  }
  return out;
}

}  // namespace ork::model
