// serve::parse_request — the body of an OpenAI or Ollama generation request, parsed (nlohmann) and
// validated into what generation needs. Bad input throws ApiError: the HTTP status, the field at
// fault (JSON path such as "messages[1].content"), and a message naming both.
#pragma once

#include <string>
#include <vector>

#include "model/chat_template.h"
#include "runtime/sampler.h"
#include "serve/generation.h"

namespace ork::serve {

struct ApiError {
  int status = 400;
  std::string field;    // "" when no single field is at fault (malformed JSON)
  std::string message;  // one line
};

enum class Api { kOpenAIChat, kOpenAICompletion, kOllamaChat, kOllamaGenerate };

struct Request {
  Api api = Api::kOpenAIChat;
  std::string model;                         // as given ("" when absent)
  std::vector<model::ChatMessage> messages;  // chat requests, and Ollama generate unless raw
  std::string prompt;                        // completion requests (raw text)
  bool raw = true;                           // the prompt is used as is (no chat template)
  bool stream = false;
  bool include_usage = false;  // OpenAI stream_options.include_usage
  GenParams gen;
};

// `defaults`: the server's sampling flags; `model_name`: the name it serves (a request naming
// another model gets 404). Ollama requests stream unless "stream": false.
Request parse_request(Api api, const std::string& body, const runtime::SamplerParams& defaults,
                      const std::string& model_name);

}  // namespace ork::serve
