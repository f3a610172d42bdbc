// The C API's memory functions: ork_query_mem, fd import, caller memory for logits.
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "api/handles.h"

using namespace ork;
using namespace ork::api;

namespace {

// Planned beside `other` (share_scratch_with; may be null): its weights per domain, and the IOVA window
// bytes they took when this model was planned.
void fill_beside(const runtime::Engine* other, const std::vector<uint64_t>& taken, ork_mem_info& info) {
  if (other == nullptr) return;
  const runtime::EngineMemory om = other->memory();
  for (uint32_t d = 0; d < ORK_MAX_DOMAINS; ++d) {
    info.beside_weight_bytes[d] = d < om.weight_device_bytes.size() ? om.weight_device_bytes[d] : 0;
    info.beside_window_bytes[d] = d < taken.size() ? taken[d] : 0;
  }
}

void fill_model(const runtime::Engine& e, ork_mem_info& info) {
  const runtime::EngineMemory m = e.memory();
  info.weight_bytes = m.weight_bytes;
  info.weight_shared_bytes = m.weight_shared_bytes;
  info.weights_shared = m.weights_shared;
  info.internal_device_bytes = m.scratch_bytes;
  // A scratch of its own would take scratch_own_need; shared, this model adds only what it grew.
  info.internal_shared_saving = m.scratch_shared && m.scratch_own_need > 0 ? m.scratch_own_need : 0;
  info.weight_external_bytes = m.weight_external_bytes;
  info.internal_external_bytes = m.scratch_external_bytes;
  const npu::Device* dev = e.device();
  if (dev == nullptr) return;
  fill_beside(e.options().share_scratch_with, m.window_taken_bytes, info);
  info.window_bytes = dev->caps().window_bytes;
  const npu::Counters c = dev->counters();
  info.total_dma_bytes = c.total_mapped_bytes;
  info.peak_total_dma_bytes = c.peak_total_mapped_bytes;
  info.n_domains = std::min<uint32_t>(dev->caps().domains, ORK_MAX_DOMAINS);
  for (uint32_t d = 0; d < info.n_domains; ++d) {
    ork_mem_domain& dm = info.domains[d];
    dm.weight_bytes = d < m.weight_device_bytes.size() ? m.weight_device_bytes[d] : 0;
    dm.internal_bytes = d < m.scratch_device_bytes.size() ? m.scratch_device_bytes[d] : 0;
    dm.total_bytes = c.mapped_bytes[d];
    dm.peak_total_bytes = c.peak_mapped_bytes[d];
  }
  if (info.n_domains > 0) info.domains[0].io_bytes = c.imported_bytes;  // imports go to domain 0
}

}  // namespace

