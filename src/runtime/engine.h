// runtime::Engine — a loaded model bound to a compute device and a thread pool.
//
// Owns the Model, the persistent ThreadPool (created once; no thread creation per token) and the
// MatmulBackend every linear layer runs through. Contexts (runtime/context.h) borrow the Engine,
// which must outlive them. Thread-safety: an Engine is used by one Context's eval at a time.
#pragma once

#include <memory>
#include <string>

#include "core/thread_pool.h"
#include "model/matmul_backend.h"
#include "model/model.h"

namespace ork::runtime {

struct EngineOptions {
  std::string model_path;
  std::string device = "cpu";  // "cpu" (the NPU devices arrive with matmul routing)
  int threads = 0;             // 0: all cores
};

class Engine {
 public:
  // Loads the model and opens the device. Throws ork::Error naming what is wrong.
  explicit Engine(const EngineOptions& options);
  ~Engine();

  const model::Model& model() const { return *model_; }
  ThreadPool& pool() { return *pool_; }
  model::MatmulBackend& backend() { return *backend_; }
  const EngineOptions& options() const { return options_; }
  const char* device_name() const { return backend_->name(); }
  int threads() const { return pool_->size(); }

 private:
  EngineOptions options_;
  std::unique_ptr<model::Model> model_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<model::MatmulBackend> backend_;
};

}  // namespace ork::runtime
