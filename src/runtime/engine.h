// runtime::Engine — a loaded model bound to a compute device and a thread pool.
//
// Owns the Model, the persistent ThreadPool (created once; no thread creation per token) and the
// MatmulBackend every linear layer runs through:
//   cpu       ops::matmul on the GGUF blocks (f32 accumulation), or with cpu_int8 the w8a8 int8 path;
//   npu, sim  the NPU through the rknpu driver or its simulator: a weights::Plan (resident in IOMMU
//             domains, or streamed), a weights::Cache, a Prefetcher when streaming, NpuMatmul.
// Contexts (runtime/context.h) borrow the Engine, which must outlive them.
// Thread-safety: several Contexts of one Engine may eval from several threads at once; their forward
// passes are serialized by forward_mutex() (the backend, its device scratch and the pool are shared).
// Engines that share a scratch (EngineOptions::share_scratch_with) share that mutex too.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "model/kv_type.h"
#include "model/matmul_backend.h"
#include "model/model.h"
#include "npu/device.h"
#include "runtime/npu_wtype.h"
#include "runtime/schedule.h"
#include "weights/cache.h"
#include "weights/expert_prefetch.h"
#include "weights/modeled_loads.h"
#include "runtime/host_work_meter.h"
#include "weights/plan.h"
#include "weights/prefetcher.h"
#include "weights/store.h"

namespace ork::runtime {

class Engine;
class HybridMatmul;
class NpuMatmul;
struct ScheduleStats;

// Caller memory ("allocate outside"): an fd (a dma-buf; a memfd on the simulator) and its bytes.
struct ExternalMemory {
  int fd = -1;
  uint64_t size = 0;
};

// The model file cannot be loaded (Model::load failed: a missing, corrupt or unsupported file). The
// C API maps it to ORK_ERR_LOAD; every other error of loading an Engine is the device's.
class LoadError : public Error {
 public:
  explicit LoadError(const std::string& msg) : Error(msg) {}
};

// Caller memory that cannot be used: too small for its domain (needed > 0: the bytes that domain
// needs), or not usable at all (needed == 0).
class CallerMemError : public Error {
 public:
  CallerMemError(const std::string& msg, uint32_t domain, uint64_t needed)
      : Error(msg), domain_(domain), needed_(needed) {}
  uint32_t domain() const { return domain_; }
  uint64_t needed() const { return needed_; }

 private:
  uint32_t domain_;
  uint64_t needed_;
};

// For the weights (needed == 0: a streaming plan, a wrong count).
class WeightMemError : public CallerMemError {
  using CallerMemError::CallerMemError;
};

// For the matmul scratch (needed == 0: a wrong count, a shared scratch, cpu).
class ScratchMemError : public CallerMemError {
  using CallerMemError::CallerMemError;
};

struct EngineOptions {
  std::string model_path;
  std::string device = "cpu";  // cpu | npu | sim | auto (npu when present, else cpu)
  bool cpu_int8 = false;       // cpu: run matmuls as w8a8 int8 (the NPU path's reference)
  std::string cpu_int4;        // cpu: run matmuls through int4 weights (Int4Scheme, e.g. "w4a8"); "" off
  int threads = 0;             // 0: all cores
  bool pin_threads = false;    // bind the pool's threads to CPUs, fastest first (ThreadPool::pin_order)
  bool exact = false;          // CPU matmul: true = f32-decode reference path, false = fast SIMD path
  npu::DeviceOptions npu;      // simulator knobs (kind is set from `device`)
  weights::Residency residency = weights::Residency::kAuto;
  uint64_t wcache_budget_bytes = uint64_t(3072) << 20;  // ORK_WCACHE_BUDGET_MB, --wcache-budget-mb
  // Streamed plans: host memory for packed weights kept between their loads onto the device, so each
  // weight is packed once (weights::HostPacked; ORK_WCACHE_HOST_MB, --wcache-host-mb). kAutoHostBudget:
  // the packed size of all weights, capped at half of MemAvailable at load. Resident plans keep none
  // (their device buffers already hold every weight).
  static constexpr uint64_t kAutoHostBudget = ~uint64_t(0);
  uint64_t wcache_host_bytes = kAutoHostBudget;
  // npu/sim, streamed MoE: whether decode names the predictor's guess of the next layer's experts to
  // the prefetcher (weights/expert_prefetch.h; --expert-prefetch). Never changes the outputs.
  weights::ExpertPrefetch expert_prefetch = weights::ExpertPrefetch::kPredict;
  int64_t m_max = 128;          // rows per device matmul call
  std::string persist_path;     // .orkpack cache (ORK_PERSIST, --persist); "" = none
  bool evict_src = false;       // drop GGUF pages of packed weights (ORK_EVICT_SRC, --evict-src)
  std::string tokenizer_pre;     // non-empty: overrides tokenizer.ggml.pre (--tokenizer-pre)
  // npu/sim: the device form of the linear weights, and for i4a4 of the activations
  // (runtime/npu_wtype.h; --npu-wtype). Any schedule: its CPU calls use the same int4 scheme.
  NpuWtype npu_wtype = NpuWtype::kI8;
  // npu/sim: where each linear runs (runtime/schedule.h; --schedule). npu: all on the device.
  Schedule schedule = Schedule::kNpu;
  // Element type of its Contexts' KV caches (--kv-type); unset: kv_type_of() decides.
  std::optional<model::KvType> kv_type;
  // Its Contexts' sliding-window layers keep a ring of window + m_max − 1 KV rows instead of n_ctx
  // (runtime/swa_ring.h; the default): the same logits, memory bounded by the window. Such contexts
  // roll back only as far as the ring holds (Context::keepable); false (--no-swa-ring): full caches.
  bool swa_ring = true;