extern "C" {

int ork_query_mem(const ork_model* model, const ork_context* ctx, ork_mem_info* out) {
  return guard(ORK_ERR_INTERNAL, [&] {
    if ((model == nullptr) == (ctx == nullptr)) {
      fail_status(ORK_ERR_INVALID_ARG, "ork_query_mem: give exactly one of model and ctx");
    }
    if (out == nullptr) fail_status(ORK_ERR_INVALID_ARG, "out is NULL");
    ork_mem_info info{};
    if (model != nullptr) {
      auto m = models().get(model, "model");
      fill_model(*m->engine, info);
      info.internal_bytes = info.internal_device_bytes;
    } else {
      auto c = contexts().get(ctx, "context");
      check_model_alive(*c);
      ContextLock lock(*c);
      fill_model(*c->model->engine, info);
      const runtime::Context::Memory cm = c->ctx->memory();
      info.kv_cache_bytes = cm.kv_bytes;
      info.scratch_host_bytes = cm.scratch_bytes;
      info.io_bytes = cm.logits_bytes;
      info.io_external_bytes = c->logits_mem ? uint64_t(c->ctx->n_vocab()) * sizeof(float) : 0;
      info.internal_bytes = info.internal_device_bytes + cm.kv_bytes + cm.scratch_bytes;
    }
    *out = info;
    return ORK_OK;
  });
}

int ork_query_plan(const char* path, const ork_model_options* opts, int64_t n_ctx, ork_mem_info* out) {
  return guard(ORK_ERR_LOAD, [&] {
    if (out == nullptr) fail_status(ORK_ERR_INVALID_ARG, "out is NULL");
    if (n_ctx < 0 || n_ctx > (int64_t(1) << 24)) fail_status(ORK_ERR_INVALID_ARG, "n_ctx ", n_ctx, " is out of [0, 2^24]");
    runtime::EngineOptions eo = engine_options(path, opts);
    // The models shared with: held for the call (another thread may free their handles meanwhile).
    std::shared_ptr<ModelObj> scratch_with, weights_with;
    if (opts != nullptr && opts->share_scratch_with != nullptr) {
      scratch_with = models().get(opts->share_scratch_with, "share_scratch_with");
      if (scratch_with->freed) fail_status(ORK_ERR_BAD_HANDLE, "share_scratch_with was freed");
      eo.share_scratch_with = scratch_with->engine.get();
    }
    if (opts != nullptr && opts->share_weights_with != nullptr) {
      weights_with = models().get(opts->share_weights_with, "share_weights_with");
      if (weights_with->freed) fail_status(ORK_ERR_BAD_HANDLE, "share_weights_with was freed");
      eo.share_weights_with = weights_with->engine.get();
    }
    for (runtime::Engine* other : {eo.share_scratch_with, eo.share_weights_with}) {
      if (other != nullptr && other->device() == nullptr) {
        fail_status(ORK_ERR_INVALID_ARG, "sharing needs a model on the npu or sim device; that one runs on the cpu");
      }
    }
    const runtime::MemoryPlan p = runtime::plan_memory(eo, n_ctx);
    ork_mem_info info{};
    info.n_domains = std::min<uint32_t>(p.domains_used, ORK_MAX_DOMAINS);
    info.weight_shared_bytes = p.weight_shared_bytes;
    info.weights_shared = p.weights_shared;
    info.internal_shared_saving = p.scratch_shared_saving;
    for (uint32_t d = 0; d < info.n_domains; ++d) {
      info.domains[d].weight_bytes = d < p.weight_device_bytes.size() ? p.weight_device_bytes[d] : 0;
      info.domains[d].internal_bytes = d < p.scratch_device_bytes.size() ? p.scratch_device_bytes[d] : 0;
      info.internal_mem_bytes[d] = d < p.scratch_caller_bytes.size() ? p.scratch_caller_bytes[d] : 0;
      info.weight_bytes += info.domains[d].weight_bytes;
      info.internal_device_bytes += info.domains[d].internal_bytes;
    }
    if (p.mode == "none") info.weight_bytes = p.model_file_bytes;  // cpu: the mapped file
    info.kv_cache_bytes = p.kv_cache_bytes;
    info.scratch_host_bytes = p.host_scratch_bytes;
    info.internal_bytes = info.internal_device_bytes + p.kv_cache_bytes + p.host_scratch_bytes;
    info.total_dma_bytes = p.dma_bytes;
    info.window_bytes = p.window_capacity_bytes;
    fill_beside(eo.share_scratch_with, p.window_taken_bytes, info);
    *out = info;
    return ORK_OK;
  });
}

int ork_mem_import_fd(ork_model* model, int fd, uint64_t size, ork_mem** out) {
  return guard(ORK_ERR_DEVICE, [&] {
    auto m = models().get(model, "model");
    if (out == nullptr) fail_status(ORK_ERR_INVALID_ARG, "out is NULL");
    if (fd < 0) fail_status(ORK_ERR_INVALID_ARG, "fd ", fd, " is not a file descriptor");
    if (size == 0 || size > (uint64_t(1) << 40)) fail_status(ORK_ERR_INVALID_ARG, "import size ", size, " is out of (0, 1 TiB]");
    struct stat st {};
    if (::fstat(fd, &st) != 0) fail_status(ORK_ERR_INVALID_ARG, "fd ", fd, ": ", std::strerror(errno));
    if (st.st_size >= 0 && S_ISREG(st.st_mode) && uint64_t(st.st_size) < size) {
      fail_status(ORK_ERR_BUFFER_TOO_SMALL, "fd ", fd, " holds ", st.st_size, " bytes, ", size, " asked");
    }
    auto obj = std::make_shared<MemObj>();
    obj->model = m;
    obj->size = size;
    if (npu::Device* dev = m->engine->device()) {
      obj->buffer = dev->import_fd(fd, size, 0);
      obj->host = obj->buffer.host();
    } else {
      void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) fail_status(ORK_ERR_DEVICE, "cannot map fd ", fd, ": ", std::strerror(errno));
      obj->host = p;
      obj->host_mapped = true;
    }
    *out = reinterpret_cast<ork_mem*>(mems().add(std::move(obj)));
    return ORK_OK;
  });
}

