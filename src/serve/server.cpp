#include "serve/server.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.h"
#include "model/model.h"
#include "runtime/chat_session.h"
#include "runtime/decode_batcher.h"
#include "serve/request.h"
#include "serve/slot_pool.h"

namespace ork::serve {
namespace {

constexpr int kListenBacklog = 512;  // connections the kernel queues before httplib accepts them

using json = nlohmann::json;

// Invalid UTF-8 (a model may emit a broken byte sequence) is replaced, never thrown on.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string iso_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::tm tm;
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool is_ollama(Api a) { return a == Api::kOllamaChat || a == Api::kOllamaGenerate; }

void send_error(httplib::Response& res, Api api, const ApiError& e) {
  res.status = e.status;
  json j;
  if (is_ollama(api)) {
    j = {{"error", e.message}};
  } else {
    j = {{"error", {{"message", e.message},
                    {"type", e.status == 404 ? "not_found_error" : e.status == 401 ? "authentication_error"
                                                                                     : "invalid_request_error"},
                    {"param", e.field.empty() ? json(nullptr) : json(e.field)},
                    {"code", nullptr}}}};
  }
  res.set_content(dump(j), "application/json");
}

}  // namespace

struct Server::Impl {
  runtime::Engine& engine;
  ServerOptions opt;
  SlotPool pool;
  std::optional<runtime::DecodeBatcher> batcher;  // with cont_batching
  std::optional<model::ChatTemplate> tmpl;
  std::string tmpl_error;  // why there is no template (chat routes answer 400 with it)
  httplib::Server http;
  std::atomic<uint64_t> next_id{1};
  std::atomic<int> listen_sock{-1};  // httplib's listening socket, once bound
  const std::time_t started = std::time(nullptr);

  Impl(runtime::Engine& e, ServerOptions o)
      : engine(e), opt(std::move(o)), pool(e, opt.parallel, opt.n_ctx) {
    if (opt.cont_batching) batcher.emplace(engine);
    try {
      tmpl = runtime::chat_template_for(engine.model(), opt.chat_template);
    } catch (const Error& err) {
      if (!opt.chat_template.empty()) throw;  // a bad --chat-template is the user's error now
      tmpl_error = err.what();
    }
  }

  runtime::DecodeBatcher* batcher_ptr() { return batcher ? &*batcher : nullptr; }

  std::vector<int32_t> tokenize(const Request& r) const {
    const model::Tokenizer& tok = engine.model().tokenizer();
    const char* field = r.raw ? "prompt" : "messages";
    if (r.raw) return tok.encode(r.prompt, tok.vocab().add_bos, true);
    if (!tmpl) throw ApiError{400, field, tmpl_error};
    std::string text;
    try {
      text = tmpl->render(r.messages, true);
    } catch (const Error& e) {
      throw ApiError{400, field, std::string("'") + field + "': " + e.what()};
    }
    return tok.encode(text, tok.vocab().add_bos && !tmpl->renders_bos(), true);
  }

  json usage(const GenResult& g) const {
    // prompt_tokens_details.cached_tokens: prompt tokens the slot's KV cache already held.
    return {{"prompt_tokens", g.n_prompt}, {"completion_tokens", g.n_gen}, {"total_tokens", g.n_prompt + g.n_gen},
            {"prompt_tokens_details", {{"cached_tokens", g.n_reused}}}};
  }

  // The OpenAI / Ollama object for a finished or streamed piece. delta: the text of this piece;
  // final: the last object (finish reason, counts).
  json openai_chunk(const Request& r, const std::string& id, const std::string* delta, const GenResult* fin,
                    bool first) const {
    const bool chat = r.api == Api::kOpenAIChat;
    json choice = {{"index", 0}};
    if (chat) {
      json d = json::object();
      if (first) d["role"] = "assistant";
      if (delta != nullptr) d["content"] = *delta;
      choice["delta"] = d;
    } else {
      choice["text"] = delta != nullptr ? *delta : "";
      choice["logprobs"] = nullptr;
    }
    choice["finish_reason"] = fin != nullptr ? json(fin->finish_reason) : json(nullptr);
    return {{"id", id}, {"object", chat ? "chat.completion.chunk" : "text_completion"},
            {"created", std::time(nullptr)}, {"model", opt.model_name}, {"choices", json::array({choice})}};
  }

  json openai_full(const Request& r, const std::string& id, const GenResult& g) const {
    const bool chat = r.api == Api::kOpenAIChat;
    json choice = {{"index", 0}, {"finish_reason", g.finish_reason}};
    if (chat) {
      choice["message"] = {{"role", "assistant"}, {"content", g.text}};
    } else {
      choice["text"] = g.text;
      choice["logprobs"] = nullptr;
    }
    return {{"id", id}, {"object", chat ? "chat.completion" : "text_completion"}, {"created", std::time(nullptr)},
            {"model", opt.model_name}, {"choices", json::array({choice})}, {"usage", usage(g)}};
  }