  // Sharing with an Engine loaded earlier (npu/sim only; it must outlive this one). Either one makes
  // this Engine use that Engine's Device (the device options above are then ignored).
  //  share_scratch_with: one device matmul scratch for both, per domain the larger need; their
  //    forward passes are serialized by one mutex (models that run one after another). The two are
  //    planned together: this Engine's weights fill only what that Engine's weights leave of each
  //    domain's window (weights::PlanOptions::taken) — a speculative draft loaded first, resident,
  //    then its target, resident in the rest or streamed through it.
  //  share_weights_with: every linear weight whose packed bytes and scales are identical to one of
  //    that Engine's (compared by content, not name) runs on its resident copy and is not loaded
  //    again. That Engine's plan must be resident (else nothing is shared).
  Engine* share_scratch_with = nullptr;
  Engine* share_weights_with = nullptr;

  // npu/sim, resident plans only: the weights' device memory from the caller ("allocate outside",
  // the SDK's RKNN_FLAG_MEM_ALLOC_OUTSIDE), one per domain the plan uses (weight_mem[d] for domain
  // d), each at least MemoryPlan::weight_device_bytes[d] (= weights::Cache::arena_bytes). Each is
  // imported into its domain (npu::Device::import_fd) and the packed slices are placed in it as
  // views; ork allocates no weight buffer. The caller keeps the fds. Empty: ork allocates.
  // Throws WeightMemError for a streaming plan, a wrong count or a short memory.
  std::vector<ExternalMemory> weight_mem;

  // npu/sim: the matmul scratch's device memory ("internal memory", the SDK's rknn_set_internal_mem)
  // from the caller, one per domain of the plan (scratch_mem[d] for domain d, d < MemoryPlan::
  // domains_used), each at least MemoryPlan::scratch_caller_bytes[d]; a domain that needs 0 bytes
  // ignores its entry. Each is imported into its domain and A, C and the register commands are placed
  // in it as views (npu::MatmulScratch::place); the task arrays stay small buffers of ork's (the
  // driver reads them through a kernel mapping). The caller keeps the fds. Empty: ork allocates.
  // Throws ScratchMemError for a wrong count, a short memory, or with share_scratch_with.
  std::vector<ExternalMemory> scratch_mem;
};

// The KV cache type of `o`'s Contexts: o.kv_type when set, else f16 (llama.cpp's default), or f32 with
// `exact` (the float64 reference test compares the exact path at 1e-4; f16 keys alone move logits by
// more than that).
model::KvType kv_type_of(const EngineOptions& o);

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
  // Streamed plans: how acquires found loaded units (weights::CacheStats): prefetched and ready,
  // prefetch still loading, absent; prefetched units evicted unused and their bytes.
  uint64_t prefetch_hits = 0, prefetch_late = 0, prefetch_misses = 0;
  uint64_t prefetch_wasted = 0, prefetch_wasted_bytes = 0;
  // Streamed MoE with expert-sized slots (weights::Plan): the slot bytes and how many the budget holds.
  uint64_t expert_slot_bytes = 0;
  uint32_t expert_slots = 0;
  // sim, streamed plans: the same in the board model's time (weights/modeled_loads.h)
  bool modeled = false;
  double modeled_load_ms = 0, modeled_stall_ms = 0, modeled_prefetch_hidden_fraction = 0;
  // sim, streamed MoE: how the routed experts' units were found when their matmul needed them, in
  // the board model's time (weights::ModeledRoutedStats), and the decode prefetch policy.
  std::string expert_prefetch;  // predict | none ("" unless streamed MoE)
  weights::ModeledRoutedStats modeled_experts;
  uint64_t loaded = 0;          // weights served from the .orkpack
  uint64_t packed = 0;          // weights packed from the GGUF
  // Streamed plans: packed weights kept in host memory between loads (weights::HostPackedStats).
  uint64_t host_budget_bytes = 0, host_bytes = 0, host_peak_bytes = 0;
  uint64_t host_hits = 0, host_evictions = 0;
  double pack_ms = 0;           // time the store spent packing
  double pack_load_ms = 0;      // time the store spent loading from the .orkpack
  std::string to_json() const;
};

