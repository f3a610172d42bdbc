#include "runtime/chat_session.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

#include "core/error.h"
#include "core/quote.h"
#include "model/model.h"

namespace ork::runtime {
namespace {

// "ORKCHAT" and the format version: 1 held f32 KV rows with no type; 2 names the KV type; 3 adds
// each layer's KV rows and first position held (sliding-window ring caches).
constexpr char kMagic[8] = {'O', 'R', 'K', 'C', 'H', 'A', 'T', '3'};

// Session file (little-endian as the host writes it; docs/chat.md): magic, u64 n_layer, n_ctx,
// kv_dim, n_vocab, string KV type (f32 | f16 | q8_0), per layer u64 KV rows (Context::kv_rows) and
// u64 first position held (Context::state_from), string template name, u64 message count,
// (string role, string content)…, u64 token count, int32 tokens…, the Context::state() bytes.
// A string is u64 length + bytes. Format 2 is format 3 without the per-layer pairs (every layer
// full, from 0): still read, into a context without ring caches.
class Out {
 public:
  explicit Out(std::FILE* f) : f_(f) {}
  void bytes(const void* p, size_t n) { ok_ = ok_ && std::fwrite(p, 1, n, f_) == n; }
  void u64(uint64_t v) { bytes(&v, sizeof v); }
  void str(const std::string& s) { u64(s.size()); bytes(s.data(), s.size()); }
  bool ok() const { return ok_; }

 private:
  std::FILE* f_;
  bool ok_ = true;
};

class In {
 public:
  In(std::FILE* f, std::string path) : f_(f), path_(std::move(path)) {}
  void bytes(void* p, size_t n, const char* what) {
    ORK_CHECK(std::fread(p, 1, n, f_) == n, path_, ": truncated session file (reading ", what, ")");
  }
  uint64_t u64(const char* what) {
    uint64_t v;
    bytes(&v, sizeof v, what);
    return v;
  }
  std::string str(const char* what, uint64_t max) {
    const uint64_t n = u64(what);
    ORK_CHECK(n <= max, path_, ": ", what, " of ", n, " bytes is too long");
    std::string s(n, '\0');
    bytes(s.data(), n, what);
    return s;
  }

