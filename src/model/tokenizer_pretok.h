// model::PreTokenizer — splits text into words before byte-level BPE, with the regexes llama.cpp
// uses for each tokenizer.ggml.pre value (src/llama-vocab.cpp, llm_tokenizer_bpe), matched by PCRE2
// (UTF + UCP: \s, \p{L}, \p{N} are Unicode classes). See docs/tokenizer.md for the table.
//
// Thread-safety: split() is const and may be called concurrently (compiled patterns are shared
// read-only; each call allocates its own match data).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ork::model {

// What a pre-tokenizer name resolves to.
struct PreTokenizerSpec {
  std::string family;                // "llama3", "qwen2", "gpt2", "starcoder", "falcon", "default", ...
  std::vector<std::string> regexes;  // applied in order; each one re-splits every piece
  bool ignore_merges = false;        // a word that is itself a token is emitted whole (llama3)
  bool add_bos = false;              // llama.cpp's default for tokenizer.ggml.add_bos_token
};

// The spec for `pre` ("" → "default"), or nullptr when the name is not known.
const PreTokenizerSpec* find_pre_tokenizer(std::string_view pre);

class PreTokenizer {
 public:
  // Resolves `pre`. Throws ork::Error naming it when it is not known (as llama.cpp refuses such
  // files; Model::load's LoadOptions::tokenizer_pre, --tokenizer-pre, forces a known one instead).
  explicit PreTokenizer(std::string_view pre);
  ~PreTokenizer();
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Appends the words of `text` to `out` (views into `text`; their concatenation is `text`).
  // Each regex splits every current piece into its matches and the unmatched stretches between
  // them (kept as pieces, as llama.cpp's unicode_regex_split does). Precondition: `text` is valid
  // UTF-8 (see utf8::sanitize) — it is matched with PCRE2_NO_UTF_CHECK.
  void split(std::string_view text, std::vector<std::string_view>& out) const;

  const PreTokenizerSpec& spec() const { return spec_; }

 private:
  struct Compiled;
  PreTokenizerSpec spec_;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace ork::model
