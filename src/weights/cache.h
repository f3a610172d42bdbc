// weights::Cache — device-resident packed weight slices under a byte budget.
//
// The unit is one slice of one weight (Plan::units). Resident plans load every unit once
// (load_all) into its planned domain: no churn afterwards. Streaming plans keep at most
// budget_bytes of units mapped: before a load that would exceed the budget, least-recently-used
// unpinned units are evicted (their buffers destroyed, IOVA reclaimed). An allocation that still
// fails — a fragmented window, an "IOVA-wall hit" — evicts more and retries; it is counted, and
// fails only when nothing is left to evict.
// Thread-safety: every method may be called from any thread (the prefetcher loads while the compute
// thread acquires). A Lease pins its unit: it cannot be evicted until the Lease is destroyed.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "npu/device.h"
#include "npu/matmul.h"
#include "weights/host_packed.h"
#include "weights/plan.h"
#include "weights/store.h"

namespace ork::weights {

struct CacheStats {
  uint64_t loads = 0;           // units loaded onto the device
  uint64_t bytes_loaded = 0;    // their packed bytes
  uint64_t evictions = 0;       // units evicted
  uint64_t iova_wall_hits = 0;  // allocations refused with budget to spare (then retried)
  uint64_t resident_bytes = 0;  // weight bytes mapped now
  uint64_t peak_resident_bytes = 0;
  double load_ms = 0;           // time spent loading (store + copy to the device)
  double stall_ms = 0;          // time acquire() waited for a unit
  uint64_t loads_after_warm = 0;         // loads after mark_warm()
  uint64_t bytes_loaded_after_warm = 0;  // their bytes
  // How acquires found units that had to come onto the device (streamed plans; a unit counts once
  // per load): loaded ahead by prefetch() and ready (hits), still loading (late), absent (misses:
  // the acquire loaded it). Prefetched units evicted before any acquire: wasted, with their bytes.
  uint64_t prefetch_hits = 0, prefetch_late = 0, prefetch_misses = 0;
  uint64_t prefetch_wasted = 0, prefetch_wasted_bytes = 0;
  HostPackedStats host;  // packed weights kept in host memory between loads (HostPacked)
};

// How one acquire found its unit (Cache::acquire).
enum class Acquired {
  kReady,       // on the device, used before (or loaded by load_all)
  kPrefetched,  // loaded ahead by prefetch(), first use
  kLate,        // another thread was loading it: waited
  kLoaded,      // absent: this acquire loaded it
};

class Cache {
 public:
  class Lease {
   public:
    Lease(Lease&& o) noexcept : cache_(o.cache_), unit_(o.unit_), weight_(o.weight_) { o.cache_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    ~Lease();
    const npu::PackedWeight& weight() const { return *weight_; }

   private:
    friend class Cache;
    Lease(Cache* c, int32_t u, const npu::PackedWeight* w) : cache_(c), unit_(u), weight_(w) {}
    Cache* cache_;
    int32_t unit_;
    const npu::PackedWeight* weight_;
  };

  // Packed weights are kept in host memory under `host_budget_bytes` (HostPacked: the last weight
  // packed is always kept, so 0 packs each weight once per run of its slices).
  Cache(npu::Device& device, Store& store, const Plan& plan, uint64_t host_budget_bytes = 0);
  ~Cache();
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  // Resident plans: loads every unit now, each domain's buffers largest first. With `arenas`
  // ("allocate outside": caller memory, one buffer per domain used, arenas[d] at least
  // arena_bytes(plan)[d] bytes, or empty when that is 0) no buffer is allocated: each slice becomes a
  // non-owning view (npu::Buffer::view) at a page-aligned offset of its domain's arena, in load order.
  // The arenas must outlive the Cache. Throws ork::Error for a streaming plan or a short arena.
  void load_all(const std::vector<npu::Buffer>* arenas = nullptr);

  // Per domain used, the bytes load_all(arenas) places there: Σ page-rounded slice bytes (what the
  // device counts for the same slices allocated one by one).
  static std::vector<uint64_t> arena_bytes(const Plan& plan);

  // Unit `unit` (an index into plan().units), pinned while the Lease lives; loads it when absent,
  // waits when another thread is loading it.
  // `how` (optional) tells how the unit was found.
  Lease acquire(int32_t unit, Acquired* how = nullptr);

  // Loads `unit` ahead of use when it is absent and fits without evicting a unit in `keep` (the
  // ones about to be used) or a pinned one; returns false when it cannot load now.
  bool prefetch(int32_t unit, const std::vector<int32_t>& keep);

  // Scales of a weight (Linear::index; PackedView::scale_count() of them: per row for i8, n × groups
  // for i4); valid once any of its units was loaded.
  const float* scales(int32_t weight) const;
  // i4 weights: the W4A8-by-splitting corrections, one per row (int4_split_corrections); valid once
  // any of its units was loaded. Null for i8.
  const int32_t* corrections(int32_t weight) const;

  bool is_loaded(int32_t unit) const;
  // How many times `unit` was loaded onto the device so far (a changed count: loaded again).
  uint64_t load_count(int32_t unit) const;
  void mark_warm();  // from now on, loads also count in *_after_warm
  CacheStats stats() const;
  const Plan& plan() const { return plan_; }

 private:
  struct Slot {
    std::unique_ptr<npu::PackedWeight> weight;  // null when not on the device
    bool loading = false;
    int pins = 0;
    uint64_t last_use = 0;
    uint64_t loads = 0;
    bool prefetched = false;  // loaded by prefetch() and not acquired since
  };
  // Loads `unit`; the lock is held on entry and exit and released while packing and copying.
  // With `keep` (prefetch), gives up (returns false) instead of evicting a unit in `keep`.
  bool load_locked(std::unique_lock<std::mutex>& lock, int32_t unit, const std::vector<int32_t>* keep);
  bool evict_one_locked(const std::vector<int32_t>* keep);
  void release(int32_t unit);
  Packed packed_for(int32_t weight);  // the weight's packed bytes, from host_ or the store

  npu::Device& device_;
  const std::vector<npu::Buffer>* arenas_ = nullptr;  // set once by load_all(arenas)
  std::vector<uint64_t> arena_offset_;                // [unit] its offset in arenas_[domain]
  Store& store_;
  const Plan& plan_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Slot> slots_;
  std::vector<std::vector<float>> scales_;
  std::vector<std::vector<int32_t>> corrections_;  // [weight] i4 only
  uint64_t reserved_bytes_ = 0;  // budget held by loads in flight
  uint64_t tick_ = 0;
  bool warm_ = false;
  CacheStats stats_;
  HostPacked host_;
};

}  // namespace ork::weights
