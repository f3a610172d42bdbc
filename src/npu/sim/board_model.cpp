#include "npu/sim/board_model.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"

namespace ork::npu::sim {

namespace {

struct Field {
  const char* name;
  double BoardProfile::*member;
};
constexpr Field kFields[] = {
    {"npu_clock_ghz", &BoardProfile::npu_clock_ghz},
    {"int8_macs_per_cycle", &BoardProfile::int8_macs_per_cycle},
    {"fp16_macs_per_cycle", &BoardProfile::fp16_macs_per_cycle},
    {"int4_macs_per_cycle", &BoardProfile::int4_macs_per_cycle},
    {"mac_efficiency", &BoardProfile::mac_efficiency},
    {"ddr_gbps", &BoardProfile::ddr_gbps},
    {"submit_us", &BoardProfile::submit_us},
    {"task_us", &BoardProfile::task_us},
    {"domain_switch_us", &BoardProfile::domain_switch_us},
    {"cpu_read_gbps", &BoardProfile::cpu_read_gbps},
    {"cpu_int8_gmacs", &BoardProfile::cpu_int8_gmacs},
    {"cpu_call_us", &BoardProfile::cpu_call_us},
    {"load_gbps", &BoardProfile::load_gbps},
    {"ddr_total_gbps", &BoardProfile::ddr_total_gbps},
    {"host_op_us", &BoardProfile::host_op_us},
    {"cpu_f32_gflops", &BoardProfile::cpu_f32_gflops},
};

}  // namespace

BoardProfile load_board_profile(const std::string& path) {
  BoardProfile p;
  if (path.empty()) return p;
  std::ifstream in(path);
  ORK_CHECK(in, path, ": cannot open the board profile");
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    fail(path, ": not a JSON board profile: ", e.what());
  }
  ORK_CHECK(j.is_object(), path, ": a board profile is a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (key == "name") {
      ORK_CHECK(value.is_string(), path, ": \"name\" must be a string");
      p.name = value.get<std::string>();
      continue;
    }
    const Field* f = std::find_if(std::begin(kFields), std::end(kFields), [&](const Field& x) { return key == x.name; });
    ORK_CHECK(f != std::end(kFields), path, ": unknown board profile field \"", key.substr(0, 64), "\"");
    ORK_CHECK(value.is_number() && value.get<double>() > 0, path, ": \"", key, "\" must be a positive number");
    p.*(f->member) = value.get<double>();
  }
  ORK_CHECK(p.mac_efficiency <= 1, path, ": \"mac_efficiency\" must be at most 1");
  return p;
}

std::string board_profile_json(const BoardProfile& p) {
  nlohmann::json j;
  j["name"] = p.name;
  for (const Field& f : kFields) j[f.name] = p.*(f.member);
  return j.dump();
}

JobCost cost_job(const BoardProfile& p, const std::array<std::vector<TaskWork>, 3>& per_core, bool switched) {
  JobCost c;
  const int active = int(std::count_if(per_core.begin(), per_core.end(), [](const auto& v) { return !v.empty(); }));
  if (active == 0) return c;
  const double share_bytes_per_ns = p.ddr_gbps / active;  // GB/s = bytes/ns
  double slowest = 0;
  for (size_t core = 0; core < per_core.size(); ++core) {
    double t = 0;
    for (const TaskWork& w : per_core[core]) {
      const double per_cycle = w.fp16 ? p.fp16_macs_per_cycle : w.int4 ? p.int4_macs_per_cycle : p.int8_macs_per_cycle;
      const double rate = per_cycle * p.npu_clock_ghz * p.mac_efficiency;
      const double compute = double(w.macs) / rate;  // MACs per ns
      const double memory = double(w.bytes) / share_bytes_per_ns;
      t += p.task_us * 1e3 + std::max(compute, memory);
      c.ddr_bytes += w.bytes;
    }
    c.core_busy_ns[core] = t;
    slowest = std::max(slowest, t);
  }
  c.total_ns = p.submit_us * 1e3 + (switched ? p.domain_switch_us * 1e3 : 0) + slowest;
  return c;
}

double cpu_matmul_bytes(int64_t k, int64_t n) { return double(n) * double(k) + 4.0 * double(n); }

double cost_cpu_matmul_ns(const BoardProfile& p, int64_t m, int64_t k, int64_t n) {
  const double bytes = cpu_matmul_bytes(k, n);
  const double macs = double(m) * double(k) * double(n);
  return p.cpu_call_us * 1e3 + std::max(bytes / p.cpu_read_gbps, macs / p.cpu_int8_gmacs);  // GB/s = bytes/ns
}

double cost_overlapped_ns(const BoardProfile& p, const OverlapSide& npu, const OverlapSide& cpu) {
  struct Stream {
    double start, rate, left, done;
  };
  Stream st[2];
  const OverlapSide* sides[2] = {&npu, &cpu};
  for (int i = 0; i < 2; ++i) {
    const OverlapSide& s = *sides[i];
    const double moving = s.ns - s.fixed_ns;
    if (s.bytes <= 0 || moving <= 0) {
      st[i] = {s.ns, 0, 0, s.ns};  // nothing to share: its own time
    } else {
      st[i] = {s.fixed_ns, s.bytes / moving, s.bytes, -1};
    }
  }
  const double cap = p.ddr_total_gbps;  // bytes/ns
  double t = std::min(st[0].start, st[1].start);
  for (int guard = 0; guard < 8 && (st[0].done < 0 || st[1].done < 0); ++guard) {
    bool active[2];
    double demand = 0;
    for (int i = 0; i < 2; ++i) {
      active[i] = st[i].done < 0 && st[i].start <= t;
      if (active[i]) demand += st[i].rate;
    }
    const double scale = demand > cap ? cap / demand : 1.0;
    double finish[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
    double next = std::numeric_limits<double>::infinity();
    for (int i = 0; i < 2; ++i) {  // the next event: a side finishing, or one starting to move data
      if (active[i]) {
        finish[i] = t + st[i].left / (st[i].rate * scale);
        next = std::min(next, finish[i]);
      } else if (st[i].done < 0) {
        next = std::min(next, st[i].start);
      }
    }
    for (int i = 0; i < 2; ++i) {
      if (!active[i]) continue;
      if (finish[i] <= next) {
        st[i].left = 0, st[i].done = finish[i];
      } else {
        st[i].left -= (next - t) * st[i].rate * scale;
      }
    }
    t = next;
  }
  return std::max(st[0].done, st[1].done);
}

}  // namespace ork::npu::sim
