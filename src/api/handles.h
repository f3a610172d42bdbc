// api handles — the objects behind the C API's opaque handles, the registry that validates them, and
// the status/error plumbing (thread-local last error).
//
// A handle is the address of its object. Every object lives in a Registry (address → shared_ptr)
// from creation to its *_free; a call first looks its handle up, so a NULL, freed or made-up handle
// is reported (ORK_ERR_BAD_HANDLE) without being dereferenced, and the shared_ptr it gets keeps the
// object alive for the call even when another thread frees the handle meanwhile.
// Ownership: a context holds its model object (which holds its Engine), so an Engine outlives its
// Contexts even when the model handle is freed first (the context then reports ORK_ERR_MODEL_FREED).
// A model loaded with share_*_with holds the model it shares with.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/error.h"
#include "npu/device.h"
#include "ork/ork.h"
#include "runtime/context.h"
#include "runtime/engine.h"
#include "runtime/sampler.h"

namespace ork::api {

// An error with the status the C API returns for it.
struct StatusError : Error {
  StatusError(int s, const std::string& msg) : Error(msg), status(s) {}
  int status;
};

template <class... Args>
[[noreturn]] void fail_status(int status, const Args&... args) {
  throw StatusError(status, str_cat(args...));
}

struct ModelObj {
  std::shared_ptr<ModelObj> shares_scratch;  // keeps the models this one shares with alive
  std::shared_ptr<ModelObj> shares_weights;
  std::unique_ptr<runtime::Engine> engine;
  std::atomic<bool> freed{false};
  ~ModelObj() { engine.reset(); }  // before the shared models it references
};

struct MemObj {
  std::shared_ptr<ModelObj> model;  // keeps the device alive
  npu::Buffer buffer;               // npu/sim: the imported buffer
  void* host = nullptr;             // CPU address
  uint64_t size = 0;
  bool host_mapped = false;         // cpu models: host is our own mmap of the fd
  std::atomic<int> users{0};        // contexts writing logits here
  ~MemObj();
};

struct ContextObj {
  std::shared_ptr<ModelObj> model;
  std::unique_ptr<runtime::Context> ctx;
  std::mutex mutex;  // one call on this context at a time (taken through ContextLock)
  std::atomic<std::thread::id> holder{};  // the thread inside a call on this context, if any
  std::shared_ptr<MemObj> logits_mem;
  uint64_t logits_offset = 0;
  ~ContextObj();
};

// Holds a context's mutex for one API call. Other threads wait their turn; the thread that already
// holds it (a call made from inside one of the context's own callbacks, e.g. ork_generate's
// on_token) gets ORK_ERR_INVALID_ARG instead of a deadlock.
class ContextLock {
 public:
  explicit ContextLock(ContextObj& c) : c_(c) {
    if (c.holder.load() == std::this_thread::get_id()) {
      fail_status(ORK_ERR_INVALID_ARG, "context: called from inside a callback of a call on the same context "
                  "(the context is busy with that call; use another context or return from the callback)");
    }
    c.mutex.lock();
    c.holder.store(std::this_thread::get_id());
  }
  ~ContextLock() {
    c_.holder.store(std::thread::id{});
    c_.mutex.unlock();
  }
  ContextLock(const ContextLock&) = delete;
  ContextLock& operator=(const ContextLock&) = delete;

 private:
  ContextObj& c_;
};

struct SamplerObj {
  std::unique_ptr<runtime::Sampler> sampler;
};

template <class T>
class Registry {
 public:
  T* add(std::shared_ptr<T> obj) {
    T* key = obj.get();
    std::lock_guard lock(mutex_);
    map_.emplace(key, std::move(obj));
    return key;
  }
  std::shared_ptr<T> get(const void* key, const char* what) {
    if (key == nullptr) fail_status(ORK_ERR_BAD_HANDLE, what, " is NULL");
    std::lock_guard lock(mutex_);
    const auto it = map_.find(key);
    if (it == map_.end()) fail_status(ORK_ERR_BAD_HANDLE, what, " ", key, " is not a live handle (freed or never created)");
    return it->second;
  }
  std::shared_ptr<T> remove(const void* key, const char* what) {
    if (key == nullptr) fail_status(ORK_ERR_BAD_HANDLE, what, " is NULL");
    std::lock_guard lock(mutex_);
    const auto it = map_.find(key);
    if (it == map_.end()) fail_status(ORK_ERR_BAD_HANDLE, what, " ", key, " is not a live handle (freed or never created)");
    std::shared_ptr<T> obj = std::move(it->second);
    map_.erase(it);
    return obj;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<const void*, std::shared_ptr<T>> map_;
};

Registry<ModelObj>& models();
Registry<ContextObj>& contexts();
Registry<SamplerObj>& samplers();
Registry<MemObj>& mems();

// The context's model, or ORK_ERR_MODEL_FREED when its handle was freed.
void check_model_alive(const ContextObj& c);

void set_last_error(const std::string& message);

// The runtime options for loading `path` with `opts` (NULL: defaults), sharing aside; bad values are
// ORK_ERR_INVALID_ARG (StatusError).
runtime::EngineOptions engine_options(const char* path, const ork_model_options* opts);

// Runs f (returning an ork_status), turning exceptions into a status and the thread's last error:
// StatusError → its status; npu::AllocError → ORK_ERR_DEVICE; other ork::Error → `error_status`;
// std::bad_alloc → ORK_ERR_OUT_OF_MEMORY; anything else → ORK_ERR_INTERNAL.
template <class F>
int guard(int error_status, F&& f) noexcept {
  try {
    return f();
  } catch (const StatusError& e) {
    set_last_error(e.what());
    return e.status;
  } catch (const npu::AllocError& e) {
    set_last_error(e.what());
    return ORK_ERR_DEVICE;
  } catch (const Error& e) {
    set_last_error(e.what());
    return error_status;
  } catch (const std::bad_alloc&) {
    set_last_error("out of memory");
    return ORK_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(e.what());
    return ORK_ERR_INTERNAL;
  } catch (...) {
    set_last_error("unknown exception");
    return ORK_ERR_INTERNAL;
  }
}

}  // namespace ork::api
