// runtime::Engine — a loaded model bound to a compute device and a thread pool.
//
// Owns the Model, the persistent ThreadPool (created once; no thread creation per token) and the
// MatmulBackend every linear layer runs through:
//   cpu       ops::matmul on the GGUF blocks (f32 accumulation), or with cpu_int8 the w8a8 int8 path;
//   npu, sim  the NPU through the rknpu driver or its simulator: a weights::Plan (resident in IOMMU
//             domains, or streamed), a weights::Cache, a Prefetcher when streaming, NpuMatmul.
// Contexts (runtime/context.h) borrow the Engine, which must outlive them.
// Thread-safety: one Context's eval at a time per Engine.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "model/matmul_backend.h"
#include "model/model.h"
#include "npu/device.h"
#include "weights/cache.h"
#include "weights/plan.h"
#include "weights/prefetcher.h"
#include "weights/store.h"

namespace ork::runtime {

struct EngineOptions {
  std::string model_path;
  std::string device = "cpu";  // cpu | npu | sim | auto (npu when present, else cpu)
  bool cpu_int8 = false;       // cpu: run matmuls as w8a8 int8 (the NPU path's reference)
  int threads = 0;             // 0: all cores
  bool exact = false;          // CPU matmul: true = f32-decode reference path, false = fast SIMD path
  npu::DeviceOptions npu;      // simulator knobs (kind is set from `device`)
  weights::Residency residency = weights::Residency::kAuto;
  uint64_t wcache_budget_bytes = uint64_t(3072) << 20;  // ORK_WCACHE_BUDGET_MB, --wcache-budget-mb
  int64_t m_max = 128;          // rows per device matmul call
  std::string persist_path;     // .orkpack cache (ORK_PERSIST, --persist); "" = none
};

// What the weights did on the device (see `ork run --stats`).
struct ResidencyStats {
  std::string mode;             // resident | stream | none (cpu)
  uint32_t domains_used = 0;
  std::vector<uint64_t> per_domain_bytes;
  uint64_t resident_bytes = 0;  // weight bytes mapped now
  uint64_t evictions = 0;
  uint64_t iova_wall_hits = 0;
  uint64_t loads = 0;
  uint64_t bytes_streamed = 0;  // bytes loaded after the initial load
  uint64_t domain_switches = 0;
  double stall_ms = 0;
  double load_ms = 0;
  double prefetch_hidden_fraction = 0;  // 1 − stall / load
  uint64_t loaded = 0;          // weights served from the .orkpack
  uint64_t packed = 0;          // weights packed from the GGUF
  std::string to_json() const;
};

class Engine {
 public:
  // Loads the model and opens the device (resident plans load their weights here). Throws ork::Error
  // naming what is wrong.
  explicit Engine(const EngineOptions& options);
  ~Engine();

  const model::Model& model() const { return *model_; }
  ThreadPool& pool() { return *pool_; }
  model::MatmulBackend& backend() { return *backend_; }
  const EngineOptions& options() const { return options_; }
  const char* device_name() const { return backend_->name(); }
  int threads() const { return pool_->size(); }

  npu::Device* device() { return device_.get(); }           // null on the CPU
  const weights::Plan* plan() const { return plan_.get(); }  // null on the CPU
  ResidencyStats residency_stats() const;

 private:
  EngineOptions options_;
  std::unique_ptr<model::Model> model_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<npu::Device> device_;
  std::unique_ptr<weights::Store> store_;
  std::unique_ptr<weights::Plan> plan_;
  std::unique_ptr<weights::Cache> cache_;
  std::unique_ptr<weights::Prefetcher> prefetcher_;
  std::unique_ptr<model::MatmulBackend> backend_;
};

}  // namespace ork::runtime
