#include "npu/probe_matmul.h"

#include <algorithm>
#include <cmath>

#include "core/fp16.h"
#include "core/json.h"
#include "npu/matmul.h"

namespace ork::npu {

namespace {

uint32_t lcg(uint32_t& x) {
  x = x * 1664525u + 1013904223u;
  return x >> 8;
}

std::vector<int8_t> rand_i8(int64_t count, uint32_t seed) {
  std::vector<int8_t> v(static_cast<size_t>(count));
  for (auto& e : v) e = int8_t(int(lcg(seed) % 255) - 127);
  return v;
}

// Values in [-1, 1] on a 1/64 grid: exact in fp16.
std::vector<uint16_t> rand_f16(int64_t count, uint32_t seed) {
  std::vector<uint16_t> v(static_cast<size_t>(count));
  for (auto& e : v) e = f32_to_f16(float(int(lcg(seed) % 129) - 64) / 64.0f);
  return v;
}

void run_i8(Device& dev, MatmulScratch& scratch, uint32_t domain, MatmulProbeShape& s) {
  const auto a = rand_i8(s.m * s.k, uint32_t(s.m * 7 + s.k)), b = rand_i8(s.n * s.k, uint32_t(s.n + 11));
  PackedWeight w = pack_weight(dev, b.data(), s.n, s.k, domain);
  std::vector<int32_t> c(static_cast<size_t>(s.m * s.n));
  matmul_i8(dev, scratch, w, a.data(), s.m, c.data(), s.cores);
  s.tasks = plan_split(s.m, s.k, s.n, Dtype::kI8, s.cores).tasks.size();
  int64_t worst = 0;
  for (int64_t i = 0; i < s.m; ++i) {
    const int8_t* ai = a.data() + i * s.k;
    for (int64_t j = 0; j < s.n; ++j) {
      const int8_t* bj = b.data() + j * s.k;
      int32_t ref = 0;
      for (int64_t kk = 0; kk < s.k; ++kk) ref += int32_t(ai[kk]) * int32_t(bj[kk]);
      const int64_t d = std::llabs(int64_t(c[size_t(i * s.n + j)]) - ref);
      worst = std::max(worst, d);
    }
  }
  s.max_err = double(worst);
  s.ok = worst == 0;
}

void run_f16(Device& dev, MatmulScratch& scratch, uint32_t domain, MatmulProbeShape& s) {
  const auto a = rand_f16(s.m * s.k, uint32_t(s.m * 5 + s.k)), b = rand_f16(s.n * s.k, uint32_t(s.n + 3));
  PackedWeight w = pack_weight_f16(dev, b.data(), s.n, s.k, domain);
  std::vector<float> c(static_cast<size_t>(s.m * s.n));
  matmul_f16(dev, scratch, w, a.data(), s.m, c.data(), s.cores);
  s.tasks = plan_split(s.m, s.k, s.n, Dtype::kF16, s.cores).tasks.size();
  std::vector<float> af(a.size()), bf(b.size());
  for (size_t i = 0; i < a.size(); ++i) af[i] = f16_to_f32(a[i]);
  for (size_t i = 0; i < b.size(); ++i) bf[i] = f16_to_f32(b[i]);
  double worst = 0;
  for (int64_t i = 0; i < s.m; ++i) {
    const float* ai = af.data() + i * s.k;
    for (int64_t j = 0; j < s.n; ++j) {
      const float* bj = bf.data() + j * s.k;
      double ref = 0, mag = 0;
      for (int64_t kk = 0; kk < s.k; ++kk) {
        const double p = double(ai[kk]) * double(bj[kk]);
        ref += p;
        mag += std::fabs(p);
      }
      const double err = std::fabs(double(c[size_t(i * s.n + j)]) - ref) / (mag + 1e-30);
      worst = std::max(worst, std::isnan(err) ? 1e30 : err);
    }
  }
  s.max_err = worst;
  s.ok = worst <= kF16Tolerance;
}

}  // namespace

std::vector<MatmulProbeShape> matmul_probe_shapes() {
  struct S { int64_t m, k, n; };
  // M × K × N bounded so the whole suite stays near 0.5 G MACs (padding included).
  static const S kShapes[] = {
      {1, 16384, 64},  {1, 1000, 16384}, {1, 33, 1},      {4, 64, 16384},  {4, 3, 5},
      {4, 16384, 96},  {7, 45, 70},      {7, 8195, 33},   {64, 4096, 256}, {64, 8300, 20},
      {64, 100, 1000}, {333, 1000, 100}, {333, 77, 1234}, {512, 256, 320}, {512, 31, 17},
  };
  std::vector<MatmulProbeShape> out;
  for (Dtype d : {Dtype::kI8, Dtype::kF16}) {
    for (const S& s : kShapes) {
      MatmulProbeShape p;
      p.m = s.m, p.k = s.k, p.n = s.n, p.dtype = d;
      out.push_back(p);
    }
  }
  return out;
}

const char* phase_name(ProbePhase p) {
  switch (p) {
    case ProbePhase::kSingleTask: return "single-task";
    case ProbePhase::kChained: return "chained";
    case ProbePhase::kMultiCore: return "multi-core";
  }
  return "?";
}

std::vector<MatmulProbeShape> matmul_probe_plan(uint32_t cores) {
  std::vector<MatmulProbeShape> plan;
  const std::vector<MatmulProbeShape> shapes = matmul_probe_shapes();
  auto add = [&](ProbePhase phase, uint32_t c, auto want) {
    for (MatmulProbeShape s : shapes) {
      const SplitPlan p = plan_split(s.m, s.k, s.n, s.dtype, c);
      if (!want(p)) continue;
      s.phase = phase;
      s.cores = c;
      plan.push_back(s);
    }
  };
  add(ProbePhase::kSingleTask, 1, [](const SplitPlan& p) { return p.tasks.size() == 1; });
  add(ProbePhase::kChained, 1, [](const SplitPlan& p) { return p.tasks.size() > 1; });
  if (cores > 1) add(ProbePhase::kMultiCore, cores, [](const SplitPlan& p) { return p.cores > 1; });
  return plan;
}

MatmulProbeResult probe_matmul(Device& dev, uint32_t domain, bool keep_going) {
  MatmulProbeResult r;
  MatmulScratch scratch(dev);
  for (MatmulProbeShape s : matmul_probe_plan(std::clamp<uint32_t>(dev.caps().cores, 1, 3))) {
    try {
      if (s.dtype == Dtype::kI8)
        run_i8(dev, scratch, domain, s);
      else
        run_f16(dev, scratch, domain, s);
    } catch (const Error& e) {
      s.ok = false;
      s.error = e.what();
    }
    (s.ok ? r.passed : r.failed) += 1;
    r.shapes.push_back(s);
    if (!s.ok && !keep_going) {
      r.stopped = true;
      break;
    }
  }
  return r;
}

std::string MatmulProbeResult::to_json() const {
  JsonWriter j;
  j.begin_object();
  j.key("passed").value(passed);
  j.key("failed").value(failed);
  j.key("stopped").value(stopped);
  j.key("shapes").begin_array();
  for (const MatmulProbeShape& s : shapes) {
    j.begin_object();
    j.key("phase").value(phase_name(s.phase)).key("cores").value(uint64_t(s.cores));
    j.key("m").value(s.m).key("k").value(s.k).key("n").value(s.n);
    j.key("dtype").value(dtype_name(s.dtype));
    j.key("ok").value(s.ok);
    j.key("max_err").value(s.max_err);
    j.key("tasks").value(s.tasks);
    if (!s.error.empty()) j.key("error").value(s.error);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return j.str();
}

}  // namespace ork::npu
