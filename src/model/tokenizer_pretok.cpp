#include "model/tokenizer_pretok.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>

#include "core/error.h"
#include "core/log.h"
#include "core/quote.h"
#include "model/tokenizer_unicode.h"
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
      {{"", "default"},
       {"default",
        {R"re([\p{P}\$\+<=>\^~\|]+)re", kGpt2, R"re(\p{N}+)re", R"re([0-9][0-9][0-9])re"},
        false,
        false}},
  };
  return t;
}

const PreTokenizerSpec& gpt2_fallback() {
  static const PreTokenizerSpec s{"gpt2", {kGpt2}, false, false};
  return s;
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

PreTokenizer::PreTokenizer(std::string_view pre) : compiled_(std::make_unique<Compiled>()) {
  if (const PreTokenizerSpec* s = find_pre_tokenizer(pre)) {
    spec_ = *s;
  } else {
    log::warn("tokenizer.ggml.pre ", quote(pre),
              " is not a known pre-tokenizer; using the GPT-2 regex (tokenization may differ "
              "from the model's own)");
    spec_ = gpt2_fallback();
  }
  for (const std::string& pattern : spec_.regexes) {
    int err = 0;
    PCRE2_SIZE err_off = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_UCP, &err, &err_off, nullptr);
    if (code == nullptr) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      fail("pre-tokenizer ", quote(spec_.family), ": regex does not compile at offset ", err_off, ": ",
           reinterpret_cast<const char*>(msg), " (", pattern, ")");
    }
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
        const int rc = pcre2_match(code, subject, seg.size(), pos, PCRE2_NO_UTF_CHECK, md, nullptr);
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
