#include "runtime/activation_source.h"

#include "core/error.h"
#include "core/quote.h"
#include "model/non_finite.h"
#include "quant/hadamard.h"
#include "quant/norm_fold.h"
#include "quant/quantize_activations.h"
#include "quant/requant_int4.h"

namespace ork::runtime {

void ActivationSource::quantize(const model::Linear& w, int64_t m, std::vector<int8_t>& xq, std::vector<float>& sa,
                                std::vector<float>& act, std::vector<float>& rot) const {
  const int64_t k = w.k;
  if (this->xq != nullptr) {
    xq.assign(this->xq, this->xq + m * k);
    sa.assign(this->sa, this->sa + m);
    return;
  }
  xq.resize(size_t(m * k));
  sa.resize(size_t(m));
  if (sums != nullptr) {
    quantize_sums(w, m, xq.data(), sa.data(), act, rot);
    return;
  }
  if (up == nullptr && unfold == nullptr && residual == nullptr) {
    const int64_t bad = quant::quantize_activations_i8(x, m, k, xq.data(), sa.data(), rot);
    if (bad >= 0) model::fail_non_finite(x[bad], bad, k, "input of", w);
    return;
  }
  if (residual != nullptr) check_residual(w);
  act.resize(size_t(2 * k));  // the row, and the residual add's scratch
  for (int64_t r = 0; r < m; ++r) {  // one row's activation (residual, unfolded), quantized while in cache
    if (residual != nullptr) {
      residual->row(r, act.data(), act.data() + k);
      if (unfold != nullptr) quant::unfold_norm_row(act.data(), k, unfold, act.data());
    } else if (up != nullptr) {
      ops::glu(glu, x + r * k, up + r * k, k, act.data());
    } else {
      quant::unfold_norm_row(x + r * k, k, unfold, act.data());
    }
    const int64_t bad = quant::quantize_activations_i8(act.data(), 1, k, xq.data() + r * k, sa.data() + r, rot);
    if (bad >= 0) model::fail_non_finite(act[size_t(bad)], r * k + bad, k, "input of", w);
  }
}

namespace {

// Row r of glu(gate, up) of sums into out (k values); g, u: row scratch.
void glu_row(const GatedSums& s, ops::Glu glu, int64_t r, int64_t k, float* g, float* u, float* out) {
  s.gate.row(r, g);
  s.up.row(r, u);
  ops::glu(glu, g, u, k, out);
}

}  // namespace

void ActivationSource::quantize_sums(const model::Linear& w, int64_t m, int8_t* xq, float* sa, std::vector<float>& act,
                                     std::vector<float>& rot) const {
  const int64_t k = w.k;
  const GatedSums& s = *sums;
  ORK_CHECK(s.gate.n == k && s.up.n == k && s.gate.n_sums >= 0 && s.gate.n_sums <= k && s.up.n_sums >= 0 &&
                s.up.n_sums <= k,
            "input of ", quote(w.name()), ": gate/up rows of ", s.gate.n, " and ", s.up.n, " values (",
            s.gate.n_sums, " and ", s.up.n_sums, " unscaled), ", k, " wanted");
  act.resize(size_t(3 * k));  // the gate row, the up row, their activation
  float* g = act.data();
  float* u = g + k;
  float* a = u + k;
  for (int64_t r = 0; r < m; ++r) {  // one row scaled, activated and quantized while in cache
    glu_row(s, glu, r, k, g, u, a);
    const int64_t bad = quant::quantize_activations_i8(a, 1, k, xq + r * k, sa + r, rot);
    if (bad >= 0) model::fail_non_finite(a[bad], r * k + bad, k, "input of", w);
  }
}

void ActivationSource::quantize_i4(const model::Linear& w, int64_t m, std::vector<int8_t>& xq, std::vector<float>& sa,
                                   std::vector<float>& act, std::vector<float>& rot) const {
  const int64_t k = w.k;
  if (this->xq != nullptr) {
    xq.assign(this->xq, this->xq + m * k);
    sa.assign(this->sa, this->sa + m);
    return;
  }
  const float* rows = materialize(w, m, act);
  model::check_finite(rows, m, k, "input of", w);
  xq.resize(size_t(m * k));
  sa.resize(size_t(m));
  quant::quantize_rows_i4(quant::rotate_for_int8(rows, m, k, rot), m, k, xq.data(), sa.data());
}

void ActivationSource::check_residual(const model::Linear& w) const {
  ORK_CHECK(residual->width == w.k, "input of ", quote(w.name()), ": rows of ", residual->width, " values, ", w.k,
            " wanted");
  residual->check();
}

ActivationSource ActivationSource::unfold_norm(const model::Linear& w) const {
  if (w.in_norm == nullptr || up != nullptr || xq != nullptr || sums != nullptr) return *this;
  ActivationSource s = *this;
  s.unfold = w.in_norm;
  return s;
}

const float* ActivationSource::materialize(const model::Linear& w, int64_t m, std::vector<float>& all) const {
  ORK_CHECK(xq == nullptr, "input of ", quote(w.name()), ": rows quantized already have no f32 form");
  if (residual != nullptr) {
    check_residual(w);
    const int64_t k = w.k;
    all.resize(size_t(m * k));
    residual->materialize_into(m, all.data());
    if (unfold != nullptr) {
      for (int64_t r = 0; r < m; ++r) quant::unfold_norm_row(all.data() + r * k, k, unfold, all.data() + r * k);
    }
    return all.data();
  }
  if (unfold != nullptr) return quant::unfold_norm_rows(x, m, w.k, unfold, all);
  if (sums != nullptr) {
    const int64_t k = w.k;
    all.resize(size_t(m * k));
    std::vector<float> g(static_cast<size_t>(k)), u(static_cast<size_t>(k));
    for (int64_t r = 0; r < m; ++r) glu_row(*sums, glu, r, k, g.data(), u.data(), all.data() + r * k);
    return all.data();
  }
  if (up == nullptr) return x;
  all.resize(size_t(m * w.k));
  ops::glu(glu, x, up, m * w.k, all.data());
  return all.data();
}

}  // namespace ork::runtime
