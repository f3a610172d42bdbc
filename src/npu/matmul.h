// Matmul on the NPU: C (M×N) = A (M×K) · Bᵀ with B stored N×K (a weight), int8×int8→int32,
// fp16×fp16→fp32 and int4×int4→int32 (int16 tasks over K chunks of 480, added in int32 on the host:
// task_split_int4.h; A is then int4 codes in [−8, 7] held as int8_t), through Device (the rknpu
// driver or the simulator).
//
// A weight lives packed in its own device buffer (PackedWeight), in one IOMMU domain; a weight cache
// may destroy it at any time. Everything else a task touches (A, C, register commands, the task
// array) is in a MatmulScratch, one set per domain, grown on demand and reused across weights; so
// every task of a job touches one domain only (the weight's).
//
// Plan once, run many: each job's task array and register commands (they hold the addresses of A,
// C and the weights) are kept in a plan cache per domain, keyed by (weights' addresses and sizes, M,
// K, dtype, cores); a repeated call only copies A in, submits once and reads C. A weight streamed
// into the same address later reuses the job (the commands depend on addresses, not contents).
// Several matmuls sharing A (run_matmul_group: Q/K/V, gate/up) are one job, one submit.
// K > 8192: each K segment's partial sums land in their own output block and are added on the CPU
// (int32 wrapping add / f32 add in segment order), see task_split.h.
//
// Thread-safety: a MatmulScratch is used by one thread at a time; PackedWeights are read-only.
// Lifetime: weights and scratch hold device Buffers and must not outlive the Device.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include <span>

#include "npu/device.h"
#include "npu/layout.h"
#include "npu/matmul_job.h"
#include "npu/regcmd_gen.h"
#include "npu/task_split.h"
#include "npu/uapi.h"

