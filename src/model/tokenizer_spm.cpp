// SentencePiece ("llama") encoding: the score-ordered bigram merge of llama.cpp's llm_tokenizer_spm
// (itself a port of SentencePiece's BPE model), written from its description in docs/tokenizer.md.
#include <algorithm>
#include <limits>
#include <queue>

#include "core/error.h"
#include "core/quote.h"
#include "model/tokenizer.h"
#include "model/tokenizer_unicode.h"

namespace ork::model {
namespace {

struct Symbol {
  size_t begin;  // byte offset in the text
  size_t n;      // bytes; 0 once merged into its left neighbour
  int prev, next;
};

struct Bigram {
  float score;
  int left, right;
  size_t size;  // bytes of left + right when queued; stale when that changed
};

// Highest score first; on equal scores the leftmost pair first.
struct Lower {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

void Tokenizer::encode_spm(std::string_view text, std::vector<int32_t>& out) const {
  if (text.empty()) return;
  // One symbol per UTF-8 character, by lead byte only (invalid bytes become 1-byte symbols).
  std::vector<Symbol> sym;
  sym.reserve(text.size());
  for (size_t off = 0; off < text.size();) {
    const size_t len =
        std::min(utf8::len_from_lead(static_cast<uint8_t>(text[off])), text.size() - off);
    const int i = static_cast<int>(sym.size());
    sym.push_back({off, len, i - 1, off + len == text.size() ? -1 : i + 1});
    off += len;
  }

  std::priority_queue<Bigram, std::vector<Bigram>, Lower> queue;
  const auto try_add = [&](int l, int r) {
    if (l < 0 || r < 0) return;
    const size_t size = sym[l].n + sym[r].n;
    const int32_t id = find_token(text.substr(sym[l].begin, size));
    if (id < 0) return;
    queue.push({vocab_.scores.empty() ? 0.0f : vocab_.scores[id], l, r, size});
  };
  for (int i = 1; i < static_cast<int>(sym.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const Bigram bg = queue.top();
    queue.pop();
    Symbol& l = sym[bg.left];
    Symbol& r = sym[bg.right];
    if (l.n == 0 || r.n == 0 || l.n + r.n != bg.size) continue;  // stale
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = bg.left;
    try_add(l.prev, bg.left);
    try_add(bg.left, l.next);
  }

  // Every merged symbol is a token; a single character that is not becomes its byte tokens, or one
  // unknown token when the vocabulary lacks a byte token for it.
  for (int i = 0; i != -1; i = sym[i].next) {
    const std::string_view piece = text.substr(sym[i].begin, sym[i].n);
    if (const int32_t id = find_token(piece); id >= 0) {
      out.push_back(id);
      continue;
    }
    bool all_bytes = true;
    for (char c : piece) all_bytes = all_bytes && byte_token_[static_cast<uint8_t>(c)] >= 0;
    if (all_bytes) {
      for (char c : piece) out.push_back(byte_token_[static_cast<uint8_t>(c)]);
    } else {
      ORK_CHECK(vocab_.unk >= 0, "tokenizer: cannot encode the bytes of ", quote(piece),
                ": the vocabulary has neither byte tokens <0xNN> nor an unknown token");
      out.push_back(vocab_.unk);
    }
  }
}

}  // namespace ork::model
