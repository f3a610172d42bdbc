// Byte-level BPE ("gpt2") encoding: pre-tokenize, map bytes through the GPT-2 table, merge by rank
// (llama.cpp llm_tokenizer_bpe_session), written from its description in docs/tokenizer.md.
#include <algorithm>
#include <limits>
#include <queue>

#include "core/error.h"
#include "core/log.h"
#include "core/quote.h"
#include "model/tokenizer.h"
#include "model/tokenizer_unicode.h"

namespace ork::model {
namespace {

uint64_t pair_key(int32_t l, int32_t r) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
}

struct Symbol {
  size_t begin, n;  // bytes of the mapped word; n = 0 once merged into the left neighbour
  int32_t id;       // token id of the text, or -1
  int prev, next;
};

struct Bigram {
  int32_t rank;
  int left, right;
  size_t left_n, right_n;  // sizes when queued; stale when either changed
  int32_t merged;
};

// Lowest rank first; on equal ranks the leftmost pair first.
struct Lower {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

}  // namespace

void Tokenizer::build_merges() {
  const std::vector<std::string>& merges = vocab_.merges;
  ORK_CHECK(merges.size() <= static_cast<size_t>(std::numeric_limits<int32_t>::max()),
            "tokenizer.ggml.merges: too many merges (", merges.size(), ")");
  merges_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const std::string& m = merges[i];
    // Split at the first space after the first byte (llama.cpp: word.find(' ', 1)).
    const size_t sp = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
    ORK_CHECK(sp != std::string::npos && sp + 1 < m.size(), "tokenizer.ggml.merges[", i, "] ", quote(m),
              ": expected two tokens separated by a space");
    const std::string left = m.substr(0, sp), right = m.substr(sp + 1);
    const int32_t l = find_token(left), r = find_token(right), merged = find_token(left + right);
    ORK_CHECK(l >= 0, "tokenizer.ggml.merges[", i, "] ", quote(m), ": ", quote(left), " is not a token");
    ORK_CHECK(r >= 0, "tokenizer.ggml.merges[", i, "] ", quote(m), ": ", quote(right), " is not a token");
    ORK_CHECK(merged >= 0, "tokenizer.ggml.merges[", i, "] ", quote(m), ": the result ", quote(left + right),
              " is not a token");
    merges_.try_emplace(pair_key(l, r), static_cast<int32_t>(i), merged);  // first rank wins
  }
}

void Tokenizer::encode_bpe(std::string_view text, std::vector<int32_t>& out) const {
  // Invalid UTF-8 bytes become U+FFFD before the regex (as in llama.cpp's unicode_cpts_from_utf8).
  const std::string clean = utf8::sanitize(text);
  std::vector<std::string_view> words;
  pretok_->split(clean, words);

  std::string mapped;
  std::vector<Symbol> sym;
  for (const std::string_view word : words) {
    mapped.clear();
    byte_unicode::encode(word, mapped);
    const std::string_view w = mapped;
    if (pretok_->spec().ignore_merges) {
      if (const int32_t id = find_token(w); id >= 0) {
        out.push_back(id);
        continue;
      }
    }
    sym.clear();
    for (size_t off = 0; off < w.size();) {
      const size_t len = std::min(utf8::len_from_lead(static_cast<uint8_t>(w[off])), w.size() - off);
      const int i = static_cast<int>(sym.size());
      sym.push_back({off, len, find_token(w.substr(off, len)), i - 1,
                     off + len == w.size() ? -1 : i + 1});
      off += len;
    }

    std::priority_queue<Bigram, std::vector<Bigram>, Lower> queue;
    const auto try_add = [&](int l, int r) {
      if (l < 0 || r < 0 || sym[l].id < 0 || sym[r].id < 0) return;
      const auto it = merges_.find(pair_key(sym[l].id, sym[r].id));
      if (it == merges_.end()) return;
      queue.push({it->second.first, l, r, sym[l].n, sym[r].n, it->second.second});
    };
    for (int i = 1; i < static_cast<int>(sym.size()); ++i) try_add(i - 1, i);

    while (!queue.empty()) {
      const Bigram bg = queue.top();
      queue.pop();
      Symbol& l = sym[bg.left];
      Symbol& r = sym[bg.right];
      if (l.n == 0 || r.n == 0 || l.n != bg.left_n || r.n != bg.right_n) continue;  // stale
      l.n += r.n;
      l.id = bg.merged;
      r.n = 0;
      l.next = r.next;
      if (r.next >= 0) sym[r.next].prev = bg.left;
      try_add(l.prev, bg.left);
      try_add(bg.left, l.next);
    }

    for (int i = 0; i != -1; i = sym[i].next) {
      if (sym[i].id >= 0) {
        out.push_back(sym[i].id);
      } else if (vocab_.unk >= 0) {  // a byte whose mapped character is not a token
        out.push_back(vocab_.unk);
      } else {  // llama.cpp drops it too
        log::debug("tokenizer: dropping ", quote(w.substr(sym[i].begin, sym[i].n)),
                   ": not a token and no unknown token");
      }
    }
  }
}

}  // namespace ork::model