namespace ork::npu {

// B packed in the native layout (layout.h) in one owning device buffer of domain buf.domain().
struct PackedWeight {
  Buffer buf;
  int64_t n = 0, k = 0;
  Dtype dtype = Dtype::kI8;
  // Padded N of the packed layout the rows live in: 0 for a weight packed on its own (pad_n(n)); a
  // rows_view of a larger weight has the larger one's, since its K segments are that far apart.
  int64_t layout_np = 0;
  uint32_t domain() const { return buf.domain(); }
};

// The first n1 rows of w (n1 a multiple of the kernel group, 0 < n1 < w.n) as a weight of their own:
// a non-owning view of w's buffer (it must not outlive w) whose tasks read only those rows. Used to
// split one matmul along N between the NPU and the CPU (runtime/hybrid_matmul.h).
PackedWeight rows_view(const PackedWeight& w, int64_t n1);

// Host-only packing: writes packed_weight_bytes(n, k, dtype) bytes to dst (the bytes .orkpack stores).
void pack_weight_into(const int8_t* b, int64_t n, int64_t k, uint8_t* dst);
void pack_weight_into_f16(const uint16_t* b, int64_t n, int64_t k, uint8_t* dst);

// Packs b (n×k row-major) into a new buffer in `domain`. Throws AllocError when the domain is full.
PackedWeight pack_weight(Device& dev, const int8_t* b, int64_t n, int64_t k, uint32_t domain);
PackedWeight pack_weight_f16(Device& dev, const uint16_t* b, int64_t n, int64_t k, uint32_t domain);
// Uploads already packed bytes (packed_weight_bytes(n, k, dtype) of them), e.g. from an .orkpack.
PackedWeight load_packed_weight(Device& dev, const uint8_t* packed, int64_t n, int64_t k, Dtype dtype,
                                uint32_t domain);

// The NPU addresses the tasks of one plan use.
struct TaskAddresses {
  uint64_t a = 0, b = 0, c = 0;  // A scratch, packed weight, C scratch
  uint64_t regcmd = 0;           // register commands: task i at regcmd + i·kRegcmdStride
};
// Writes the register commands of every task of `plan` (tasks × kRegcmdStride bytes, chained per
// core) to `regcmd_host` and the uapi::Task array (plan.tasks.size() entries) to `tasks`.
void build_tasks(const SplitPlan& plan, const TaskAddresses& addr, uint8_t* regcmd_host,
                 uapi::Task* tasks);
// A Submit for the plan's task array (task_obj_addr = the task buffer's obj_addr), with the per-core
// ranges in subcore_task and the core mask of the cores used.
uapi::Submit make_submit(const SplitPlan& plan, uint64_t task_obj_addr, uint32_t domain);
// Packs the rows × k matrix `a` into the plan's A scratch layout (plan.a_bytes bytes at dst).
void pack_a_for_plan(const SplitPlan& plan, const void* a, uint8_t* dst);
// Collects C (m × n, row-major) from the C scratch (plan.c_bytes bytes), adding K segments.
void unpack_c_for_plan(const SplitPlan& plan, const uint8_t* src, void* c);

// IOVA bytes a device buffer of `bytes` occupies: page-rounded, then up to a power of two (its slot
// is aligned to its size, docs/hardware.md).
uint64_t iova_slot_bytes(uint64_t bytes);

// The scratch bytes one matmul needs in its domain (A, C, register commands, task array of the one
// job slot): what a planner reserves ahead so that running never allocates; and `plan_tasks`, the
// tasks the domain's plan cache holds (two buffers: plan_tasks × kRegcmdStride bytes of register
// commands, plan_tasks task entries; 0: no cache, the slot is rebuilt whenever the job changes).
struct ScratchNeed {
  uint64_t a = 0, c = 0, regcmd = 0, tasks = 0;
  uint64_t plan_tasks = 0;
  void merge(const ScratchNeed& o);  // element-wise max
  uint64_t plan_regcmd_bytes() const { return plan_tasks * kRegcmdStride; }
  uint64_t plan_task_bytes() const { return plan_tasks * sizeof(uapi::Task); }
  uint64_t total() const { return a + c + regcmd + tasks; }  // the slot's buffers (no plan cache)
};
ScratchNeed scratch_need(int64_t m, int64_t k, int64_t n, Dtype d, uint32_t cores);
// Tasks of one (m × k) · (n × k)ᵀ matmul (what its cached job takes of the plan cache).
uint64_t matmul_tasks(int64_t m, int64_t k, int64_t n, Dtype d, uint32_t cores);

class MatmulScratch {
 public:
  explicit MatmulScratch(Device& dev) : dev_(&dev) {}
  MatmulScratch(const MatmulScratch&) = delete;
  MatmulScratch& operator=(const MatmulScratch&) = delete;

  // Releases every domain's buffers and cached jobs (their IOVA returns to the domains).
  void clear() { domains_.clear(); }
  void release(uint32_t domain) { domains_.erase(domain); }
  // Allocates `domain`'s buffers now, at least as large as `need` (AllocError when it does not fit),
  // the plan cache's two buffers included (need.plan_tasks; in caller memory only its task entries,
  // which are ork's). The plan cache fills in order of first use; when full it is emptied and
  // refilled (counted in plans_built).
  // In a domain placed in caller memory (place()), A, C and the register commands must already fit
  // (else ork::Error naming the domain and the bytes); only the task array may grow.
  void reserve(uint32_t domain, const ScratchNeed& need);
  uint64_t bytes(uint32_t domain) const;  // device bytes held for `domain` (caller memory included)