  json ollama_obj(const Request& r, const std::string& text, const GenResult* fin, double ms) const {
    json j = {{"model", r.model.empty() ? opt.model_name : r.model}, {"created_at", iso_now()}};
    if (r.api == Api::kOllamaChat) {
      j["message"] = {{"role", "assistant"}, {"content", text}};
    } else {
      j["response"] = text;
    }
    j["done"] = fin != nullptr;
    if (fin != nullptr) {
      const int64_t ns = int64_t(ms * 1e6);
      j["done_reason"] = fin->finish_reason;
      j["total_duration"] = ns;
      j["load_duration"] = 0;
      j["prompt_eval_count"] = fin->n_prompt;
      j["eval_count"] = fin->n_gen;
    }
    return j;
  }

  void generate(Api api, const httplib::Request& req, httplib::Response& res) {
    auto r = std::make_shared<Request>();
    std::vector<int32_t> prompt;
    try {
      *r = parse_request(api, req.body, opt.defaults, opt.model_name);
      prompt = tokenize(*r);
      const char* field = r->raw ? "prompt" : "messages";
      if (prompt.empty()) throw ApiError{400, field, std::string("'") + field + "' renders to no tokens"};
      if (int64_t(prompt.size()) >= pool.n_ctx()) {
        throw ApiError{400, field, std::string("'") + field + "' is " + std::to_string(prompt.size()) +
                                       " tokens, more than the context of " + std::to_string(pool.n_ctx()) +
                                       " tokens allows"};
      }
    } catch (const ApiError& e) {
      send_error(res, api, e);
      return;
    }
    if (!r->raw && tmpl) r->gen.stop_texts = tmpl->stop_strings();
    const std::string id = std::string(api == Api::kOpenAIChat ? "chatcmpl-" : "cmpl-") +
                           std::to_string(next_id.fetch_add(1));
    if (!r->stream) {
      const auto t0 = std::chrono::steady_clock::now();
      GenResult g;
      {
        SlotPool::Lease lease = pool.acquire(prompt);
        g = generate_on_slot(lease.slot(), prompt, r->gen, [](const std::string&) { return true; }, batcher_ptr());
      }
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      res.set_content(dump(is_ollama(api) ? ollama_obj(*r, g.text, &g, ms) : openai_full(*r, id, g)),
                      "application/json");
      return;
    }
    auto tokens = std::make_shared<std::vector<int32_t>>(std::move(prompt));
    const bool ollama = is_ollama(api);
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        ollama ? "application/x-ndjson" : "text/event-stream",
        [this, r, tokens, id, ollama](size_t, httplib::DataSink& sink) {
          try {
            return stream(*r, *tokens, id, ollama, sink);
          } catch (const std::exception&) {
            return false;  // e.g. out of memory: the connection is closed, the server goes on
          }
        });
  }

  // Streams one request's generation into `sink`; false when the client went away.
  bool stream(const Request& rq, const std::vector<int32_t>& prompt, const std::string& id, bool ollama,
              httplib::DataSink& sink) {
    const Request* r = &rq;
    const std::vector<int32_t>* tokens = &prompt;
          const auto t0 = std::chrono::steady_clock::now();
          auto put = [&](const json& j) {
            const std::string s = ollama ? dump(j) + "\n" : "data: " + dump(j) + "\n\n";
            return sink.write(s.data(), s.size());
          };
          bool first = true;
          bool ok = true;
          GenResult g;
          {
            SlotPool::Lease lease = pool.acquire(*tokens);
            if (!ollama && r->api == Api::kOpenAIChat) {  // the role comes first, as OpenAI sends it
              ok = put(openai_chunk(*r, id, nullptr, nullptr, true));
              first = false;
            }
            if (ok) {
              g = generate_on_slot(lease.slot(), *tokens, r->gen, [&](const std::string& d) {
                const bool sent = ollama ? put(ollama_obj(*r, d, nullptr, 0)) : put(openai_chunk(*r, id, &d, nullptr, first));
                first = false;
                return sent;
              }, batcher_ptr());
              ok = g.finish_reason != "disconnected";
            }
          }  // the slot is free before the last bytes go out
          if (!ok) return false;  // the client went away: httplib closes the connection
          const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
          if (ollama) {
            put(ollama_obj(*r, "", &g, ms));
          } else {
            put(openai_chunk(*r, id, nullptr, &g, first));
            if (r->include_usage) {
              put({{"id", id}, {"object", r->api == Api::kOpenAIChat ? "chat.completion.chunk" : "text_completion"},
                   {"created", std::time(nullptr)}, {"model", opt.model_name}, {"choices", json::array()},
                   {"usage", usage(g)}});
            }
            const std::string done = "data: [DONE]\n\n";
            sink.write(done.data(), done.size());
          }
          sink.done();
          return true;
  }

