#include "weights/cache.h"

#include <algorithm>

#include "core/error.h"
#include "core/quote.h"
#include "core/timer.h"
#include "weights/packed_int4.h"

namespace ork::weights {

Cache::Lease::~Lease() {
  if (cache_ != nullptr) cache_->release(unit_);
}

Cache::Cache(npu::Device& device, Store& store, const Plan& plan, uint64_t host_budget_bytes)
    : device_(device), store_(store), plan_(plan), slots_(plan.units.size()),
      scales_(plan.weights.size()), corrections_(plan.weights.size()),
      host_(plan.weights.size(), host_budget_bytes) {}

Cache::~Cache() = default;

Packed Cache::packed_for(int32_t weight) {
  return host_.get(weight, [&] { return store_.get(*plan_.weights[size_t(weight)].linear); });
}

bool Cache::evict_one_locked(const std::vector<int32_t>* keep) {
  int32_t victim = -1;
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (!s.weight || s.pins > 0 || s.loading) continue;
    if (keep != nullptr && std::find(keep->begin(), keep->end(), int32_t(i)) != keep->end()) continue;
    if (victim < 0 || s.last_use < slots_[size_t(victim)].last_use) victim = int32_t(i);
  }
  if (victim < 0) return false;
  Slot& s = slots_[size_t(victim)];
  const uint64_t bytes = plan_.slice(plan_.units[size_t(victim)]).bytes;
  s.weight.reset();  // destroys the buffer: its IOVA returns to the domain
  if (s.prefetched) {
    ++stats_.prefetch_wasted;
    stats_.prefetch_wasted_bytes += bytes;
    s.prefetched = false;
  }
  stats_.resident_bytes -= bytes;
  ++stats_.evictions;
  return true;
}

bool Cache::load_locked(std::unique_lock<std::mutex>& lock, int32_t unit,
                        const std::vector<int32_t>* keep) {
  Slot& slot = slots_[size_t(unit)];
  const Unit& u = plan_.units[size_t(unit)];
  const WeightPlan& wp = plan_.weights[size_t(u.weight)];
  const Slice& sl = wp.slices[size_t(u.slice)];
  slot.loading = true;
  auto give_up = [&] {
    slot.loading = false;
    changed_.notify_all();
  };
  if (plan_.mode == Residency::kStream) {
    while (stats_.resident_bytes + reserved_bytes_ + sl.bytes > plan_.budget_bytes) {
      if (evict_one_locked(keep)) continue;
      if (keep != nullptr) {
        give_up();
        return false;
      }
      if (reserved_bytes_ > 0) {  // another load holds budget: wait for it
        changed_.wait(lock);
        continue;
      }
      give_up();
      fail("weight streaming: the budget of ", plan_.budget_bytes, " bytes cannot hold ",
           quote(wp.linear->name()), " slice of ", sl.bytes, " bytes beside the pinned weights");
    }
  }
  reserved_bytes_ += sl.bytes;
  lock.unlock();

  Stopwatch sw;
  npu::Buffer buf;
  std::exception_ptr error;
  bool gave_up = false;
  Packed packed;
  try {
    packed = packed_for(u.weight);
    ORK_CHECK(packed.view.dtype == plan_.wtype, "weight ", quote(wp.linear->name()), " is packed as ",
              npu::dtype_name(packed.view.dtype), ", the plan is for ", npu::dtype_name(plan_.wtype));
    if (arenas_ != nullptr) buf = (*arenas_)[wp.domain].view(arena_offset_[size_t(unit)], sl.bytes);
    while (!buf) {
      try {
        buf = device_.alloc(sl.bytes, wp.domain);
        break;
      } catch (const npu::AllocError&) {
        std::lock_guard<std::mutex> relock(mutex_);
        if (!evict_one_locked(keep)) {
          if (keep != nullptr) {
            gave_up = true;
            break;
          }
          throw;
        }
        ++stats_.iova_wall_hits;
      }
    }
    if (!gave_up) {
      copy_rows(packed.view, sl.n0, sl.n1, buf.host());
      buf.sync_to_device();
    }
  } catch (...) {
    error = std::current_exception();
  }
  const double ms = sw.elapsed_ms();

  lock.lock();
  reserved_bytes_ -= sl.bytes;
  if (error || gave_up) {
    give_up();
    if (error) std::rethrow_exception(error);
    return false;
  }
  if (scales_[size_t(u.weight)].empty()) {
    scales_[size_t(u.weight)].assign(packed.view.scales, packed.view.scales + packed.view.scale_count());
    if (packed.view.dtype == npu::Dtype::kI4) corrections_[size_t(u.weight)] = int4_split_corrections(packed.view);
  }
  slot.weight = std::make_unique<npu::PackedWeight>(
      npu::PackedWeight{std::move(buf), sl.n1 - sl.n0, wp.linear->k, packed.view.dtype});
  slot.loading = false;
  slot.prefetched = keep != nullptr;
  slot.last_use = ++tick_;
  stats_.resident_bytes += sl.bytes;
  stats_.peak_resident_bytes = std::max(stats_.peak_resident_bytes, stats_.resident_bytes);
  ++stats_.loads;
  ++slot.loads;
  stats_.bytes_loaded += sl.bytes;
  stats_.load_ms += ms;
  if (warm_) {
    ++stats_.loads_after_warm;
    stats_.bytes_loaded_after_warm += sl.bytes;
  }
  changed_.notify_all();
  return true;
}