 private:
  std::FILE* f_;
  std::string path_;
};

}  // namespace

ChatSession::ChatSession(Context& ctx, model::ChatTemplate tmpl) : ctx_(ctx), tmpl_(std::move(tmpl)) {
  const model::Tokenizer& tok = ctx_.engine().model().tokenizer();
  for (const std::string& s : tmpl_.stop_strings()) {
    const int32_t id = tok.find_token(s);
    if (id >= 0) stop_ids_.push_back(id);
  }
}

bool ChatSession::is_stop(int32_t id) const {
  if (ctx_.engine().model().tokenizer().is_eog(id)) return true;
  for (int32_t s : stop_ids_) {
    if (s == id) return true;
  }
  return false;
}

std::vector<int32_t> ChatSession::tokenize_prompt() const {
  const model::Tokenizer& tok = ctx_.engine().model().tokenizer();
  const std::string text = tmpl_.render(messages_, true);
  const bool bos = tok.vocab().add_bos && !tmpl_.renders_bos();
  return tok.encode(text, bos, /*parse_special=*/true);
}

void ChatSession::clear(const std::string& system) {
  messages_.clear();
  if (!system.empty()) messages_.push_back({"system", system});
  cached_.clear();
  ctx_.reset();
}

ChatReply ChatSession::reply(const std::string& user, Sampler& sampler, int64_t n_predict,
                             const std::function<bool(const std::string&)>& on_piece) {
  const model::Tokenizer& tok = ctx_.engine().model().tokenizer();
  messages_.push_back({"user", user});
  std::vector<int32_t> prompt;
  try {
    prompt = tokenize_prompt();
    ORK_CHECK(!prompt.empty(), "the conversation renders to no tokens");
    ORK_CHECK(int64_t(prompt.size()) < ctx_.n_ctx(), "the conversation of ", prompt.size(),
              " tokens does not fit in the context of ", ctx_.n_ctx(), " tokens (use --ctx, or /clear)");
  } catch (...) {
    messages_.pop_back();
    throw;
  }
  ChatReply r;
  r.n_prompt = int64_t(prompt.size());
  // Reuse the cached prefix; at least the last prompt token is evaluated (its logits are needed).
  size_t keep = 0;
  while (keep < cached_.size() && keep + 1 < prompt.size() && cached_[keep] == prompt[keep]) ++keep;
  keep = size_t(ctx_.keepable(std::min<int64_t>(int64_t(keep), ctx_.n_past())));  // a ring may not reach back
  r.n_reused = int64_t(keep);
  ctx_.truncate(int64_t(keep));
  cached_.resize(keep);
  sampler.reset();
  for (int32_t t : prompt) sampler.accept(t);
  const float* logits = ctx_.eval(std::vector<int32_t>(prompt.begin() + int64_t(keep), prompt.end()));
  cached_ = prompt;

  std::string pending;  // bytes of an incomplete UTF-8 character are held back from on_piece
  r.stop = "length";
  for (int64_t i = 0; n_predict < 0 || i < n_predict; ++i) {
    const int32_t id = sampler.sample(logits, int32_t(ctx_.n_vocab()));
    sampler.accept(id);
    ++r.n_gen;
    if (is_stop(id)) {
      r.stop = "eog";
      break;
    }
    const std::string piece = tok.decode_token(id);
    r.text += piece;
    if (!on_piece(piece)) {
      r.stop = "interrupted";
      break;
    }
    if (ctx_.n_past() >= ctx_.n_ctx()) {
      r.stop = "context";
      break;
    }
    if (n_predict >= 0 && i + 1 == n_predict) break;
    logits = ctx_.eval({id});
    cached_.push_back(id);
  }
  messages_.push_back({"assistant", r.text});
  return r;
}

void ChatSession::save(const std::string& path) const {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  ORK_CHECK(f != nullptr, tmp, ": cannot create: ", std::strerror(errno));
  const model::Config& c = ctx_.engine().model().config();
  Out o(f);
  o.bytes(kMagic, sizeof kMagic);
  o.u64(uint64_t(c.n_layer));
  o.u64(uint64_t(ctx_.n_ctx()));
  o.u64(uint64_t(c.kv_dim()));
  o.u64(uint64_t(ctx_.n_vocab()));
  o.str(model::kv_type_name(ctx_.kv_type()));
  const std::vector<int64_t> from = ctx_.state_from();
  for (int64_t l = 0; l < c.n_layer; ++l) {
    o.u64(uint64_t(ctx_.kv_rows(l)));
    o.u64(uint64_t(from[size_t(l)]));
  }
  o.str(tmpl_.name());
  o.u64(messages_.size());
  for (const model::ChatMessage& m : messages_) {
    o.str(m.role);
    o.str(m.content);
  }
  o.u64(cached_.size());
  o.bytes(cached_.data(), cached_.size() * sizeof(int32_t));
  const std::vector<uint8_t> state = ctx_.state();
  o.bytes(state.data(), state.size());
  const bool ok = o.ok() && std::fflush(f) == 0;
  std::fclose(f);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(path + ": cannot write the session: " + std::strerror(errno));
  }
}

