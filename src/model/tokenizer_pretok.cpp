#include "model/tokenizer_pretok.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>

#include "core/error.h"
#include "core/log.h"
#include "core/quote.h"
#include "model/tokenizer_unicode.h"
#include "model/unicode_classes.h"
#include "model/tokenizer_vocab.h"

namespace ork::model {
namespace {

// The patterns of llama.cpp src/llama-vocab.cpp (llm_tokenizer_bpe constructor). llama.cpp writes the
// case-insensitive contractions "(?i:'s|...)" of the tokenizer.json originals as "'[sS]|..." because
// std::regex has no inline flags; the explicit form is kept here too, as PCRE2's caseless UTF mode
// would also fold 'ſ' (U+017F) and 'K' (U+212A) into 's' and 'k'.
constexpr const char* kLlama3 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr const char* kQwen2 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
// OpenAI GPT-2 encoder.py. llama.cpp lists it without the final "|\s+" but matches it with a
// hand-written splitter (unicode_regex_split_custom_gpt2) that does include the "\s+" branch.
constexpr const char* kGpt2 =
    R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re";

// Qwen3.5: qwen2 with combining marks (\p{M}) inside words and out of the punctuation runs.
constexpr const char* kQwen35 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
// Mistral Nemo (tekken), as llama.cpp rewrites tokenizer.json's \p{Lu}/\p{Ll} classes: "upper" is a
// letter that is not a-z, "lower" a letter that is not A-Z.
constexpr const char* kTekken =
    R"re([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
// DeepSeek LLM: the cased letters of llama.cpp's list (Latin, Greek, Cyrillic, Armenian, Georgian,
// Cherokee, ..., fullwidth, Deseret, Osage, Old Hungarian, Warang Citi, Adlam), written as code points.
constexpr const char* kDeepseekLetters =
    R"re(\s?[A-Za-z\x{b5}\x{c0}-\x{d6}\x{d8}-\x{f6}\x{f8}-\x{1ba}\x{1bc}-\x{1bf}\x{1c4}-\x{293}\x{295}-\x{2af}\x{370}-\x{373}\x{376}\x{377}\x{37b}-\x{37d}\x{37f}\x{386}\x{388}-\x{38a}\x{38c}\x{38e}-\x{3a1}\x{3a3}-\x{3f5}\x{3f7}-\x{481}\x{48a}-\x{52f}\x{531}-\x{556}\x{10a0}-\x{10c5}\x{13a0}-\x{13f5}\x{13f8}-\x{13fd}\x{1c90}-\x{1cba}\x{1cbd}-\x{1cbf}\x{1d00}-\x{1d2b}\x{1d6b}-\x{1d77}\x{1d79}-\x{1d9a}\x{1e00}-\x{1f15}\x{1f18}-\x{1f1d}\x{1f20}-\x{1f45}\x{1f48}-\x{1f4d}\x{1f50}-\x{1f57}\x{1f59}\x{1f5b}\x{1f5d}\x{1f5f}-\x{1f7d}\x{1f80}-\x{1fb4}\x{1fb6}-\x{1fbc}\x{1fbe}\x{1fc2}-\x{1fc4}\x{1fc6}-\x{1fcc}\x{1fd0}-\x{1fd3}\x{1fd6}-\x{1fdb}\x{1fe0}-\x{1fec}\x{1ff2}-\x{1ff4}\x{1ff6}-\x{1ffc}\x{2102}\x{2107}\x{210a}-\x{2113}\x{2115}\x{2119}-\x{211d}\x{2124}\x{2126}\x{2128}\x{212a}-\x{212d}\x{212f}-\x{2134}\x{2139}\x{213c}-\x{213f}\x{2145}-\x{2149}\x{214e}\x{2183}\x{2184}\x{2c00}-\x{2c7b}\x{2c7e}-\x{2ce4}\x{2ceb}-\x{2cee}\x{2cf2}\x{2cf3}\x{a640}-\x{a66d}\x{a680}-\x{a69b}\x{a722}-\x{a76f}\x{a771}-\x{a787}\x{a78b}-\x{a78e}\x{ab70}-\x{abbf}\x{fb00}-\x{fb06}\x{fb13}-\x{fb17}\x{ff21}-\x{ff3a}\x{ff41}-\x{ff5a}\x{10400}-\x{1044f}\x{104b0}-\x{104d3}\x{104d8}-\x{104fb}\x{10c80}-\x{10cb2}\x{10cc0}-\x{10cf2}\x{118a0}-\x{118df}\x{1e900}-\x{1e943}]+)re";
// CJK ideographs (U+4E00..U+9FA5), U+0800..U+4E00 and Hangul (U+AC00..U+D7FF), as llama.cpp lists them.
constexpr const char* kDeepseekCjk = R"re([\x{4e00}-\x{9fa5}\x{800}-\x{4e00}\x{ac00}-\x{d7ff}]+)re";

struct Entry {
  std::vector<const char*> names;
  PreTokenizerSpec spec;
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> t = {
      {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
        "jina-v5-nano"},
       {"llama3", {kLlama3}, true, true}},
      {{"smaug-bpe", "dbrx"}, {"llama3-regex", {kLlama3}, false, false}},
      {{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2", "hunyuan",
        "solar-open", "grok-2"},
       {"qwen2", {kQwen2}, false, false}},
      {{"gpt-2", "gpt2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de",
        "a.x-4.0", "mellum", "modern-bert", "exaone4", "mpt", "olmo", "jais", "trillion",
        "granite-docling", "jina-v1-en", "jina-v2-code", "roberta-bpe"},
       {"gpt2", {kGpt2}, false, false}},
      {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"},
       {"starcoder", {R"re(\p{N})re", kGpt2}, false, false}},
      {{"falcon"},
       {"falcon", {R"re([\p{P}\$\+<=>\^~\|`]+)re", kGpt2, R"re([0-9][0-9][0-9])re"}, false, false}},
      {{"qwen35"}, {"qwen35", {kQwen35}, false, false}},
      {{"tekken"}, {"tekken", {kTekken}, true, true}},
      // llama.cpp's "$" (std::regex: the end of the piece) is PCRE2's \z.
      {{"deepseek-llm"},
       {"deepseek-llm",
        {R"re([\r\n])re", kDeepseekLetters,
         R"re(\s?[!-/:-~\x{ff01}-\x{ff0f}\x{ff1a}-\x{ff5e}\x{2018}-\x{201f}\x{3000}-\x{3002}]+)re", R"re(\s+\z)re",
         kDeepseekCjk, R"re(\p{N}+)re"},
        false,
        false}},
      {{"deepseek-coder"},
       {"deepseek-coder", {R"re([\r\n])re", R"re(\s?\p{L}+)re", R"re(\s?\p{P}+)re", kDeepseekCjk, R"re(\p{N})re"}, false, false}},
      {{"", "default"},
       {"default",
        {R"re([\p{P}\$\+<=>\^~\|]+)re", kGpt2, R"re(\p{N}+)re", R"re([0-9][0-9][0-9])re"},
        false,
        false}},
  };
  return t;
}

}  // namespace