namespace {
constexpr uint64_t kPage = 4096;
uint64_t page_round(uint64_t b) { return (b + kPage - 1) / kPage * kPage; }
}  // namespace

std::vector<uint64_t> Cache::arena_bytes(const Plan& plan) {
  std::vector<uint64_t> need(plan.domains_used, 0);
  for (const Unit& u : plan.units) {
    const uint32_t d = plan.weights[size_t(u.weight)].domain;
    ORK_CHECK(d < need.size(), "weight plan: domain ", d, " beyond the ", need.size(), " domains used");
    need[d] += page_round(plan.slice(u).bytes);
  }
  return need;
}

void Cache::load_all(const std::vector<npu::Buffer>* arenas) {
  std::vector<int32_t> order(plan_.units.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = int32_t(i);
  // Domain by domain, largest footprint first: aligned IOVA slots then pack densely.
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const Unit& ua = plan_.units[size_t(a)];
    const Unit& ub = plan_.units[size_t(b)];
    const uint32_t da = plan_.weights[size_t(ua.weight)].domain;
    const uint32_t db = plan_.weights[size_t(ub.weight)].domain;
    if (da != db) return da < db;
    return plan_.slice(ua).footprint > plan_.slice(ub).footprint;
  });
  std::unique_lock<std::mutex> lock(mutex_);
  if (arenas != nullptr) {
    ORK_CHECK(plan_.mode == Residency::kResident,
              "weights in caller memory need a resident plan; this one streams (", plan_.reason, ")");
    ORK_CHECK(arenas_ == nullptr && stats_.loads == 0, "weights in caller memory: the cache already loaded weights");
    const std::vector<uint64_t> need = arena_bytes(plan_);
    ORK_CHECK(arenas->size() >= need.size(), "weights in caller memory: ", arenas->size(), " buffers for ",
              need.size(), " domains");
    std::vector<uint64_t> next(need.size(), 0);
    arena_offset_.assign(plan_.units.size(), 0);
    for (int32_t unit : order) {
      const uint32_t d = plan_.weights[size_t(plan_.units[size_t(unit)].weight)].domain;
      arena_offset_[size_t(unit)] = next[d];
      next[d] += page_round(plan_.slice(plan_.units[size_t(unit)]).bytes);
    }
    for (size_t d = 0; d < need.size(); ++d) {
      const npu::Buffer& a = (*arenas)[d];
      ORK_CHECK(need[d] == 0 || (a && a.domain() == d && a.size() >= need[d]), "weights in caller memory: domain ",
                d, " needs ", need[d], " bytes, its buffer holds ", a ? a.size() : 0, " in domain ", a.domain());
    }
    arenas_ = arenas;
  }
  for (int32_t unit : order) {
    if (!slots_[size_t(unit)].weight) load_locked(lock, unit, nullptr);
  }
}

Cache::Lease Cache::acquire(int32_t unit, Acquired* how) {
  ORK_CHECK(unit >= 0 && size_t(unit) < slots_.size(), "weight unit ", unit, " out of range");
  std::unique_lock<std::mutex> lock(mutex_);
  Slot& slot = slots_[size_t(unit)];
  Acquired found = Acquired::kReady;
  if (!slot.weight) {
    Stopwatch sw;
    found = slot.loading ? Acquired::kLate : Acquired::kLoaded;
    while (!slot.weight) {
      if (slot.loading) {
        changed_.wait(lock);
      } else {
        load_locked(lock, unit, nullptr);
      }
    }
    stats_.stall_ms += sw.elapsed_ms();
    ++(found == Acquired::kLate ? stats_.prefetch_late : stats_.prefetch_misses);
  } else if (slot.prefetched) {
    found = Acquired::kPrefetched;
    ++stats_.prefetch_hits;
  }
  slot.prefetched = false;
  if (how != nullptr) *how = found;
  ++slot.pins;
  slot.last_use = ++tick_;
  return Lease(this, unit, slot.weight.get());
}

bool Cache::prefetch(int32_t unit, const std::vector<int32_t>& keep) {
  std::unique_lock<std::mutex> lock(mutex_);
  const Slot& slot = slots_[size_t(unit)];
  if (slot.weight || slot.loading) return true;
  return load_locked(lock, unit, &keep);
}

void Cache::release(int32_t unit) {
  std::lock_guard<std::mutex> lock(mutex_);
  Slot& slot = slots_[size_t(unit)];
  --slot.pins;
  slot.last_use = ++tick_;
  changed_.notify_all();
}

const float* Cache::scales(int32_t weight) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return scales_[size_t(weight)].data();
}

const int32_t* Cache::corrections(int32_t weight) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::vector<int32_t>& c = corrections_[size_t(weight)];
  return c.empty() ? nullptr : c.data();
}

uint64_t Cache::load_count(int32_t unit) const {
  std::lock_guard lock(mutex_);
  return slots_.at(size_t(unit)).loads;
}

bool Cache::is_loaded(int32_t unit) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return slots_[size_t(unit)].weight != nullptr;
}

void Cache::mark_warm() {
  std::lock_guard<std::mutex> lock(mutex_);
  warm_ = true;
}

CacheStats Cache::stats() const {
  CacheStats s;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    s = stats_;
  }
  s.host = host_.stats();
  return s;
}

}  // namespace ork::weights
