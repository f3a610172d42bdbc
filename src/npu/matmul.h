// Matmul on the NPU: C (M×N) = A (M×K) · Bᵀ with B stored N×K (a weight), int8×int8→int32 and
// fp16×fp16→fp32, through Device (the rknpu driver or the simulator).
//
// A weight lives packed in its own device buffer (PackedWeight), in one IOMMU domain; a weight cache
// may destroy it at any time. Everything else a task touches (A, C, register commands, the task
// array) is in a MatmulScratch, one set per domain, grown on demand and reused across weights; so
// every task of a job touches one domain only (the weight's).
//
// Plan once, run many: the task list and register commands of the last (weight address, M, K, N,
// dtype) of each domain stay in the scratch; a repeated call only copies A in, submits once and reads C.
// K > 8192: each K segment's partial sums land in their own output block and are added on the CPU
// (int32 wrapping add / f32 add in segment order), see task_split.h.
//
// Thread-safety: a MatmulScratch is used by one thread at a time; PackedWeights are read-only.
// Lifetime: weights and scratch hold device Buffers and must not outlive the Device.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "npu/device.h"
#include "npu/layout.h"
#include "npu/task_split.h"
#include "npu/uapi.h"

namespace ork::npu {

// B packed in the native layout (layout.h) in one owning device buffer of domain buf.domain().
struct PackedWeight {
  Buffer buf;
  int64_t n = 0, k = 0;
  Dtype dtype = Dtype::kI8;
  uint32_t domain() const { return buf.domain(); }
};

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

// The scratch bytes one matmul needs in its domain (A, C, register commands, task array): what a
// planner reserves ahead so that running never allocates.
struct ScratchNeed {
  uint64_t a = 0, c = 0, regcmd = 0, tasks = 0;
  void merge(const ScratchNeed& o);  // element-wise max
  uint64_t total() const { return a + c + regcmd + tasks; }
};
ScratchNeed scratch_need(int64_t m, int64_t k, int64_t n, Dtype d, uint32_t cores);

class MatmulScratch {
 public:
  explicit MatmulScratch(Device& dev) : dev_(&dev) {}
  MatmulScratch(const MatmulScratch&) = delete;
  MatmulScratch& operator=(const MatmulScratch&) = delete;

  // Releases every domain's buffers (their IOVA returns to the domains).
  void clear() { domains_.clear(); }
  void release(uint32_t domain) { domains_.erase(domain); }
  // Allocates `domain`'s buffers now, at least as large as `need` (AllocError when it does not fit).
  // In a domain placed in caller memory (place()), A, C and the register commands must already fit
  // (else ork::Error naming the domain and the bytes); only the task array may grow.
  void reserve(uint32_t domain, const ScratchNeed& need);
  uint64_t bytes(uint32_t domain) const;  // device bytes held for `domain` (caller memory included)

  // Caller memory ("internal memory" from outside): A, C and the register commands — all the NPU
  // reads and writes — as views at page-aligned offsets of `arena`, a buffer imported into `domain`
  // (Device::import_fd) that the scratch owns from now on. The task array stays a buffer of ork's:
  // the rknpu driver reads it through a kernel mapping, which an imported dma-buf does not have
  // (docs/hardware.md). From then on the domain never reallocates A, C or the register commands: a
  // matmul needing more throws ork::Error. Throws when the arena is in another domain or smaller than
  // caller_bytes(need), or when the domain already holds buffers.
  void place(uint32_t domain, const ScratchNeed& need, Buffer arena);
  // The bytes an arena must hold for `need`: A, C and register commands, each page-rounded.
  static uint64_t caller_bytes(const ScratchNeed& need);
  bool in_caller_memory(uint32_t domain) const;
  ScratchNeed capacity(uint32_t domain) const;  // the sizes of `domain`'s buffers now (0: none)
  uint64_t plans_built() const { return plans_built_; }  // regcmd generations so far

 private:
  friend void run_matmul(Device&, MatmulScratch&, const PackedWeight&, const void*, int64_t, void*, uint32_t);
  struct Key {
    uint64_t w_iova = 0;
    int64_t m = 0, k = 0, n = 0;
    Dtype dtype = Dtype::kI8;
    uint32_t cores = 0;
    bool operator==(const Key&) const = default;
  };
  struct Domain {
    Buffer arena;  // caller memory (owning import) that a, c and regcmd view; empty when ork allocates
    Buffer a, c, regcmd, tasks;
    bool valid = false;
    Key key;
    SplitPlan plan;
  };
  Device* dev_;
  std::map<uint32_t, Domain> domains_;
  uint64_t plans_built_ = 0;
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

}  // namespace ork::npu
