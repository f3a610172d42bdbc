// The C API (include/ork/ork.h): models, contexts, tokens, evaluation, sampling, generation.
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "api/handles.h"
#include "core/quote.h"
#include "runtime/generator.h"
#include "weights/plan.h"

namespace ork::api {

namespace {
thread_local std::string t_last_error;
}  // namespace

void set_last_error(const std::string& message) { t_last_error = message; }

Registry<ModelObj>& models() {
  static Registry<ModelObj> r;
  return r;
}
Registry<ContextObj>& contexts() {
  static Registry<ContextObj> r;
  return r;
}
Registry<SamplerObj>& samplers() {
  static Registry<SamplerObj> r;
  return r;
}
Registry<MemObj>& mems() {
  static Registry<MemObj> r;
  return r;
}

MemObj::~MemObj() {
  buffer.reset();
  if (host_mapped && host != nullptr) ::munmap(host, size);
}

ContextObj::~ContextObj() {
  if (logits_mem) logits_mem->users--;
  ctx.reset();  // before the model (its Engine) goes
}

runtime::EngineOptions engine_options(const char* path, const ork_model_options* opts) {
  if (path == nullptr) fail_status(ORK_ERR_INVALID_ARG, "path is NULL");
  ork_model_options o;
  ork_model_options_init(&o);
  if (opts != nullptr) o = *opts;
  runtime::EngineOptions eo;
  eo.model_path = path;
  eo.device = o.device != nullptr ? o.device : "auto";
  if (eo.device != "cpu" && eo.device != "npu" && eo.device != "sim" && eo.device != "auto") {
    fail_status(ORK_ERR_INVALID_ARG, "device ", quote(eo.device), " is not one of cpu, npu, sim, auto");
  }
  try {
    eo.residency = weights::parse_residency(o.residency != nullptr ? o.residency : "auto");
  } catch (const Error& e) {
    fail_status(ORK_ERR_INVALID_ARG, "residency: ", e.what());
  }
  if (o.threads < 0 || o.threads > 1024) fail_status(ORK_ERR_INVALID_ARG, "threads ", o.threads, " is out of [0, 1024]");
  eo.threads = o.threads;
  eo.pin_threads = o.pin_threads != 0;
  eo.cpu_int8 = o.cpu_int8 != 0;
  if (o.kv_type != nullptr) {
    try {
      eo.kv_type = model::parse_kv_type(o.kv_type);
    } catch (const Error& e) {
      fail_status(ORK_ERR_INVALID_ARG, "kv_type: ", e.what());
    }
  }
  if (o.npu_wtype != nullptr) {
    try {
      eo.npu_wtype = runtime::parse_npu_wtype(o.npu_wtype);
    } catch (const Error& e) {
      fail_status(ORK_ERR_INVALID_ARG, "npu_wtype: ", e.what());
    }
  }
  if (o.wcache_budget_bytes != 0) eo.wcache_budget_bytes = o.wcache_budget_bytes;
  if (o.persist_path != nullptr) eo.persist_path = o.persist_path;
  eo.npu = npu::DeviceOptions{};
  if (o.sim_window_bytes != 0) eo.npu.sim_window_bytes = o.sim_window_bytes;
  if (o.sim_domains != 0) eo.npu.sim_domains = o.sim_domains;
  if (o.sim_cores != 0) eo.npu.sim_cores = o.sim_cores;
  if (o.n_weight_mem > 0) {
    if (o.weight_mem_fds == nullptr || o.weight_mem_sizes == nullptr) {
      fail_status(ORK_ERR_INVALID_ARG, "n_weight_mem is ", o.n_weight_mem, " but weight_mem_fds or weight_mem_sizes is NULL");
    }
    if (o.n_weight_mem > ORK_MAX_DOMAINS) {
      fail_status(ORK_ERR_INVALID_ARG, "n_weight_mem ", o.n_weight_mem, " exceeds ", ORK_MAX_DOMAINS, " domains");
    }
    for (uint32_t d = 0; d < o.n_weight_mem; ++d) {
      if (o.weight_mem_fds[d] < 0) fail_status(ORK_ERR_INVALID_ARG, "weight_mem_fds[", d, "] is ", o.weight_mem_fds[d]);
      eo.weight_mem.push_back({o.weight_mem_fds[d], o.weight_mem_sizes[d]});
    }
  }
  if (o.n_internal_mem > 0) {
    if (o.internal_mem_fds == nullptr || o.internal_mem_sizes == nullptr) {
      fail_status(ORK_ERR_INVALID_ARG, "n_internal_mem is ", o.n_internal_mem,
                  " but internal_mem_fds or internal_mem_sizes is NULL");
    }
    if (o.n_internal_mem > ORK_MAX_DOMAINS) {
      fail_status(ORK_ERR_INVALID_ARG, "n_internal_mem ", o.n_internal_mem, " exceeds ", ORK_MAX_DOMAINS, " domains");
    }
    if (eo.device == "cpu") {
      fail_status(ORK_ERR_INVALID_ARG, "internal memory from the caller needs the npu or sim device");
    }
    for (uint32_t d = 0; d < o.n_internal_mem; ++d) {
      eo.scratch_mem.push_back({o.internal_mem_fds[d], o.internal_mem_sizes[d]});
    }
  }
  return eo;
}

void check_model_alive(const ContextObj& c) {
  if (c.model->freed) {
    fail_status(ORK_ERR_MODEL_FREED, "the context's model was freed (ork_model_free): free the context too");
  }
}

namespace {

template <class T>
void require(const T* p, const char* what) {
  if (p == nullptr) fail_status(ORK_ERR_INVALID_ARG, what, " is NULL");
}

void copy_name(char* dst, size_t cap, const std::string& s) {
  const size_t n = std::min(cap - 1, s.size());
  std::memcpy(dst, s.data(), n);
  dst[n] = '\0';
}

// Context-full check with its own status (the runtime would throw a plain ork::Error).
void check_fits(const runtime::Context& c, int64_t n) {
  if (n <= 0) fail_status(ORK_ERR_INVALID_ARG, "eval: n_tokens is ", n, ", must be > 0");
  if (n > c.n_ctx() - c.n_past()) {
    fail_status(ORK_ERR_CONTEXT_FULL, "context full: ", c.n_past(), " + ", n, " tokens exceed the context of ",
                c.n_ctx(), " tokens");
  }
}

void check_tokens(const runtime::Context& c, const int32_t* tokens, int64_t n) {
  require(tokens, "tokens");
  const int64_t n_vocab = c.n_vocab();
  for (int64_t i = 0; i < n; ++i) {
    if (tokens[i] < 0 || tokens[i] >= n_vocab) {
      fail_status(ORK_ERR_INVALID_ARG, "token ", i, " is ", tokens[i], ", outside the vocabulary [0, ", n_vocab, ")");
    }
  }
}

// Where ork_eval puts the last token's logits when the caller set memory for them.
float* logits_target(ContextObj& c) {
  if (!c.logits_mem) return nullptr;
  return reinterpret_cast<float*>(static_cast<uint8_t*>(c.logits_mem->host) + c.logits_offset);
}

}  // namespace

}  // namespace ork::api

