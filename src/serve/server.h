// serve::Server — ork's HTTP server: OpenAI-compatible routes (POST /v1/chat/completions,
// POST /v1/completions, GET /v1/models, GET /health) and Ollama-compatible ones on the same port
// (POST /api/chat, POST /api/generate, GET /api/tags, GET /api/version), over cpp-httplib.
// Requests run on a SlotPool of `parallel` slots (queueing beyond); docs/serve.md has the design.
//
// Borrows the Engine (must outlive the Server). Thread-safety: stop() may be called from any thread
// (e.g. a signal-watching one) while run() blocks in another.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/engine.h"
#include "runtime/sampler.h"

namespace ork::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";  // loopback unless asked otherwise
  int port = 8080;                 // 0: any free port (bind() returns it)
  int parallel = 1;                // slots (concurrent generations)
  bool cont_batching = true;       // decode steps of all generating slots in one pass (--no-cont-batching: off)
  int64_t n_ctx = 0;               // tokens per slot; 0: the model's, at most 4096
  std::string api_key;             // when set, requests need "Authorization: Bearer KEY"
  std::string model_name = "default";
  std::string chat_template;       // a family name (--chat-template); "": the model's own
  runtime::SamplerParams defaults; // sampling of requests that do not say
};

class Server {
 public:
  // Creates the slots and resolves the chat template (ork::Error when the model has none: the
  // chat routes would then answer 400 naming it, so this is checked up front only when asked for
  // with a name; a model without a template serves the raw-prompt routes).
  Server(runtime::Engine& engine, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port; returns the port. ork::Error naming the address when it cannot.
  int bind();
  // Serves until stop(). bind() first.
  void run();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ork::serve
