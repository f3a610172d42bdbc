#include "gen_model/vocab.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "core/quote.h"

namespace ork::gen {

namespace {

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += char(cp);
  } else if (cp < 0x800) {
    s += char(0xC0 | (cp >> 6));
    s += char(0x80 | (cp & 0x3F));
  } else {
    s += char(0xE0 | (cp >> 12));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  }
  return s;
}

const std::string kSpmSpace = "\xE2\x96\x81";  // U+2581 '▁'

// Byte-pair encoding trainer over words given as symbol sequences (with counts).
// Each step merges the most frequent adjacent pair (ties: the smallest pair of symbol ids, so the
// result is deterministic); stops after `max_new_symbols` new symbols or when no pair is left.
class BpeTrainer {
 public:
  // Registers a symbol; returns its id.
  int symbol(const std::string& text) {
    auto [it, inserted] = ids_.emplace(text, int(texts_.size()));
    if (inserted) texts_.push_back(text);
    return it->second;
  }
  void add_word(std::vector<int> symbols, int64_t count) { words_.push_back({std::move(symbols), count}); }
  const std::string& text(int id) const { return texts_[size_t(id)]; }
  int n_symbols() const { return int(texts_.size()); }

  struct Merge {
    int left, right, result;
  };
  // Runs merges until `stop(n_new_symbols)` is true or no pair is left; returns them in order.
  template <typename Stop>
  std::vector<Merge> train(Stop stop) {
    std::vector<Merge> merges;
    int n_new = 0;
    while (!stop(n_new)) {
      std::unordered_map<uint64_t, int64_t> counts;
      for (const Word& w : words_) {
        for (size_t k = 0; k + 1 < w.symbols.size(); ++k) {
          counts[key(w.symbols[k], w.symbols[k + 1])] += w.count;
        }
      }
      if (counts.empty()) break;
      uint64_t best = 0;
      int64_t best_count = -1;
      for (const auto& [k, c] : counts) {
        if (c > best_count || (c == best_count && k < best)) {
          best = k;
          best_count = c;
        }
      }
      const int a = int(best >> 32), b = int(best & 0xffffffffu);
      const int before = n_symbols();
      const int r = symbol(texts_[size_t(a)] + texts_[size_t(b)]);
      if (n_symbols() > before) ++n_new;
      merges.push_back({a, b, r});
      for (Word& w : words_) {
        std::vector<int> out;
        out.reserve(w.symbols.size());
        for (size_t k = 0; k < w.symbols.size(); ++k) {
          if (k + 1 < w.symbols.size() && w.symbols[k] == a && w.symbols[k + 1] == b) {
            out.push_back(r);
            ++k;
          } else {
            out.push_back(w.symbols[k]);
          }
        }
        w.symbols = std::move(out);
      }
    }
    return merges;
  }

 private:
  static uint64_t key(int a, int b) { return uint64_t(uint32_t(a)) << 32 | uint32_t(b); }
  struct Word {
    std::vector<int> symbols;
    int64_t count;
  };
  std::unordered_map<std::string, int> ids_;
  std::vector<std::string> texts_;
  std::vector<Word> words_;
};

// Word → count, in a deterministic (sorted) order.
std::map<std::string, int64_t> count_words() {
  std::map<std::string, int64_t> counts;
  for (const std::string& w : split_words(corpus_text())) ++counts[w];
  return counts;
}

void push(Vocab& v, std::string text, int32_t type, float score) {
  v.tokens.push_back(std::move(text));
  v.types.push_back(type);
  if (v.model == "llama") v.scores.push_back(score);
}

Vocab make_gpt2(int n_vocab) {
  Vocab v;
  v.model = "gpt2";
  BpeTrainer bpe;
  for (int b = 0; b < 256; ++b) {
    bpe.symbol(gpt2_byte_text(uint8_t(b)));
    push(v, gpt2_byte_text(uint8_t(b)), kTokenNormal, 0.0f);
  }
  for (const auto& [word, count] : count_words()) {
    std::vector<int> syms;
    for (char c : word) syms.push_back(int(uint8_t(c)));  // symbol id = byte value
    bpe.add_word(std::move(syms), count);
  }
  const int budget = n_vocab - 2 - 256;
  const auto merges = bpe.train([&](int n_new) { return n_new >= budget; });
  for (const auto& m : merges) {
    v.merges.push_back(bpe.text(m.left) + " " + bpe.text(m.right));
  }
  for (int id = 256; id < bpe.n_symbols(); ++id) push(v, bpe.text(id), kTokenNormal, 0.0f);
  for (int k = 0; int(v.tokens.size()) < n_vocab - 2; ++k) {
    push(v, "<|reserved_special_token_" + std::to_string(k) + "|>", kTokenControl, 0.0f);
  }
  v.bos = int32_t(v.tokens.size());
  push(v, "<|begin_of_text|>", kTokenControl, 0.0f);
  v.eos = int32_t(v.tokens.size());
  push(v, "<|end_of_text|>", kTokenControl, 0.0f);
  return v;
}