int ork_mem_info_get(const ork_mem* mem, void** host, uint64_t* size) {
  return guard(ORK_ERR_INTERNAL, [&] {
    auto m = mems().get(mem, "mem");
    if (host != nullptr) *host = m->host;
    if (size != nullptr) *size = m->size;
    return ORK_OK;
  });
}

int ork_mem_free(ork_mem* mem) {
  return guard(ORK_ERR_INTERNAL, [&] {
    auto m = mems().get(mem, "mem");
    if (m->users > 0) {
      fail_status(ORK_ERR_INVALID_ARG, "mem is still where ", m->users.load(),
                  " context(s) write their logits: ork_context_set_logits(ctx, NULL, 0) first");
    }
    mems().remove(mem, "mem");
    return ORK_OK;
  });
}

int ork_context_set_logits(ork_context* ctx, ork_mem* mem, uint64_t offset) {
  return guard(ORK_ERR_INVALID_ARG, [&] {
    auto c = contexts().get(ctx, "context");
    check_model_alive(*c);
    std::shared_ptr<MemObj> m;
    if (mem != nullptr) {
      m = mems().get(mem, "mem");
      const uint64_t need = uint64_t(c->ctx->n_vocab()) * sizeof(float);
      if (offset % alignof(float) != 0) fail_status(ORK_ERR_INVALID_ARG, "logits offset ", offset, " is not 4-byte aligned");
      if (offset > m->size || m->size - offset < need) {
        fail_status(ORK_ERR_BUFFER_TOO_SMALL, "logits need ", need, " bytes at offset ", offset, " of a ", m->size,
                    "-byte memory");
      }
    }
    ContextLock lock(*c);
    if (c->logits_mem) c->logits_mem->users--;
    c->logits_mem = m;
    c->logits_offset = m ? offset : 0;
    if (m) m->users++;
    return ORK_OK;
  });
}

int ork_eval_embd(ork_context* ctx, const ork_mem* mem, uint64_t offset, int64_t n_tokens, const float** logits) {
  return guard(ORK_ERR_INTERNAL, [&] {
    auto c = contexts().get(ctx, "context");
    auto m = mems().get(mem, "mem");
    check_model_alive(*c);
    ContextLock lock(*c);
    runtime::Context& rc = *c->ctx;
    if (n_tokens <= 0) fail_status(ORK_ERR_INVALID_ARG, "eval_embd: n_tokens is ", n_tokens, ", must be > 0");
    if (n_tokens > rc.n_ctx() - rc.n_past()) {
      fail_status(ORK_ERR_CONTEXT_FULL, "context full: ", rc.n_past(), " + ", n_tokens,
                  " tokens exceed the context of ", rc.n_ctx(), " tokens");
    }
    const uint64_t n_embd = uint64_t(rc.engine().model().config().n_embd);
    uint64_t need = 0;
    if (__builtin_mul_overflow(uint64_t(n_tokens), n_embd * sizeof(float), &need)) {
      fail_status(ORK_ERR_INVALID_ARG, "eval_embd: ", n_tokens, " × ", n_embd, " floats overflow");
    }
    if (offset % alignof(float) != 0) {
      fail_status(ORK_ERR_INVALID_ARG, "embeddings offset ", offset, " is not 4-byte aligned");
    }
    if (offset > m->size || m->size - offset < need) {
      fail_status(ORK_ERR_BUFFER_TOO_SMALL, "embeddings of ", n_tokens, " tokens need ", need, " bytes at offset ",
                  offset, " of a ", m->size, "-byte memory");
    }
    const auto* embd = reinterpret_cast<const float*>(static_cast<const uint8_t*>(m->host) + offset);
    const float* result = nullptr;
    if (c->logits_mem) {
      float* target = reinterpret_cast<float*>(static_cast<uint8_t*>(c->logits_mem->host) + c->logits_offset);
      result = rc.eval_embd(embd, n_tokens, false, target, uint64_t(rc.n_vocab()));
    } else {
      result = rc.eval_embd(embd, n_tokens);
    }
    if (logits != nullptr) *logits = result;
    return ORK_OK;
  });
}

}  // extern "C"
