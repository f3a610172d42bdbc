#include "npu/probe_regcmd.h"

#include <cstdio>
#include <cstring>

#include "core/json.h"
#include "npu/regcmd_gen.h"
#include "npu/registers.h"

namespace ork::npu {

namespace {

std::string hex16(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

RegcmdDump dump_regcmd(Dtype d, int64_t m, int64_t k, int64_t n, uint32_t cores, const TaskAddresses& addr,
                       int64_t k_segment) {
  const SplitPlan plan = plan_split(m, k, n, d, cores, k_segment);
  std::vector<uint8_t> regcmd(plan.tasks.size() * kRegcmdStride);
  std::vector<uapi::Task> tasks(plan.tasks.size());
  build_tasks(plan, addr, regcmd.data(), tasks.data());
  RegcmdDump out;
  out.dtype = d, out.m = m, out.k = k, out.n = n;
  for (size_t i = 0; i < tasks.size(); ++i) {
    RegcmdTaskDump t;
    t.core = plan.tasks[i].core;
    t.index = uint32_t(i - plan.core_start[t.core]);
    t.regcfg_amount = tasks[i].regcfg_amount;
    t.enable_mask = tasks[i].enable_mask;
    t.int_mask = tasks[i].int_mask;
    t.regcmd_addr = tasks[i].regcmd_addr;
    t.regcmd.resize(t.regcfg_amount + reg::kPcTailEntries);
    std::memcpy(t.regcmd.data(), regcmd.data() + i * kRegcmdStride, t.regcmd.size() * 8);
    out.tasks.push_back(std::move(t));
  }
  return out;
}

std::string RegcmdDump::to_json() const {
  JsonWriter j;
  j.begin_object();
  j.key("dtype").value(dtype_name(dtype)).key("m").value(m).key("k").value(k).key("n").value(n);
  j.key("tasks").begin_array();
  for (const RegcmdTaskDump& t : tasks) {
    j.begin_object();
    j.key("core").value(uint64_t(t.core)).key("index").value(uint64_t(t.index));
    j.key("regcfg_amount").value(uint64_t(t.regcfg_amount));
    j.key("enable_mask").value(uint64_t(t.enable_mask)).key("int_mask").value(uint64_t(t.int_mask));
    j.key("regcmd_addr").value(hex16(t.regcmd_addr));
    j.key("regcmd").begin_array();
    for (uint64_t e : t.regcmd) j.value(hex16(e));
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return j.str();
}

std::string RegcmdDump::to_text() const {
  std::string s = str_cat(dtype_name(dtype), " m=", m, " k=", k, " n=", n, ": ", tasks.size(), " task(s)\n");
  for (const RegcmdTaskDump& t : tasks) {
    char head[160];
    std::snprintf(head, sizeof head,
                  "task core=%u index=%u regcfg_amount=%u enable_mask=0x%x int_mask=0x%x regcmd_addr=%s\n",
                  t.core, t.index, t.regcfg_amount, t.enable_mask, t.int_mask, hex16(t.regcmd_addr).c_str());
    s += head;
    for (size_t i = 0; i < t.regcmd.size(); ++i) {
      const uint64_t e = t.regcmd[i];
      const reg::Entry d = reg::decode(e);
      const char* what = e == 0 ? "(no-op)"
                         : d.target == reg::kTargetPcPreEnable ? "(pre-enable marker)"
                         : reg::find(d.target, d.offset) ? reg::find(d.target, d.offset)->name : "(unknown)";
      char line[96];
      std::snprintf(line, sizeof line, "  %3zu %s  %s\n", i, hex16(e).c_str(), what);
      s += line;
    }
  }
  return s;
}

}  // namespace ork::npu