  void routes() {
    if (!opt.api_key.empty()) {
      http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        if (req.path == "/health") return httplib::Server::HandlerResponse::Unhandled;
        if (req.get_header_value("Authorization") == "Bearer " + opt.api_key) {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        send_error(res, req.path.rfind("/api/", 0) == 0 ? Api::kOllamaChat : Api::kOpenAIChat,
                   ApiError{401, "", "missing or wrong API key (Authorization: Bearer KEY)"});
        return httplib::Server::HandlerResponse::Handled;
      });
    }
    http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      const int busy = pool.busy();
      json h = {{"status", "ok"}, {"slots_idle", pool.size() - busy}, {"slots_busy", busy},
                {"requests_waiting", pool.waiting()}};
      if (batcher) {  // continuous batching: passes run, tokens decoded in them, the largest batch
        const runtime::DecodeBatcher::Stats st = batcher->stats();
        h["decode_steps"] = st.steps;
        h["decode_rows"] = st.rows;
        h["decode_rows_max"] = st.max_rows;
      }
      res.set_content(dump(h), "application/json");
    });
    http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(dump({{"object", "list"},
                            {"data", json::array({{{"id", opt.model_name}, {"object", "model"},
                                                   {"created", started}, {"owned_by", "ork"}}})}}),
                      "application/json");
    });
    http.Get("/api/tags", [this](const httplib::Request&, httplib::Response& res) {
      const model::Model& m = engine.model();
      json details = {{"format", "gguf"}, {"family", std::string(m.file().get_string_or("general.architecture", ""))},
                      {"parameter_size", ""}, {"quantization_level", ""}};
      res.set_content(dump({{"models", json::array({{{"name", opt.model_name}, {"model", opt.model_name},
                                                      {"modified_at", iso_now()},
                                                      {"size", m.file().mapping().size()},
                                                      {"digest", ""}, {"details", details}}})}}),
                      "application/json");
    });
    http.Get("/api/version", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(dump({{"version", "0.1.0"}}), "application/json");
    });
    auto post = [this](const char* path, Api api) {
      http.Post(path, [this, api](const httplib::Request& req, httplib::Response& res) { generate(api, req, res); });
    };
    post("/v1/chat/completions", Api::kOpenAIChat);
    post("/v1/completions", Api::kOpenAICompletion);
    post("/api/chat", Api::kOllamaChat);
    post("/api/generate", Api::kOllamaGenerate);
    // Anything unexpected inside a handler is a 500 with a JSON body, never a crash.
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      std::string what = "internal error";
      try {
        std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      res.status = 500;
      res.set_content(dump({{"error", {{"message", what}, {"type", "server_error"}}}}), "application/json");
    });
    // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which would let a second server bind a
    // port already in use and silently share its connections.
    // The callback sees the listening socket only (httplib applies it to no accepted one): kept to
    // widen its backlog after bind (below).
    http.set_socket_options([this](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      listen_sock = sock;
    });
    // One thread per open connection: requests beyond the slots wait for one in SlotPool::acquire
    // (queueing) while /health still answers; connections beyond the threads wait in httplib's queue.
    const int threads = std::max(16, opt.parallel + 4);
    http.new_task_queue = [threads] { return new httplib::ThreadPool(size_t(threads)); };
  }
};

Server::Server(runtime::Engine& engine, ServerOptions options)
    : impl_(std::make_unique<Impl>(engine, std::move(options))) {
  impl_->routes();
}

Server::~Server() = default;

int Server::bind() {
  Impl& s = *impl_;
  int port = s.opt.port;
  if (port == 0) {
    port = s.http.bind_to_any_port(s.opt.host.c_str());
    ORK_CHECK(port > 0, "cannot listen on ", s.opt.host, " (any port)");
  } else {
    ORK_CHECK(s.http.bind_to_port(s.opt.host.c_str(), port), "cannot listen on ", s.opt.host, ":", port,
              " (in use, or not an address of this machine)");
  }
  // Debian's cpp-httplib 0.11 is compiled with a listen backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG):
  // with more clients connecting at once, the connections the kernel could not queue were reset
  // (docs/serve.md, "Load"). listen() again on the bound socket sets the backlog (Linux updates it in
  // place; the kernel caps it at net.core.somaxconn).
  if (const int sock = s.listen_sock.load(); sock >= 0) {
    ORK_CHECK(::listen(sock, kListenBacklog) == 0, "cannot set the listen backlog of ", s.opt.host, ":", port);
  }
  return port;
}

void Server::run() { impl_->http.listen_after_bind(); }

void Server::stop() { impl_->http.stop(); }

}  // namespace ork::serve
