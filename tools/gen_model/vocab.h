// Deterministic tokenizer vocabularies for generated models (no files read).
//
// "gpt2" (byte-level BPE, as llama 3 and qwen2 use): the 256 bytes through GPT-2's byte-to-unicode
// map, then the merges a small BPE trainer learns over corpus_text() (words keep their leading
// space, mapped to 'Ġ'), then reserved control tokens when the corpus runs out of merges, then the
// specials "<|begin_of_text|>" (bos) and "<|end_of_text|>" (eos).
// "llama" (SentencePiece style): "<unk>", "<s>" (bos), "</s>" (eos), the byte tokens "<0x00>" ..
// "<0xFF>", the corpus's characters, then the trainer's merged pieces (spaces as '▁', U+2581), with
// score -rank so earlier merges score higher; reserved control tokens fill up to n_vocab.
// Guarantees: token texts are unique; every merge joins two existing tokens and its result is a
// token; the same arguments give the same vocabulary. Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ork::gen {

// tokenizer.ggml.token_type values (llama.cpp's llama_token_type).
constexpr int32_t kTokenNormal = 1;
constexpr int32_t kTokenUnknown = 2;
constexpr int32_t kTokenControl = 3;
constexpr int32_t kTokenByte = 6;

struct Vocab {
  std::string model;                // tokenizer.ggml.model: "gpt2" | "llama"
  std::vector<std::string> tokens;  // UTF-8 token texts, index = token id
  std::vector<int32_t> types;       // kToken* per token
  std::vector<float> scores;        // per token ("llama"); empty for "gpt2"
  std::vector<std::string> merges;  // "left right", best first ("gpt2"); empty for "llama"
  int32_t bos = -1;
  int32_t eos = -1;
  int32_t unk = -1;                 // "llama" only
};

// Smallest n_vocab each tokenizer accepts (bytes + specials).
constexpr int kMinVocabGpt2 = 256 + 2;
constexpr int kMinVocabLlama = 3 + 256 + 1;

// Builds the vocabulary of exactly n_vocab tokens. Throws ork::Error for an unknown tokenizer or an
// n_vocab below the minimum.
Vocab make_vocab(std::string_view tokenizer, int n_vocab);

// GPT-2's byte-to-unicode map: the UTF-8 text of the code point that stands for byte `b`.
std::string gpt2_byte_text(uint8_t b);

// The built-in English training text (a few KB of ASCII).
std::string_view corpus_text();

// Splits text into pre-tokenizer words: an optional single leading space followed by a run of
// letters, a run of at most 3 digits, or a run of other non-space characters; other whitespace runs
// are words of their own. Concatenating the words gives back the text.
std::vector<std::string> split_words(std::string_view text);

}  // namespace ork::gen