// Splits a UTF-8 string into its characters (each a UTF-8 sequence).
std::vector<std::string> utf8_chars(const std::string& s) {
  std::vector<std::string> out;
  for (size_t k = 0; k < s.size();) {
    const uint8_t c = uint8_t(s[k]);
    const size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    out.push_back(s.substr(k, len));
    k += len;
  }
  return out;
}

Vocab make_llama(int n_vocab) {
  Vocab v;
  v.model = "llama";
  v.unk = 0;
  push(v, "<unk>", kTokenUnknown, 0.0f);
  v.bos = 1;
  push(v, "<s>", kTokenControl, 0.0f);
  v.eos = 2;
  push(v, "</s>", kTokenControl, 0.0f);
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    push(v, buf, kTokenByte, 0.0f);
  }

  // Words as SentencePiece sees them: a leading space becomes '▁'; whitespace-only words (newlines)
  // are left to the byte tokens.
  BpeTrainer bpe;
  std::map<std::string, int64_t> char_counts;
  std::vector<std::pair<std::vector<std::string>, int64_t>> words;
  for (const auto& [word, count] : count_words()) {
    if (word.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    const std::string w = word[0] == ' ' ? kSpmSpace + word.substr(1) : word;
    std::vector<std::string> chars = utf8_chars(w);
    for (const std::string& c : chars) char_counts[c] += count;
    words.push_back({std::move(chars), count});
  }
  // Character pieces, most frequent first (ties by text).
  std::vector<std::pair<int64_t, std::string>> by_freq;
  for (const auto& [c, n] : char_counts) by_freq.push_back({-n, c});
  std::sort(by_freq.begin(), by_freq.end());
  for (const auto& [n, c] : by_freq) bpe.symbol(c);
  for (auto& [chars, count] : words) {
    std::vector<int> syms;
    for (const std::string& c : chars) syms.push_back(bpe.symbol(c));
    bpe.add_word(std::move(syms), count);
  }
  const int n_chars = bpe.n_symbols();
  const int budget = n_vocab - int(v.tokens.size()) - n_chars;
  const auto merges = bpe.train([&](int n_new) { return n_new >= budget; });
  // Scores: merged pieces -rank (rank = order of the merge that first produced them); characters
  // below every merged piece.
  const int n_pieces = std::max(0, std::min(budget, bpe.n_symbols() - n_chars));
  std::vector<float> piece_score(size_t(bpe.n_symbols()), 0.0f);
  std::vector<bool> scored(size_t(bpe.n_symbols()), false);
  int rank = 0;
  for (const auto& m : merges) {
    if (!scored[size_t(m.result)]) {
      piece_score[size_t(m.result)] = -float(rank);
      scored[size_t(m.result)] = true;
    }
    ++rank;
  }
  for (int id = 0; id < n_chars && int(v.tokens.size()) < n_vocab; ++id) {
    push(v, bpe.text(id), kTokenNormal, -float(merges.size() + size_t(id)));
  }
  for (int id = n_chars; id < n_chars + n_pieces; ++id) {
    push(v, bpe.text(id), kTokenNormal, piece_score[size_t(id)]);
  }
  for (int k = 0; int(v.tokens.size()) < n_vocab; ++k) {
    push(v, "<unused" + std::to_string(k) + ">", kTokenControl, 0.0f);
  }
  return v;
}

}  // namespace

std::string gpt2_byte_text(uint8_t b) {
  // Printable bytes stand for themselves; the others map, in order, to U+0100 onwards.
  auto printable = [](int c) {
    return (c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF);
  };
  if (printable(b)) return utf8(b);
  uint32_t n = 0;
  for (int c = 0; c < b; ++c) {
    if (!printable(c)) ++n;
  }
  return utf8(256 + n);
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> out;
  size_t k = 0;
  while (k < text.size()) {
    const size_t start = k;
    const bool space = text[k] == ' ' && k + 1 < text.size() && !is_space(text[k + 1]) &&
                       !is_digit(text[k + 1]);
    if (space) ++k;
    const char c = text[k];
    if (is_letter(c)) {
      while (k < text.size() && is_letter(text[k])) ++k;
    } else if (is_digit(c) && !space) {
      while (k < text.size() && is_digit(text[k]) && k - start < 3) ++k;
    } else if (is_space(c)) {
      while (k < text.size() && is_space(text[k])) ++k;
    } else {
      while (k < text.size() && !is_letter(text[k]) && !is_digit(text[k]) && !is_space(text[k])) ++k;
    }
    out.emplace_back(text.substr(start, k - start));
  }
  return out;
}

Vocab make_vocab(std::string_view tokenizer, int n_vocab) {
  if (tokenizer == "gpt2") {
    if (n_vocab < kMinVocabGpt2) fail("gen_model: n_vocab ", n_vocab, " is below the gpt2 minimum ", kMinVocabGpt2);
    return make_gpt2(n_vocab);
  }
  if (tokenizer == "llama") {
    if (n_vocab < kMinVocabLlama) fail("gen_model: n_vocab ", n_vocab, " is below the llama minimum ", kMinVocabLlama);
    return make_llama(n_vocab);
  }
  fail("gen_model: unknown tokenizer ", quote(tokenizer), " (gpt2, llama)");
}

}  // namespace ork::gen