  // Caller memory ("internal memory" from outside): A, C and the register commands (the slot's and
  // the plan cache's) — all the NPU reads and writes — as views at page-aligned offsets of `arena`, a buffer imported into `domain`
  // (Device::import_fd) that the scratch owns from now on. The task array stays a buffer of ork's:
  // the rknpu driver reads it through a kernel mapping, which an imported dma-buf does not have
  // (docs/hardware.md). From then on the domain never reallocates A, C or the register commands: a
  // matmul needing more throws ork::Error. Throws when the arena is in another domain or smaller than
  // caller_bytes(need), or when the domain already holds buffers.
  void place(uint32_t domain, const ScratchNeed& need, Buffer arena);
  // The bytes an arena must hold for `need`: A, C, the slot's and the plan cache's register commands,
  // each page-rounded.
  static uint64_t caller_bytes(const ScratchNeed& need);
  bool in_caller_memory(uint32_t domain) const;
  uint64_t caller_bytes_placed(uint32_t domain) const;  // the arena's bytes (0: ork allocates)
  ScratchNeed capacity(uint32_t domain) const;  // the sizes of `domain`'s buffers now (0: none)
  uint64_t plans_built() const { return plans_built_; }  // jobs whose register commands were generated
  uint64_t plan_hits() const { return plan_hits_; }      // submits that reused generated commands
  size_t plan_cache_jobs(uint32_t domain) const;         // jobs cached in `domain` now

 private:
  friend void run_matmul_group(Device&, MatmulScratch&, std::span<const PackedWeight* const>, const void*,
                               int64_t, std::span<void* const>, uint32_t);
  struct Key {
    uint64_t generation = 0;  // of the domain's A and C buffers (their addresses are in the commands)
    int64_t m = 0, k = 0;
    Dtype dtype = Dtype::kI8;
    uint32_t cores = 0;
    std::vector<uint64_t> weights;  // iova, n of each part
    auto operator<=>(const Key&) const = default;
  };
  struct Job {
    JobPlan plan;
    uint64_t first_task = 0;  // its tasks are plan-cache task slots [first_task, first_task + tasks)
  };
  struct Domain {
    Buffer arena;  // caller memory (owning import) that a, c and regcmd view; empty when ork allocates
    Buffer a, c, regcmd, tasks;
    Buffer plan_regcmd, plan_tasks;  // the plan cache: register commands and task entries by slot
    uint64_t generation = 0;
    bool slot_valid = false;  // the one job slot (regcmd, tasks): a job the plan cache cannot hold
    Key slot_key;
    JobPlan slot_plan;
    std::map<Key, Job> jobs;  // the plan cache
    void forget_jobs() {      // every cached job (their slots are free again)
      jobs.clear();
      used_tasks = 0;
    }
    uint64_t plan_capacity = 0;  // task slots of the plan cache (its buffers hold this many)
    uint64_t used_tasks = 0;     // task slots in use
  };
  Device* dev_;
  std::map<uint32_t, Domain> domains_;
  uint64_t plans_built_ = 0, plan_hits_ = 0;
};

// C (m × w.n, row-major int32) = A (m × w.k, row-major int8) · Bᵀ. Throws ork::Error on a dtype
// mismatch, bad sizes, allocation failure (AllocError) or a failed submit (fault text).
// `max_cores` (1..3; 0 = all the device has) bounds the cores the tasks are spread over.
void matmul_i8(Device& dev, MatmulScratch& scratch, const PackedWeight& w, const int8_t* a, int64_t m,
               int32_t* c, uint32_t max_cores = 0);
// C (m × w.n, f32) = A (m × w.k, fp16 bits) · Bᵀ.
void matmul_f16(Device& dev, MatmulScratch& scratch, const PackedWeight& w, const uint16_t* a,
                int64_t m, float* c, uint32_t max_cores = 0);
// The shared implementation (a, c typed by w.dtype).
void run_matmul(Device& dev, MatmulScratch& scratch, const PackedWeight& w, const void* a, int64_t m,
                void* c, uint32_t max_cores = 0);
// One job for several weights of one domain with the same K and dtype: c[i] (m × ws[i]->n) =
// A · ws[i]ᵀ, one submit. Throws ork::Error when the weights differ in domain, K or dtype.
void run_matmul_group(Device& dev, MatmulScratch& scratch, std::span<const PackedWeight* const> ws,
                      const void* a, int64_t m, std::span<void* const> c, uint32_t max_cores = 0);

}  // namespace ork::npu