void ChatSession::load(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  ORK_CHECK(f != nullptr, path, ": cannot open: ", std::strerror(errno));
  struct Closer {
    std::FILE* f;
    ~Closer() { std::fclose(f); }
  } closer{f};
  In in(f, path);
  char magic[sizeof kMagic];
  in.bytes(magic, sizeof magic, "magic");
  ORK_CHECK(std::memcmp(magic, kMagic, 7) == 0, path, ": not an ork chat session file");
  ORK_CHECK(magic[7] == kMagic[7] || magic[7] == '2', path, ": session file format ",
            magic[7] == '1' ? "1 (f32 KV rows, before KV cache types)" : "unknown",
            " is not readable by this version (formats 2 and 3); start a new session");
  const bool v2 = magic[7] == '2';
  const model::Config& c = ctx_.engine().model().config();
  auto expect = [&](const char* what, uint64_t want) {
    const uint64_t v = in.u64(what);
    ORK_CHECK(v == want, path, ": saved with ", what, " ", v, ", this session has ", want);
  };
  expect("n_layer", uint64_t(c.n_layer));
  expect("context size", uint64_t(ctx_.n_ctx()));
  expect("kv_dim", uint64_t(c.kv_dim()));
  expect("n_vocab", uint64_t(ctx_.n_vocab()));
  const std::string kv = in.str("KV type", 16);
  ORK_CHECK(kv == model::kv_type_name(ctx_.kv_type()), path, ": saved with a KV cache of type ", quote(kv),
            ", this session's is ", model::kv_type_name(ctx_.kv_type()), " (--kv-type)");
  std::vector<int64_t> from(size_t(c.n_layer), 0);
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const uint64_t rows = v2 ? uint64_t(ctx_.n_ctx()) : in.u64("layer KV rows");
    if (!v2) from[size_t(l)] = int64_t(std::min<uint64_t>(in.u64("layer first position"), uint64_t(ctx_.n_ctx())));
    ORK_CHECK(rows == uint64_t(ctx_.kv_rows(l)), path, ": layer ", l, "'s KV cache was saved with ", rows,
              " rows, this session's has ", ctx_.kv_rows(l),
              rows == uint64_t(ctx_.n_ctx()) ? " (saved with full caches: load it with --no-swa-ring)"
                                              : " (saved as a sliding-window ring: load it without --no-swa-ring)");
  }
  const std::string name = in.str("template name", 256);
  ORK_CHECK(name == tmpl_.name(), path, ": saved with chat template '", name, "', this session uses '",
            tmpl_.name(), "'");
  const uint64_t n_msg = in.u64("message count");
  ORK_CHECK(n_msg <= uint64_t(ctx_.n_ctx()), path, ": message count ", n_msg, " is out of range");
  std::vector<model::ChatMessage> messages(n_msg);
  for (model::ChatMessage& m : messages) {
    m.role = in.str("role", 16);
    ORK_CHECK(m.role == "system" || m.role == "user" || m.role == "assistant", path, ": bad role '",
              m.role, "'");
    m.content = in.str("content", uint64_t(1) << 30);
  }
  const uint64_t n_tok = in.u64("token count");
  ORK_CHECK(n_tok <= uint64_t(ctx_.n_ctx()), path, ": token count ", n_tok, " exceeds the context");
  std::vector<int32_t> tokens(n_tok);
  in.bytes(tokens.data(), n_tok * sizeof(int32_t), "tokens");
  for (int32_t t : tokens) {
    ORK_CHECK(t >= 0 && t < ctx_.n_vocab(), path, ": token id ", t, " is outside the vocabulary");
  }
  std::vector<uint8_t> state(size_t(ctx_.state_bytes(int64_t(n_tok), from)));
  in.bytes(state.data(), state.size(), "KV cache");
  char extra;
  ORK_CHECK(std::fread(&extra, 1, 1, f) == 0, path, ": trailing bytes after the KV cache");
  ctx_.set_state(state, int64_t(n_tok), from);
  messages_ = std::move(messages);
  cached_ = std::move(tokens);
}

}  // namespace ork::runtime

namespace ork::runtime {

model::ChatTemplate chat_template_for(const model::Model& model, const std::string& name) {
  const model::Tokenizer& tok = model.tokenizer();
  auto text = [&](int32_t id) { return id >= 0 ? tok.vocab().tokens[size_t(id)] : std::string(); };
  if (!name.empty()) return model::ChatTemplate::named(name, text(tok.bos()), text(tok.eos()));
  const gguf::Value* v = model.file().find("tokenizer.chat_template");
  ORK_CHECK(v != nullptr, model.file().path(),
            ": the model has no tokenizer.chat_template; give one with --chat-template NAME");
  return model::ChatTemplate::detect(model.file().get_string("tokenizer.chat_template"), text(tok.bos()),
                                     text(tok.eos()));
}

}  // namespace ork::runtime
