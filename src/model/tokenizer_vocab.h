// model::Vocab — the tokenizer vocabulary as the GGUF metadata states it (plain data), and
// read_vocab(), which fills it from a gguf::File with llama.cpp's defaults for absent keys.
//
// Key names (GGUF spec / llama.cpp llama-arch.cpp):
//   tokenizer.ggml.model, .pre, .tokens, .scores, .token_type, .merges, .bos_token_id,
//   .eos_token_id, .unknown_token_id, .padding_token_id, .eot_token_id, .eom_token_id,
//   .add_bos_token, .add_eos_token, .add_space_prefix
// Validation of the contents (lengths, ids in range, merges naming tokens) happens in the
// Tokenizer constructor, so vocabularies built in memory get the same checks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ork::gguf {
class File;
}

namespace ork::model {

// tokenizer.ggml.token_type values (llama.cpp llama_token_type).
enum class TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

struct Vocab {
  std::string model;                 // tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2" (byte-level BPE)
  std::string pre;                   // tokenizer.ggml.pre ("" → "default"); gpt2 only
  std::vector<std::string> tokens;   // tokenizer.ggml.tokens; id = index
  std::vector<float> scores;         // tokenizer.ggml.scores; empty (all 0) or one per token
  std::vector<int32_t> types;        // tokenizer.ggml.token_type; empty (all normal) or one per token
  std::vector<std::string> merges;   // tokenizer.ggml.merges ("left right"), gpt2 only; index = rank
  int32_t bos = -1, eos = -1, unk = -1, pad = -1;  // *_token_id; -1 = none
  int32_t eot = -1, eom = -1;        // end-of-turn / end-of-message ids (also end generation)
  bool add_bos = true;               // read_vocab sets llama.cpp's default: see default_add_bos()
  bool add_eos = false;              // tokenizer.ggml.add_eos_token
  bool add_space_prefix = true;      // tokenizer.ggml.add_space_prefix (SPM only; ignored for gpt2)
};

// llama.cpp's default for tokenizer.ggml.add_bos_token when the key is absent: true for "llama"
// (SPM); for "gpt2" true only for the llama3 family of pre-tokenizers ("llama3", "llama-bpe",
// "llama-v3", "falcon3", ...), "tekken" and "chameleon"; false otherwise (qwen2, gpt-2, ...).
bool default_add_bos(std::string_view model, std::string_view pre);

// Reads the tokenizer.ggml.* keys of `f`. Throws ork::Error naming the file and key when a key is
// missing (model, tokens; merges for gpt2), has the wrong type, or an id does not fit int32.
// Absent special ids take llama.cpp's SPM defaults (bos 1, eos 2, unk 0, when within the vocabulary);
// absent flags take default_add_bos(), add_eos false, add_space_prefix (model == "llama").
Vocab read_vocab(const gguf::File& f);

}  // namespace ork::model
