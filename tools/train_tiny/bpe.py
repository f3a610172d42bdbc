"""Byte-level BPE as ork (and llama.cpp) apply it for tokenizer.ggml.model = "gpt2" with
tokenizer.ggml.pre = "llama-bpe": the text is split into words by the LLAMA3 regex (the same
pattern as ork's src/model/tokenizer_pretok.cpp, see docs/tokenizer.md), each word's bytes are
mapped through GPT-2's byte-to-unicode table, a word that is itself a token is emitted whole
("ignore_merges"), otherwise merges are applied lowest rank first, leftmost first among equal ranks.

The vocabulary: ids 0..255 are the 256 bytes in byte order (as mapped characters), then one token
per learned merge in rank order, then the special tokens.
"""
import collections

import regex

LLAMA3_PATTERN = (
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_SPLIT = regex.compile(LLAMA3_PATTERN)


def _byte_to_unicode():
    """GPT-2's table: printable bytes keep their code point, the other 68 get 256, 257, ... in order."""
    keep = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


BYTE_TO_UNICODE = _byte_to_unicode()


def pre_split(text):
    """Words of `text` as mapped strings (their concatenation maps back to the text)."""
    return ["".join(BYTE_TO_UNICODE[b] for b in w.encode("utf-8")) for w in _SPLIT.findall(text)]


def train(text, n_new_tokens):
    """Learns merges over the words of `text` until they made n_new_tokens distinct new tokens (or
    no pair occurs twice). Each step merges the most frequent adjacent pair (ties: the
    lexicographically smallest pair). Two merges may give the same text ("a"+"bc", "ab"+"c"); both
    are kept as merges, the text is one token. Returns [(left, right), ...] in rank order."""
    counts = collections.Counter(pre_split(text))
    words = [list(w) for w in counts]
    freqs = list(counts.values())
    pair_count = collections.Counter()
    where = collections.defaultdict(set)  # pair -> indices of words containing it
    for i, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pair_count[(a, b)] += freqs[i]
            where[(a, b)].add(i)
    merges, made = [], set()
    while len(made) < n_new_tokens and pair_count:
        best = min(pair_count.items(), key=lambda kv: (-kv[1], kv[0]))
        if best[1] < 2:
            break
        pair = best[0]
        merges.append(pair)
        joined = pair[0] + pair[1]
        made.add(joined)
        for i in sorted(where.pop(pair, ())):
            w, f = words[i], freqs[i]
            for a, b in zip(w, w[1:]):
                pair_count[(a, b)] -= f
                if pair_count[(a, b)] <= 0:
                    del pair_count[(a, b)]
            out, j = [], 0
            while j < len(w):
                if j + 1 < len(w) and w[j] == pair[0] and w[j + 1] == pair[1]:
                    out.append(joined)
                    j += 2
                else:
                    out.append(w[j])
                    j += 1
            words[i] = out
            for a, b in zip(out, out[1:]):
                pair_count[(a, b)] += f
                where[(a, b)].add(i)
        pair_count.pop(pair, None)
    return merges


class Tokenizer:
    def __init__(self, merges, specials):
        self.tokens = [BYTE_TO_UNICODE[b] for b in range(256)]
        for a, b in merges:
            if a + b not in self.tokens[256:]:
                self.tokens.append(a + b)
        self.tokens += list(specials)
        self.merges = merges
        self.rank = {}
        for r, pair in enumerate(merges):
            self.rank.setdefault(pair, r)
        self.id = {t: i for i, t in enumerate(self.tokens)}
        if len(self.id) != len(self.tokens):
            raise ValueError("duplicate token texts")
        self._cache = {}

    def _encode_word(self, word):
        if word in self.id:  # ignore_merges
            return [self.id[word]]
        syms = list(word)
        while len(syms) > 1:
            best, at = None, -1
            for j in range(len(syms) - 1):
                r = self.rank.get((syms[j], syms[j + 1]))
                if r is not None and (best is None or r < best):
                    best, at = r, j
            if best is None:
                break
            syms[at:at + 2] = [syms[at] + syms[at + 1]]
        return [self.id[s] for s in syms]

    def encode(self, text):
        ids = []
        for w in pre_split(text):
            got = self._cache.get(w)
            if got is None:
                got = self._encode_word(w)
                self._cache[w] = got
            ids.extend(got)
        return ids