// Memory of one Engine (not its Contexts), in bytes. Device bytes are page-rounded buffer sizes.
struct EngineMemory {
  std::vector<uint64_t> weight_device_bytes;    // [domain] weight buffers this Engine holds
  std::vector<uint64_t> scratch_device_bytes;   // [domain] matmul scratch it uses (shared or not)
  uint64_t weight_bytes = 0;                    // Σ weight_device_bytes (CPU: the GGUF tensor bytes)
  uint64_t weight_shared_bytes = 0;             // packed bytes served by share_weights_with's copy
  uint32_t weights_shared = 0;                  // linear weights served that way
  uint64_t scratch_bytes = 0;                   // Σ scratch_device_bytes
  bool scratch_shared = false;                  // scratch shared with another Engine
  uint64_t scratch_own_need = 0;                // what a scratch of its own would take (device bytes)
  uint64_t weight_external_bytes = 0;           // caller memory imported for the weights (weight_mem)
  uint64_t scratch_external_bytes = 0;          // caller memory imported for the scratch it uses (scratch_mem)
  uint64_t cpu_weight_bytes = 0;                // RAM of the int8 copies the schedule's CPU calls made (host)
  std::vector<uint64_t> window_taken_bytes;     // [domain] share_scratch_with: IOVA that model's weights took
                                                //   when this one was planned (weights/window_taken.h)
};

// What loading a model would take, computed before loading anything onto the device (`ork mem`).
// Device bytes are page-rounded buffer sizes, as the device counts them after loading.
struct MemoryPlan {
  std::string device;                 // cpu | npu | sim (auto resolved)
  std::string mode;                   // resident | stream | none (cpu)
  std::string reason;
  uint32_t domains_used = 0;
  std::vector<uint64_t> weight_device_bytes;   // [domain] resident: all weights; stream: 0 (loaded on demand)
  std::vector<uint64_t> scratch_device_bytes;  // [domain] matmul scratch (shared: the shared one after loading)
  std::vector<uint64_t> scratch_caller_bytes;  // [domain] the part caller memory holds (scratch_mem[d])
  std::vector<uint64_t> window_bytes;          // [domain] IOVA footprint (power-of-two slots)
  std::vector<uint64_t> window_taken_bytes;    // [domain] share_scratch_with: IOVA window bytes that model's
                                               //   weights hold, which this plan left to it (weights/window_taken.h)
  uint64_t window_capacity_bytes = 0;          // the IOVA window of one domain
  std::vector<uint64_t> window_joint_bytes;    // [domain] IOVA the planner counts there with share_scratch_with:
                                               //   both models' weights (streamed: the budget) + the shared scratch
  uint64_t scratch_shared_saving = 0;          // share_scratch_with: the scratch of its own it does not allocate
  uint64_t weight_shared_bytes = 0;            // share_weights_with: packed bytes served by its copy
  uint32_t weights_shared = 0;                 //   and how many linear weights
  uint64_t stream_budget_bytes = 0;            // stream: weight bytes resident at once (at most)
  uint64_t dma_bytes = 0;             // Σ device bytes (stream: + the budget)
  // --schedule auto|cpu on npu/sim: the CPU copies of the weights a decode step or a full pass of
  // m_max rows runs on the CPU side (runtime/planned_cpu_copies.h), and how many weights; other row
  // counts can add copies, up to cpu_copy_all_bytes. 0 with --schedule npu.
  uint64_t cpu_copy_bytes = 0;
  uint32_t cpu_copy_weights = 0;
  uint64_t cpu_copy_all_bytes = 0;
  // stream: the host budget of packed weights kept between loads (weights/host_packed.h;
  // --wcache-host-mb), at most the packed model. 0 for resident plans and the CPU.
  uint64_t host_packed_bytes = 0;
  uint64_t model_file_bytes = 0;      // the GGUF tensor bytes (mapped from the file)
  std::string kv_type;                // f32 | f16 | q8_0 (kv_type_of)
  uint64_t kv_cache_bytes = 0;        // one context of n_ctx tokens
  uint64_t host_scratch_bytes = 0;    // its activations for a batch of m_max tokens, + kv_staging_bytes,
                                      // + per thread the prefill attention's scores at n_ctx keys
  uint64_t kv_staging_bytes = 0;      //   of which: one layer's K/V widened to f32 at n_ctx (f16, q8_0)
  uint64_t ram_bytes = 0;             // model_file + dma + kv + host scratch + cpu_copy + host_packed: the RAM to plan for
  int64_t n_ctx = 0;
};
// The device `options` run on: a model shared with fixes it (both shared models must be on one
// device, not the CPU), and "auto" becomes npu when the rknpu driver is there, else cpu.
std::string resolve_device(const EngineOptions& options);

