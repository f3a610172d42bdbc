#include "runtime/engine.h"

#include "core/error.h"

namespace ork::runtime {

Engine::Engine(const EngineOptions& options) : options_(options) {
  ORK_CHECK(options.threads >= 0 && options.threads <= 1024, "threads: ", options.threads,
            " is out of range [0, 1024]");
  ORK_CHECK(options.device == "cpu", "device '", options.device,
            "' cannot run models yet (supported: cpu)");
  model_ = model::Model::load(options.model_path);
  pool_ = std::make_unique<ThreadPool>(options.threads);
  backend_ = std::make_unique<model::CpuMatmul>(*pool_);
}

Engine::~Engine() = default;

}  // namespace ork::runtime
