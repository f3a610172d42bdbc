#include "npu/sim/executor.h"

#include <cstdio>
#include <cstring>

#include "npu/sim/job_failure.h"
#include "npu/sim/matmul_unit.h"

namespace ork::npu::sim {

namespace {

constexpr uint32_t kPcDataExtraAmount = 4;  // RKNPU_PC_DATA_EXTRA_AMOUNT (rknpu_job.c)
constexpr uint32_t kPcDataAmountScale = 2;  // pc_data_amount_scale of the RK3588 config
constexpr uint32_t kInterruptsRaised = 0x3ff;  // PC.INTERRUPT_MASK bits 0-9: CNA, CORE, DPU (XML)
constexpr uint32_t kOpEnableMatmul = 0x0d;     // the board-tested value (mtx512, happyme531)
constexpr uint32_t kMaxFetchEntries = 1u << 17;  // PC_DATA_AMOUNT is 16 bits: (amount + 1) · 2

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

struct TaskTail {
  bool next_addr_written = false;
  uint32_t next_addr = 0;
  uint32_t next_amount = 0;
};

// Applies one fetched stream to the core; returns what its tail announced. Runs the matmul when
// OPERATION_ENABLE arrives.
TaskTail run_stream(AddressSpace& space, RegisterFile& regs, const std::vector<uint64_t>& entries,
                    const std::string& where, bool timing_only, ExecStats& stats) {
  TaskTail tail;
  CnaLatch latch;
  bool marker = false, enabled = false;
  for (size_t i = 0; i < entries.size(); ++i) {
    const uint64_t raw = entries[i];
    const HwEntry e = split_entry(raw);
    if (enabled) {
      throw Timeout(str_cat(where, ": the PC fetched ", entries.size(), " entries but OPERATION_ENABLE is entry ",
                            i - 1, ": over-long fetch (the announced amount does not match the task)"));
    }
    if (e.target == 0) continue;  // no-op entry
    if (e.target == target::kPcMarker) {
      marker = true;
      continue;
    }
    if (e.target == target::kPcEnable) {
      if (e.offset != 0x0008) {
        throw Unmodelled(str_cat(where, ": entry ", i, ": PC operation target with offset ", hex(e.offset)));
      }
      if (!marker) {
        throw Timeout(str_cat(where, ": entry ", i, ": OPERATION_ENABLE without the 0x0041 pre-enable marker"));
      }
      if (e.value != kOpEnableMatmul) {
        throw Unmodelled(str_cat(where, ": OPERATION_ENABLE = ", hex(e.value), " (the simulator runs ",
                                 hex(kOpEnableMatmul), " tasks)"));
      }
      const MatmulConfig cfg = configure(regs, latch, where);
      const uint64_t a_bytes = cfg.a_bytes(), b_bytes = cfg.b_bytes(), c_bytes = cfg.c_bytes();
      if (timing_only) {  // the accesses are still checked against the address space
        space.resolve(cfg.a, a_bytes), space.resolve(cfg.b, b_bytes), space.resolve(cfg.c, c_bytes);
      } else {
        compute(space, cfg);
      }
      stats.tasks += 1;
      stats.macs += cfg.macs();
      stats.work.push_back({cfg.fp16, cfg.macs(), a_bytes + b_bytes + c_bytes, cfg.int4});
      enabled = true;
      continue;
    }
    Hw r;
    if (!find_hw(e.target, e.offset, &r)) {
      throw Unmodelled(str_cat(where, ": entry ", i, ": register ", hex(e.offset), " of target ",
                               hex(e.target), " is not modelled"));
    }
    regs.write(r, e.value);
    if (r == Hw::PC_BASE_ADDRESS) {
      if ((e.value & 0xf) != 0) {
        throw Unmodelled(str_cat(where, ": PC_BASE_ADDRESS = ", hex(e.value), ": PC_SEL or reserved bits set"));
      }
      tail.next_addr_written = true;
      tail.next_addr = e.value;
    } else if (r == Hw::PC_REGISTER_AMOUNTS) {
      tail.next_amount = e.value & 0xffff;
    } else if (r == Hw::CNA_CONV_CON1 && !latch.taken) {
      latch.taken = true;
      const auto at = [&](Hw h) { return regs.value[size_t(h)]; };
      const auto known = [&](Hw h) { return bool(regs.written[size_t(h)]); };
      latch.cbuf_con0 = at(Hw::CNA_CBUF_CON0), latch.cbuf_con0_written = known(Hw::CNA_CBUF_CON0);
      latch.dcomp_regnum = at(Hw::CNA_DCOMP_REGNUM), latch.dcomp_regnum_written = known(Hw::CNA_DCOMP_REGNUM);
      latch.dcomp_ctrl = at(Hw::CNA_DCOMP_CTRL), latch.dcomp_ctrl_written = known(Hw::CNA_DCOMP_CTRL);
    }
  }
  if (!enabled) {
    throw Timeout(str_cat(where, ": the PC fetched ", entries.size(),
                          " entries and found no OPERATION_ENABLE: short fetch (the task never starts)"));
  }
  return tail;
}

}  // namespace

ExecStats execute_tasks(AddressSpace& space, RegisterFile& regs, uint32_t core, const uapi::Task* first,
                        uint32_t count, std::vector<FetchRecord>* fetched, bool timing_only) {
  ExecStats stats;
  if (count == 0) return stats;
  // The driver programs the first fetch from the first task only.
  uint64_t addr = first[0].regcmd_addr;
  uint32_t amount = (first[0].regcfg_amount + kPcDataExtraAmount + kPcDataAmountScale - 1) / kPcDataAmountScale - 1;
  for (uint32_t t = 0; t < count; ++t) {
    const std::string where = str_cat("core ", core, " task ", t);
    const uint32_t entries = (amount + 1) * kPcDataAmountScale;
    if (entries > kMaxFetchEntries) throw Timeout(str_cat(where, ": fetch amount ", amount, " out of range"));
    const uint8_t* raw = space.resolve(addr, uint64_t(entries) * 8);
    std::vector<uint64_t> stream(entries);
    std::memcpy(stream.data(), raw, size_t(entries) * 8);
    if (fetched) fetched->push_back({core, t, addr, stream});
    const TaskTail tail = run_stream(space, regs, stream, where, timing_only, stats);
    if (t + 1 < count) {
      if (!tail.next_addr_written || tail.next_addr == 0) {
        throw Timeout(str_cat(where, ": its stream names no next PC_BASE_ADDRESS but the core has ",
                              count - t - 1, " more task(s): the PC stops, the job never completes"));
      }
      addr = tail.next_addr;
      amount = tail.next_amount;
    }
  }
  const uint32_t want = first[count - 1].int_mask;
  if (want == 0 || (want & ~kInterruptsRaised) != 0) {
    throw Timeout(str_cat("core ", core, ": the last task's int_mask ", hex(want),
                          " waits for interrupts a matmul task never raises"));
  }
  return stats;
}

}  // namespace ork::npu::sim
