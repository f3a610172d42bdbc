#include "serve/request.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace ork::serve {
namespace {

using json = nlohmann::json;

[[noreturn]] void bad(const std::string& field, const std::string& what, int status = 400) {
  throw ApiError{status, field, "'" + field + "' " + what};
}

double number(const json& j, const std::string& field, double lo, double hi) {
  if (!j.is_number()) bad(field, "must be a number");
  const double v = j.get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) {
    bad(field, "must be in [" + json(lo).dump() + ", " + json(hi).dump() + "], not " + j.dump());
  }
  return v;
}

int64_t integer(const json& j, const std::string& field, int64_t lo, int64_t hi) {
  if (!j.is_number_integer()) bad(field, "must be an integer");
  if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(INT64_MAX)) bad(field, "is too large");
  const int64_t v = j.get<int64_t>();
  if (v < lo || v > hi) bad(field, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], not " + j.dump());
  return v;
}

std::vector<std::string> stop_list(const json& j, const std::string& field) {
  std::vector<std::string> out;
  if (j.is_null()) return out;
  if (j.is_string()) {
    if (!j.get<std::string>().empty()) out.push_back(j.get<std::string>());
    return out;
  }
  if (!j.is_array()) bad(field, "must be a string or an array of strings");
  if (j.size() > 16) bad(field, "holds more than 16 strings");
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) bad(field + "[" + std::to_string(i) + "]", "must be a string");
    if (!j[i].get<std::string>().empty()) out.push_back(j[i].get<std::string>());
  }
  return out;
}

// OpenAI content: a string, or an array of {"type":"text","text":...} parts (concatenated).
std::string content_text(const json& c, const std::string& field) {
  if (c.is_string()) return c.get<std::string>();
  if (c.is_array()) {
    std::string s;
    for (size_t i = 0; i < c.size(); ++i) {
      const std::string f = field + "[" + std::to_string(i) + "]";
      if (!c[i].is_object() || c[i].value("type", "") != "text" || !c[i].contains("text") ||
          !c[i]["text"].is_string()) {
        bad(f, "must be a {\"type\": \"text\", \"text\": ...} part (only text is supported)");
      }
      s += c[i]["text"].get<std::string>();
    }
    return s;
  }
  bad(field, "must be a string");
}

std::vector<model::ChatMessage> messages(const json& body) {
  if (!body.contains("messages")) bad("messages", "is missing");
  const json& m = body["messages"];
  if (!m.is_array()) bad("messages", "must be an array");
  if (m.empty()) bad("messages", "must not be empty");
  std::vector<model::ChatMessage> out;
  for (size_t i = 0; i < m.size(); ++i) {
    const std::string f = "messages[" + std::to_string(i) + "]";
    if (!m[i].is_object()) bad(f, "must be an object");
    if (!m[i].contains("role") || !m[i]["role"].is_string()) bad(f + ".role", "must be a string");
    const std::string role = m[i]["role"].get<std::string>();
    if (role != "system" && role != "user" && role != "assistant") {
      bad(f + ".role", "must be system, user or assistant, not '" + role + "'");
    }
    if (!m[i].contains("content")) bad(f + ".content", "is missing");
    out.push_back({role, content_text(m[i]["content"], f + ".content")});
  }
  return out;
}

bool boolean(const json& j, const std::string& field) {
  if (!j.is_boolean()) bad(field, "must be true or false");
  return j.get<bool>();
}

}  // namespace

Request parse_request(Api api, const std::string& text, const runtime::SamplerParams& defaults,
                      const std::string& model_name) {
  json body = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) throw ApiError{400, "", "the request body is not valid JSON"};
  if (!body.is_object()) throw ApiError{400, "", "the request body must be a JSON object"};
  Request r;
  r.api = api;
  r.gen.sampler = defaults;
  const bool ollama = api == Api::kOllamaChat || api == Api::kOllamaGenerate;
  if (body.contains("model")) {
    if (!body["model"].is_string()) bad("model", "must be a string");
    r.model = body["model"].get<std::string>();
    const bool ok = r.model.empty() || r.model == model_name || r.model == model_name + ":latest";
    if (!ok) bad("model", "names an unknown model '" + r.model + "' (this server runs '" + model_name + "')", 404);
  }
  r.stream = ollama;
  if (body.contains("stream") && !body["stream"].is_null()) r.stream = boolean(body["stream"], "stream");
  if (api == Api::kOpenAIChat || api == Api::kOllamaChat) {
    r.messages = messages(body);
    r.raw = false;
  } else {
    if (!body.contains("prompt")) bad("prompt", "is missing");
    if (!body["prompt"].is_string()) bad("prompt", "must be a string");
    r.prompt = body["prompt"].get<std::string>();
    if (api == Api::kOllamaGenerate) {
      r.raw = body.contains("raw") && boolean(body["raw"], "raw");
      if (!r.raw) {
        if (body.contains("system") && !body["system"].is_string()) bad("system", "must be a string");
        const std::string system = body.value("system", "");
        if (!system.empty()) r.messages.push_back({"system", system});
        r.messages.push_back({"user", r.prompt});
      }
    }
    if (r.prompt.empty() && r.raw) bad("prompt", "must not be empty");
  }
  runtime::SamplerParams& sp = r.gen.sampler;
  // OpenAI: top-level fields; Ollama: "options" with its names.
  const json* o = &body;
  std::string pre;
  if (ollama) {
    static const json kEmpty = json::object();
    o = body.contains("options") ? &body["options"] : &kEmpty;
    if (!o->is_object()) bad("options", "must be an object");
    pre = "options.";
  }
  auto has = [&](const char* k) { return o->contains(k) && !(*o)[k].is_null(); };
  if (has("temperature")) sp.temperature = float(number((*o)["temperature"], pre + "temperature", 0, 100));
  if (has("top_p")) sp.top_p = float(number((*o)["top_p"], pre + "top_p", 1e-9, 1));
  if (has("top_k")) sp.top_k = int(integer((*o)["top_k"], pre + "top_k", 0, INT32_MAX));
  if (has("min_p")) sp.min_p = float(number((*o)["min_p"], pre + "min_p", 0, 1));
  if (has("seed")) sp.seed = uint64_t(integer((*o)["seed"], pre + "seed", 0, INT64_MAX));
  if (ollama && has("repeat_penalty")) sp.repeat_penalty = float(number((*o)["repeat_penalty"], pre + "repeat_penalty", 1e-6, 1e6));
  const char* max_key = ollama ? "num_predict" : has("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  if (has(max_key)) {
    r.gen.max_tokens = integer((*o)[max_key], pre + max_key, ollama ? -1 : 1, int64_t(1) << 24);
  }
  if (has("stop")) r.gen.stop = stop_list((*o)["stop"], pre + "stop");
  if (!ollama && body.contains("stream_options") && !body["stream_options"].is_null()) {
    const json& so = body["stream_options"];
    if (!so.is_object()) bad("stream_options", "must be an object");
    if (so.contains("include_usage")) r.include_usage = boolean(so["include_usage"], "stream_options.include_usage");
  }
  if (!ollama && body.contains("n") && !body["n"].is_null() && integer(body["n"], "n", 1, 1) != 1) bad("n", "must be 1");
  return r;
}

}  // namespace ork::serve