// Plans `options` (model_path, device, residency, budget, m_max, simulator knobs) for one context
// of n_ctx tokens (0: the model's, at most 4096): parses the GGUF and plans; allocates nothing on
// the device. With share_weights_with (or share_scratch_with) the plan is for that Engine's device;
// with share_weights_with the weights identical to its resident ones are compared by content (this
// packs every weight, as loading would) and left out, and the scratch covers the domains of those
// weights — what Engine::memory() reports after loading. With share_scratch_with the per-domain
// scratch is that Engine's scratch grown to this model's need (what both then use), dma_bytes counts
// only the growth, and scratch_shared_saving the scratch of its own this model does not allocate.
// Throws ork::Error like Engine's constructor.
MemoryPlan plan_memory(const EngineOptions& options, int64_t n_ctx);

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
  const npu::MatmulScratch* scratch() const { return scratch_.get(); }  // null on the CPU
  const npu::Device* device() const { return device_.get(); }
  const weights::Plan* plan() const { return plan_.get(); }  // null on the CPU
  weights::Cache* cache() { return cache_.get(); }          // null on the CPU
  ResidencyStats residency_stats() const;
  // What this Engine holds now. Loads the prefetcher has in flight land first (their buffers are
  // mapped before the cache marks them loaded), so with no forward pass running meanwhile the
  // figures agree with the device's counters.
  EngineMemory memory() const;
  // Returns once a streamed plan's prefetcher has no load in flight or pending, so memory() and the
  // device's counters agree until the next forward pass; at once for a resident plan.
  void wait_prefetch_idle() const;
  // The schedule's choices and counts; null unless the schedule is auto or cpu on npu/sim.
  const HybridMatmul* hybrid() const { return hybrid_; }
  // The streamed loads in the board model's time; null unless a simulator streams the weights.
  const weights::ModeledLoads* modeled_loads() const { return modeled_loads_.get(); }
  // The host work of its forward passes in the board model's time; null unless on the simulator.
  HostWorkMeter* host_meter() { return host_meter_.get(); }
  const HostWorkMeter* host_meter() const { return host_meter_.get(); }

  // Held by Context::eval around each forward pass.
  std::mutex& forward_mutex() { return *forward_mutex_; }

  // The linear weights of `model` (packed by `store`) whose packed bytes and scales equal those of one
  // of this Engine's resident weights: (its Linear::index, this Engine's Linear::index). Empty unless
  // this Engine's plan is resident.
  std::vector<std::pair<int32_t, int32_t>> identical_weights(const model::Model& model, weights::Store& store) const;

 private:
  void import_weight_mem(const std::vector<ExternalMemory>& mem);
  void import_scratch_mem(const std::vector<ExternalMemory>& mem);

  EngineOptions options_;
  std::unique_ptr<model::Model> model_;
  std::unique_ptr<ThreadPool> pool_;
  std::shared_ptr<std::mutex> forward_mutex_;
  std::shared_ptr<npu::Device> device_;
  std::vector<npu::Buffer> weight_mem_;  // imported caller memory for the weights (before cache_: outlives it)
  std::shared_ptr<npu::MatmulScratch> scratch_;  // npu/sim: the matmul scratch (maybe shared)
  uint64_t scratch_own_need_ = 0;
  std::vector<npu::ScratchNeed> scratch_needs_;  // [domain] what this Engine's matmuls need (own + shared weights)
  std::atomic<bool> scratch_shared_{false};
  uint64_t weight_shared_bytes_ = 0;
  uint32_t weights_shared_ = 0;
  std::unique_ptr<weights::Store> store_;
  std::unique_ptr<weights::Plan> plan_;
  std::unique_ptr<weights::Cache> cache_;
  std::unique_ptr<weights::Prefetcher> prefetcher_;
  std::unique_ptr<weights::ModeledLoads> modeled_loads_;
  std::unique_ptr<HostWorkMeter> host_meter_;
  std::unique_ptr<model::MatmulBackend> backend_;
  HybridMatmul* hybrid_ = nullptr;  // backend_ when the schedule is not npu
};

}  // namespace ork::runtime