using namespace ork;
using namespace ork::api;

extern "C" {

const char* ork_last_error(void) { return t_last_error.c_str(); }

const char* ork_status_name(int status) {
  switch (status) {
    case ORK_OK: return "ORK_OK";
    case ORK_ERR_INVALID_ARG: return "ORK_ERR_INVALID_ARG";
    case ORK_ERR_BAD_HANDLE: return "ORK_ERR_BAD_HANDLE";
    case ORK_ERR_MODEL_FREED: return "ORK_ERR_MODEL_FREED";
    case ORK_ERR_LOAD: return "ORK_ERR_LOAD";
    case ORK_ERR_DEVICE: return "ORK_ERR_DEVICE";
    case ORK_ERR_CONTEXT_FULL: return "ORK_ERR_CONTEXT_FULL";
    case ORK_ERR_BUFFER_TOO_SMALL: return "ORK_ERR_BUFFER_TOO_SMALL";
    case ORK_ERR_OUT_OF_MEMORY: return "ORK_ERR_OUT_OF_MEMORY";
    case ORK_ERR_INTERNAL: return "ORK_ERR_INTERNAL";
    default: return "unknown status";
  }
}

void ork_model_options_init(ork_model_options* opts) {
  if (opts != nullptr) std::memset(opts, 0, sizeof *opts);
}

int ork_model_load(const char* path, const ork_model_options* opts, ork_model** out) {
  return guard(ORK_ERR_LOAD, [&] {
    require(out, "out");
    runtime::EngineOptions eo = engine_options(path, opts);
    ork_model_options o;
    ork_model_options_init(&o);
    if (opts != nullptr) o = *opts;
    auto obj = std::make_shared<ModelObj>();
    if (o.share_scratch_with != nullptr) {
      obj->shares_scratch = models().get(o.share_scratch_with, "share_scratch_with");
      if (obj->shares_scratch->freed) fail_status(ORK_ERR_BAD_HANDLE, "share_scratch_with was freed");
      eo.share_scratch_with = obj->shares_scratch->engine.get();
    }
    if (o.share_weights_with != nullptr) {
      obj->shares_weights = models().get(o.share_weights_with, "share_weights_with");
      if (obj->shares_weights->freed) fail_status(ORK_ERR_BAD_HANDLE, "share_weights_with was freed");
      eo.share_weights_with = obj->shares_weights->engine.get();
    }
    for (runtime::Engine* other : {eo.share_scratch_with, eo.share_weights_with}) {
      if (other != nullptr && other->device() == nullptr) {
        fail_status(ORK_ERR_INVALID_ARG, "sharing needs a model on the npu or sim device; that one runs on the cpu");
      }
    }
    try {
      obj->engine = std::make_unique<runtime::Engine>(eo);
    } catch (const npu::AllocError&) {
      throw;
    } catch (const runtime::CallerMemError& e) {
      fail_status(e.needed() > 0 ? ORK_ERR_BUFFER_TOO_SMALL : ORK_ERR_INVALID_ARG, e.what());
    } catch (const runtime::LoadError& e) {
      fail_status(ORK_ERR_LOAD, e.what());
    } catch (const Error& e) {
      // Past the file: the device (no NPU, no room, unsupported) refused.
      fail_status(ORK_ERR_DEVICE, e.what());
    }
    *out = reinterpret_cast<ork_model*>(models().add(std::move(obj)));
    return ORK_OK;
  });
}

int ork_model_free(ork_model* model) {
  return guard(ORK_ERR_INTERNAL, [&] {
    std::shared_ptr<ModelObj> m = models().remove(model, "model");
    m->freed = true;
    return ORK_OK;  // the Engine goes with the last context (or now)
  });
}

int ork_model_get_info(const ork_model* model, ork_model_info* out) {
  return guard(ORK_ERR_INTERNAL, [&] {
    auto m = models().get(model, "model");
    require(out, "out");
    const runtime::Engine& e = *m->engine;
    const model::Config& c = e.model().config();
    ork_model_info info{};
    info.n_vocab = int32_t(c.n_vocab);
    info.n_embd = int32_t(c.n_embd);
    info.n_layer = int32_t(c.n_layer);
    info.n_ctx_train = c.n_ctx_train;
    info.bos = e.model().tokenizer().bos();
    info.eos = e.model().tokenizer().eos();
    copy_name(info.device, sizeof info.device, e.device_name());
    const weights::Plan* p = e.plan();
    copy_name(info.residency, sizeof info.residency, p != nullptr ? weights::residency_name(p->mode) : "none");
    info.domains_used = p != nullptr ? p->domains_used : 0;
    *out = info;
    return ORK_OK;
  });
}

int ork_tokenize(const ork_model* model, const char* text, int add_bos, int32_t* tokens, int64_t capacity,
                 int64_t* n_tokens) {
  return guard(ORK_ERR_INVALID_ARG, [&] {
    auto m = models().get(model, "model");
    require(text, "text");
    require(n_tokens, "n_tokens");
    if (capacity < 0) fail_status(ORK_ERR_INVALID_ARG, "capacity ", capacity, " is negative");
    if (capacity > 0) require(tokens, "tokens");
    const std::vector<int32_t> ids = m->engine->model().tokenizer().encode(text, add_bos != 0, false);
    if (int64_t(ids.size()) > capacity) {
      *n_tokens = int64_t(ids.size());
      fail_status(ORK_ERR_BUFFER_TOO_SMALL, "tokenize: ", ids.size(), " tokens do not fit in ", capacity);
    }
    std::copy(ids.begin(), ids.end(), tokens);
    *n_tokens = int64_t(ids.size());
    return ORK_OK;
  });
}

int ork_detokenize(const ork_model* model, const int32_t* tokens, int64_t n_tokens, char* buf, uint64_t capacity,
                   uint64_t* n_bytes) {
  return guard(ORK_ERR_INVALID_ARG, [&] {
    auto m = models().get(model, "model");
    require(n_bytes, "n_bytes");
    if (n_tokens < 0) fail_status(ORK_ERR_INVALID_ARG, "n_tokens ", n_tokens, " is negative");
    if (n_tokens > 0) require(tokens, "tokens");
    if (capacity > 0) require(buf, "buf");
    const model::Tokenizer& tok = m->engine->model().tokenizer();
    std::vector<int32_t> ids(tokens, tokens + n_tokens);
    for (int64_t i = 0; i < n_tokens; ++i) {
      if (ids[size_t(i)] < 0 || ids[size_t(i)] >= tok.n_vocab()) {
        fail_status(ORK_ERR_INVALID_ARG, "token ", i, " is ", ids[size_t(i)], ", outside the vocabulary [0, ",
                    tok.n_vocab(), ")");
      }
    }
    const std::string text = tok.decode(ids);
    if (uint64_t(text.size()) + 1 > capacity) {
      *n_bytes = text.size();
      fail_status(ORK_ERR_BUFFER_TOO_SMALL, "detokenize: ", text.size() + 1, " bytes (with the NUL) do not fit in ",
                  capacity);
    }
    std::memcpy(buf, text.data(), text.size());
    buf[text.size()] = '\0';
    *n_bytes = text.size();
    return ORK_OK;
  });
}

int ork_context_create(ork_model* model, int64_t n_ctx, ork_context** out) {
  return guard(ORK_ERR_INVALID_ARG, [&] {
    auto m = models().get(model, "model");
    require(out, "out");
    if (n_ctx < 0 || n_ctx > (int64_t(1) << 24)) fail_status(ORK_ERR_INVALID_ARG, "n_ctx ", n_ctx, " is out of [0, 2^24]");
    auto c = std::make_shared<ContextObj>();
    c->model = m;
    c->ctx = std::make_unique<runtime::Context>(*m->engine, n_ctx);
    *out = reinterpret_cast<ork_context*>(contexts().add(std::move(c)));
    return ORK_OK;
  });
}

int ork_context_dup(ork_context* src, int copy_state, ork_context** out) {
  return guard(ORK_ERR_INVALID_ARG, [&] {
    auto s = contexts().get(src, "context");
    require(out, "out");
    check_model_alive(*s);
    auto c = std::make_shared<ContextObj>();
    c->model = s->model;
    {
      ContextLock lock(*s);
      c->ctx = s->ctx->dup(copy_state != 0);
    }
    *out = reinterpret_cast<ork_context*>(contexts().add(std::move(c)));
    return ORK_OK;
  });
}

int ork_context_free(ork_context* ctx) {
  return guard(ORK_ERR_INTERNAL, [&] {
    contexts().remove(ctx, "context");
    return ORK_OK;
  });
}

int ork_context_reset(ork_context* ctx) {
  return guard(ORK_ERR_INTERNAL, [&] {
    auto c = contexts().get(ctx, "context");
    ContextLock lock(*c);
    c->ctx->reset();
    return ORK_OK;
  });
}

int ork_context_n_past(const ork_context* ctx, int64_t* n_past) {
  return guard(ORK_ERR_INTERNAL, [&] {
    auto c = contexts().get(ctx, "context");
    require(n_past, "n_past");
    ContextLock lock(*c);
    *n_past = c->ctx->n_past();
    return ORK_OK;
  });
}

int ork_context_n_ctx(const ork_context* ctx, int64_t* n_ctx) {
  return guard(ORK_ERR_INTERNAL, [&] {
    auto c = contexts().get(ctx, "context");
    require(n_ctx, "n_ctx");
    *n_ctx = c->ctx->n_ctx();
    return ORK_OK;
  });
}

int ork_eval(ork_context* ctx, const int32_t* tokens, int64_t n, const float** logits) {
  return guard(ORK_ERR_INTERNAL, [&] {
    auto c = contexts().get(ctx, "context");
    check_model_alive(*c);
    ContextLock lock(*c);
    runtime::Context& rc = *c->ctx;
    check_fits(rc, n);
    check_tokens(rc, tokens, n);
    const float* result = nullptr;
    if (float* target = logits_target(*c)) {
      rc.eval_into(tokens, n, false, target, uint64_t(rc.n_vocab()));
      result = target;
    } else {
      result = rc.eval(std::vector<int32_t>(tokens, tokens + n));
    }
    if (logits != nullptr) *logits = result;
    return ORK_OK;
  });
}

int ork_embed_tokens(const ork_model* model, const int32_t* tokens, int64_t n, float* out, uint64_t capacity) {
  return guard(ORK_ERR_INVALID_ARG, [&] {
    auto m = models().get(model, "model");
    if (n <= 0) fail_status(ORK_ERR_INVALID_ARG, "embed: n_tokens is ", n, ", must be > 0");
    require(tokens, "tokens");
    require(out, "out");
    const model::Model& md = m->engine->model();
    const model::Config& c = md.config();
    for (int64_t i = 0; i < n; ++i) {
      if (tokens[i] < 0 || tokens[i] >= c.n_vocab) {
        fail_status(ORK_ERR_INVALID_ARG, "token ", i, " is ", tokens[i], ", outside the vocabulary [0, ", c.n_vocab, ")");
      }
    }
    uint64_t need = 0;
    if (__builtin_mul_overflow(uint64_t(n), uint64_t(c.n_embd), &need)) {
      fail_status(ORK_ERR_INVALID_ARG, "embed: ", n, " × ", c.n_embd, " floats overflow");
    }
    if (capacity < need) {
      fail_status(ORK_ERR_BUFFER_TOO_SMALL, "embed: the buffer holds ", capacity, " floats, ", need, " are needed");
    }
    model::Forward::embed_tokens(c, md.weights(), tokens, n, out);
    return ORK_OK;
  });
}

int ork_eval_into(ork_context* ctx, const int32_t* tokens, int64_t n, int all, float* out, uint64_t capacity) {
  return guard(ORK_ERR_INTERNAL, [&] {
    auto c = contexts().get(ctx, "context");
    check_model_alive(*c);
    require(out, "out");
    ContextLock lock(*c);
    runtime::Context& rc = *c->ctx;
    check_fits(rc, n);
    check_tokens(rc, tokens, n);
    uint64_t need = 0;
    if (__builtin_mul_overflow(uint64_t(all != 0 ? n : 1), uint64_t(rc.n_vocab()), &need)) {
      fail_status(ORK_ERR_INVALID_ARG, "eval: ", n, " × ", rc.n_vocab(), " logits overflow");
    }
    if (capacity < need) {
      fail_status(ORK_ERR_BUFFER_TOO_SMALL, "eval: the logits buffer holds ", capacity, " floats, ", need, " are needed");
    }
    rc.eval_into(tokens, n, all != 0, out, capacity);
    return ORK_OK;
  });
}

void ork_sampler_params_init(ork_sampler_params* p) {
  if (p == nullptr) return;
  const runtime::SamplerParams d;
  p->temperature = d.temperature;
  p->top_k = d.top_k;
  p->top_p = d.top_p;
  p->min_p = d.min_p;
  p->repeat_penalty = d.repeat_penalty;
  p->repeat_last_n = d.repeat_last_n;
  p->seed = 0;
}

int ork_sampler_create(const ork_sampler_params* p, ork_sampler** out) {
  return guard(ORK_ERR_INVALID_ARG, [&] {
    require(p, "params");
    require(out, "out");
    runtime::SamplerParams sp;
    sp.temperature = p->temperature;
    sp.top_k = p->top_k;
    sp.top_p = p->top_p;
    sp.min_p = p->min_p;
    sp.repeat_penalty = p->repeat_penalty;
    sp.repeat_last_n = p->repeat_last_n;
    sp.seed = p->seed;
    auto s = std::make_shared<SamplerObj>();
    s->sampler = std::make_unique<runtime::Sampler>(sp);
    *out = reinterpret_cast<ork_sampler*>(samplers().add(std::move(s)));
    return ORK_OK;
  });
}

int ork_sampler_free(ork_sampler* s) {
  return guard(ORK_ERR_INTERNAL, [&] {
    samplers().remove(s, "sampler");
    return ORK_OK;
  });
}

int ork_sample(ork_sampler* s, const float* logits, int32_t n_vocab, int32_t* token) {
  return guard(ORK_ERR_INVALID_ARG, [&] {
    auto so = samplers().get(s, "sampler");
    require(logits, "logits");
    require(token, "token");
    if (n_vocab <= 0) fail_status(ORK_ERR_INVALID_ARG, "n_vocab ", n_vocab, " must be > 0");
    const int32_t t = so->sampler->sample(logits, n_vocab);
    so->sampler->accept(t);
    *token = t;
    return ORK_OK;
  });
}

int ork_generate(ork_context* ctx, ork_sampler* s, const int32_t* prompt, int64_t n_prompt, int64_t n_predict,
                 int32_t* out, int64_t capacity, int64_t* n_out, ork_token_callback on_token, void* user) {
  return guard(ORK_ERR_INTERNAL, [&] {
    auto c = contexts().get(ctx, "context");
    auto so = samplers().get(s, "sampler");
    check_model_alive(*c);
    require(n_out, "n_out");
    if (n_predict < 0) fail_status(ORK_ERR_INVALID_ARG, "n_predict ", n_predict, " is negative");
    if (capacity < 0) fail_status(ORK_ERR_INVALID_ARG, "capacity ", capacity, " is negative");
    if (capacity > 0) require(out, "out");
    ContextLock lock(*c);
    runtime::Context& rc = *c->ctx;
    if (rc.n_past() != 0) fail_status(ORK_ERR_INVALID_ARG, "generate: the context is not empty (ork_context_reset it)");
    if (n_prompt <= 0) fail_status(ORK_ERR_INVALID_ARG, "generate: the prompt is empty");
    if (n_prompt >= rc.n_ctx()) {
      fail_status(ORK_ERR_CONTEXT_FULL, "generate: the prompt of ", n_prompt, " tokens leaves no room in the context of ",
                  rc.n_ctx(), " tokens");
    }
    check_tokens(rc, prompt, n_prompt);
    const std::vector<int32_t> p(prompt, prompt + n_prompt);
    int64_t count = 0;
    runtime::generate(rc, *so->sampler, p, n_predict, [&](int32_t id) {
      if (count < capacity) out[count] = id;
      ++count;
      return on_token == nullptr || on_token(id, user) == 0;
    });
    *n_out = count;
    if (count > capacity) {
      fail_status(ORK_ERR_BUFFER_TOO_SMALL, "generate: ", count, " tokens generated, the buffer holds ", capacity);
    }
    return ORK_OK;
  });
}

}  // extern "C"