const PreTokenizerSpec* find_pre_tokenizer(std::string_view pre) {
  for (const Entry& e : table()) {
    for (const char* n : e.names) {
      if (pre == n) return &e.spec;
    }
  }
  return nullptr;
}

bool default_add_bos(std::string_view model, std::string_view pre) {
  if (model == "llama") return true;
  if (model != "gpt2") return false;
  if (pre == "tekken" || pre == "chameleon") return true;  // llama.cpp sets these too
  const PreTokenizerSpec* s = find_pre_tokenizer(pre);
  return s != nullptr && s->add_bos;
}

struct PreTokenizer::Compiled {
  std::vector<pcre2_code*> codes;
  ~Compiled() {
    for (pcre2_code* c : codes) pcre2_code_free(c);
  }
};

std::string known_pre_tokenizers() {
  std::string names;
  for (const Entry& e : table()) {
    for (const char* n : e.names) {
      if (*n != 0) names += (names.empty() ? "" : ", ") + std::string(n);
    }
  }
  return names;
}

PreTokenizer::PreTokenizer(std::string_view pre) : compiled_(std::make_unique<Compiled>()) {
  const PreTokenizerSpec* s = find_pre_tokenizer(pre);
  if (s == nullptr) {
    fail("tokenizer.ggml.pre ", quote(pre), " is not a pre-tokenizer ork knows; --tokenizer-pre NAME "
         "forces one (gpt2 is the GPT-2 regex; known: ", known_pre_tokenizers(), ")");
  }
  spec_ = *s;
  for (const std::string& original : spec_.regexes) {
    // llama.cpp's classes (Unicode 15.1), not PCRE2's own tables (unicode_classes.h).
    const std::string pattern = unicode::expand_classes(original);
    int err = 0;
    PCRE2_SIZE err_off = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_UCP, &err, &err_off, nullptr);
    if (code == nullptr) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      fail("pre-tokenizer ", quote(spec_.family), ": regex does not compile at offset ", err_off, " of its expanded form: ",
           reinterpret_cast<const char*>(msg), " (", original, ")");
    }
    // The expanded classes are long range lists, which PCRE2's interpreter scans one by one: JIT
    // where the library has one (a failure leaves the interpreter).
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    compiled_->codes.push_back(code);
  }
}

PreTokenizer::~PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& out) const {
  if (text.empty()) return;
  std::vector<std::string_view> pieces{text};
  std::vector<std::string_view> next;
  pcre2_match_data* md = pcre2_match_data_create(1, nullptr);
  if (md == nullptr) fail("pre-tokenizer: out of memory for PCRE2 match data");
  struct Free {
    pcre2_match_data* m;
    ~Free() { pcre2_match_data_free(m); }
  } guard{md};

  for (pcre2_code* code : compiled_->codes) {
    next.clear();
    for (std::string_view seg : pieces) {
      // Each piece is its own subject: lookaheads do not see past its end (as in llama.cpp).
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(seg.data());
      size_t pos = 0;   // where the next match attempt starts
      size_t done = 0;  // end of what has been emitted
      while (pos < seg.size()) {
        int rc = pcre2_match(code, subject, seg.size(), pos, PCRE2_NO_UTF_CHECK, md, nullptr);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT)  // the JIT's default stack is small: interpret instead
          rc = pcre2_match(code, subject, seg.size(), pos, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md, nullptr);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
          PCRE2_UCHAR msg[256];
          pcre2_get_error_message(rc, msg, sizeof msg);
          fail("pre-tokenizer ", quote(spec_.family), ": PCRE2 match failed: ",
               reinterpret_cast<const char*>(msg));
        }
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        const size_t b = ov[0], e = ov[1];
        if (e == b) {  // empty match: step over one character, which joins the next gap
          pos = b + std::max<size_t>(1, utf8::valid_len(seg, b));
          continue;
        }
        if (b > done) next.push_back(seg.substr(done, b - done));
        next.push_back(seg.substr(b, e - b));
        done = pos = e;
      }
      if (done < seg.size()) next.push_back(seg.substr(done));
    }
    pieces.swap(next);
  }
  out.insert(out.end(), pieces.begin(), pieces.end());
}

}  // namespace ork::model
