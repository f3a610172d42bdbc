// model::Tokenizer — text ↔ token ids for GGUF vocabularies, reproducing llama.cpp's tokenizers:
// "llama" (SentencePiece BPE: score-ordered merges, byte fallback) and "gpt2" (byte-level BPE:
// regex pre-tokenizer per tokenizer.ggml.pre, rank-ordered merges). docs/tokenizer.md describes both
// algorithms, the regexes with their sources, the BOS/EOS rules and the invalid-UTF-8 policy.
//
// Thread-safety: all const methods may be called concurrently (no mutable state after construction).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/tokenizer_pretok.h"
#include "model/tokenizer_vocab.h"

namespace ork::model {

class Tokenizer {
 public:
  // Validates `v` and builds the lookup tables, merge ranks and compiled regexes. Throws ork::Error
  // naming the GGUF key at fault: unsupported model, empty or duplicate tokens, scores/token_type
  // length ≠ tokens length, a special id out of range, add_bos/add_eos without the id, a merge that
  // is malformed or names (or produces) a string that is not a token.
  explicit Tokenizer(Vocab v);

  // Text → ids. `add_bos` prepends BOS (callers usually pass vocab().add_bos); `add_eos` appends EOS
  // (vocab().add_eos gives llama.cpp's add_special behaviour). `parse_special`: texts of control,
  // unknown-type and user-defined tokens in `text` become their ids; without it only user-defined
  // tokens do (as llama.cpp and HF tokenizers do). Throws ork::Error when BOS/EOS is asked for but
  // the vocabulary has none. Never throws on text content: invalid UTF-8 is handled as documented.
  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special,
                              bool add_eos = false) const;

  // One token → its bytes: SPM '▁' → ' ' and <0xNN> → the byte; gpt2 byte-mapped characters → raw
  // bytes; control and unknown-type tokens → "" unless `render_special` (then their text);
  // user-defined tokens → their text; unused tokens → "". A piece may be part of a UTF-8 character.
  // Throws ork::Error when `id` is outside [0, n_vocab()).
  std::string decode_token(int32_t id, bool render_special = false) const;
  // Concatenation of decode_token(); for SPM with add_space_prefix, the one leading space that
  // encode() added is removed from the first visible piece (when that piece is a normal token), so
  // decode(encode(x, bos, false)) == x for valid UTF-8 x.
  std::string decode(const std::vector<int32_t>& ids, bool render_special = false) const;

  int32_t n_vocab() const { return static_cast<int32_t>(vocab_.tokens.size()); }
  int32_t bos() const { return vocab_.bos; }
  int32_t eos() const { return vocab_.eos; }
  // End of generation: eos, eot, eom and the tokens llama.cpp recognizes by text
  // (<|eot_id|>, <|im_end|>, <|endoftext|>, <|end|>, <end_of_turn>, ...). False for ids out of range.
  bool is_eog(int32_t id) const;
  // Type after construction-time fixes (end-of-generation texts are forced to control).
  TokenType token_type(int32_t id) const;
  // The id of a token text, or -1.
  int32_t find_token(std::string_view text) const;
  // The resolved pre-tokenizer (gpt2 only; nullptr for SPM).
  const PreTokenizer* pre_tokenizer() const { return pretok_.get(); }
  const Vocab& vocab() const { return vocab_; }

 private:
  struct Fragment {
    int32_t token;      // ≥ 0: a special token; -1: raw text [begin, end)
    size_t begin, end;
  };
  std::vector<Fragment> partition(std::string_view text, bool parse_special) const;
  void encode_spm(std::string_view text, std::vector<int32_t>& out) const;  // tokenizer_spm.cpp
  void encode_bpe(std::string_view text, std::vector<int32_t>& out) const;  // tokenizer_bpe.cpp
  void build_merges();                                                      // tokenizer_bpe.cpp

  Vocab vocab_;
  bool spm_ = false;
  std::vector<TokenType> types_;
  std::unordered_map<std::string, int32_t> token_to_id_;
  std::vector<int32_t> specials_;        // control/unknown/user-defined ids, longest text first
  std::vector<std::string> pieces_;      // decoded bytes of each token
  std::vector<uint8_t> hidden_;          // 1: piece shown only with render_special
  std::vector<uint8_t> eog_;             // 1: ends generation
  std::array<int32_t, 256> byte_token_;  // SPM: <0xNN> (or the 1-byte token) per byte; -1 none
  // gpt2: (left id << 32 | right id) → {rank, merged id}
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges_;
  std::unique_ptr<PreTokenizer> pretok_;
};

}  // namespace ork::model
