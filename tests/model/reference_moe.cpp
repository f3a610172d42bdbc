#include "reference_moe.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "quant/types.h"

namespace ork::testing {
namespace {

std::vector<double> decode(const gguf::File& f, const std::string& name, uint64_t* dims1 = nullptr) {
  const gguf::TensorInfo& t = f.tensor(name);
  std::vector<float> tmp(t.n_elements);
  quant::traits(t.type).decode(t.data, tmp.data(), int64_t(t.n_elements));
  if (dims1 != nullptr) *dims1 = t.dims.size() > 1 ? t.dims[1] : 0;
  return {tmp.begin(), tmp.end()};
}

// y[r] = Σ_k w[r·K + k] x[k] for r < rows.
std::vector<double> matvec(const double* w, int64_t rows, const std::vector<double>& x) {
  std::vector<double> y(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (size_t k = 0; k < x.size(); ++k) s += w[size_t(r) * x.size() + k] * x[k];
    y[size_t(r)] = s;
  }
  return y;
}

std::vector<double> swiglu_ffn(const double* gate, const double* up, const double* down, int64_t ff,
                               int64_t embd, const std::vector<double>& h) {
  const std::vector<double> g = matvec(gate, ff, h), u = matvec(up, ff, h);
  std::vector<double> a(static_cast<size_t>(ff));
  for (int64_t i = 0; i < ff; ++i) a[size_t(i)] = g[size_t(i)] / (1.0 + std::exp(-g[size_t(i)])) * u[size_t(i)];
  return matvec(down, embd, a);
}

}  // namespace

ReferenceMoe::ReferenceMoe(const gguf::File& f, const std::string& arch, int64_t layer) {
  const std::string b = "blk." + std::to_string(layer) + ".";
  n_expert_ = int64_t(f.get_uint(arch + ".expert_count"));
  n_used_ = int64_t(f.get_uint(arch + ".expert_used_count"));
  norm_ = arch != "qwen2moe";
  uint64_t d1 = 0;
  router_ = decode(f, b + "ffn_gate_inp.weight");
  n_embd_ = int64_t(router_.size()) / n_expert_;
  gate_ = decode(f, b + "ffn_gate_exps.weight", &d1);
  n_ff_ = int64_t(d1);
  up_ = decode(f, b + "ffn_up_exps.weight");
  down_ = decode(f, b + "ffn_down_exps.weight");
  if (int64_t(gate_.size()) != n_expert_ * n_ff_ * n_embd_ || down_.size() != gate_.size()) {
    throw std::runtime_error("reference: expert tensors of " + b + " have unexpected sizes");
  }
  if (arch == "qwen2moe") {
    sh_inp_ = decode(f, b + "ffn_gate_inp_shexp.weight");
    sh_gate_ = decode(f, b + "ffn_gate_shexp.weight", &d1);
    n_sh_ = int64_t(d1);
    sh_up_ = decode(f, b + "ffn_up_shexp.weight");
    sh_down_ = decode(f, b + "ffn_down_shexp.weight");
  }
}

std::vector<int64_t> ReferenceMoe::route(const std::vector<double>& h, std::vector<double>* weights) const {
  std::vector<double> p = matvec(router_.data(), n_expert_, h);
  const double mx = *std::max_element(p.begin(), p.end());
  double sum = 0;
  for (double& v : p) sum += (v = std::exp(v - mx));
  for (double& v : p) v /= sum;
  std::vector<int64_t> idx(static_cast<size_t>(n_expert_));
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return p[size_t(a)] > p[size_t(b)]; });
  idx.resize(size_t(n_used_));
  if (weights != nullptr) {
    weights->clear();
    double wsum = 0;
    for (int64_t e : idx) wsum += p[size_t(e)];
    for (int64_t e : idx) weights->push_back(norm_ ? p[size_t(e)] / std::max(wsum, 6.103515625e-5) : p[size_t(e)]);
  }
  return idx;
}

std::vector<double> ReferenceMoe::apply(const std::vector<double>& h) const {
  std::vector<double> w;
  const std::vector<int64_t> sel = route(h, &w);
  std::vector<double> y(size_t(n_embd_), 0.0);
  const size_t mat = size_t(n_ff_ * n_embd_);
  for (size_t j = 0; j < sel.size(); ++j) {
    const size_t e = size_t(sel[j]);
    const std::vector<double> o = swiglu_ffn(gate_.data() + e * mat, up_.data() + e * mat, down_.data() + e * mat,
                                             n_ff_, n_embd_, h);
    for (size_t i = 0; i < y.size(); ++i) y[i] += w[j] * o[i];
  }
  if (n_sh_ > 0) {
    const double g = matvec(sh_inp_.data(), 1, h)[0];
    const std::vector<double> o = swiglu_ffn(sh_gate_.data(), sh_up_.data(), sh_down_.data(), n_sh_, n_embd_, h);
    for (size_t i = 0; i < y.size(); ++i) y[i] += o[i] / (1.0 + std::exp(-g));
  }
  return y;
}

}  // namespace ork::testing
