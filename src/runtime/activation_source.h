// runtime::ActivationSource — the input of one call of a quantizing backend (NpuMatmul, CpuInt8Matmul,
// CpuInt4Matmul): f32 rows, or the gated activation of an FFN's gate and up rows
// (MatmulBackend::matmul_glu), or the normed residual stream with its pending add (model::ResidualNorm),
// either computed row by row while quantizing, never written whole (a residual source writes its
// stream rows as it goes). Quantizing gives the same bits as quantizing the f32 rows would. Or rows
// quantized already (`quantized`: what quantize() wrote for the same weight width), so the two
// sides of a split call (HybridMatmul) share one quantization of their input.
// Thread-safety: a value; quantize() uses only the buffers it is given (and reads a quantized
// source's rows, which must not change meanwhile).
#pragma once

#include <cstdint>
#include <vector>

#include "model/residual_norm.h"
#include "model/unscaled_rows.h"
#include "model/weights.h"
#include "ops/activation.h"

namespace ork::runtime {

// An FFN's gate and up results as a quantizing backend leaves them (MatmulBackend::ffn's fused form):
// rows of k values each, possibly unscaled (model::UnscaledRows), scaled as they are read.
struct GatedSums {
  model::UnscaledRows gate, up;
};

struct ActivationSource {
  const float* x = nullptr;   // the rows (m × k), or the gate rows when up is set
  const float* up = nullptr;  // set: the input is glu(x, up)
  ops::Glu glu = ops::Glu::kSwiglu;
  const int8_t* xq = nullptr;  // set: rows quantized already (m × k), with their scales sa
  const float* sa = nullptr;
  // set (rows only, by unfold_norm): each row is divided element-wise by quant::norm_fold_factor of
  // this [k] norm weight as it is quantized or materialized (quant/norm_fold.h)
  const float* unfold = nullptr;
  // set: the input is glu(gate, up) of these unscaled results (GatedSums), x and up unset
  const GatedSums* sums = nullptr;
  // set: the input is these rows (model::ResidualNorm, width k), x and up unset; unfold may be set too
  const model::ResidualNorm* residual = nullptr;

  static ActivationSource rows(const float* x) { return {x, nullptr, ops::Glu::kSwiglu, nullptr, nullptr}; }
  static ActivationSource gated(ops::Glu glu, const float* gate, const float* up) { return {gate, up, glu}; }
  static ActivationSource quantized(const int8_t* xq, const float* sa) {
    return {nullptr, nullptr, ops::Glu::kSwiglu, xq, sa};
  }
  // `sums` must outlive the source.
  static ActivationSource gated_sums(ops::Glu glu, const GatedSums* sums) {
    ActivationSource s;
    s.glu = glu;
    s.sums = sums;
    return s;
  }

  // `rows` must outlive the source.
  static ActivationSource residual_rows(const model::ResidualNorm* rows) {
    ActivationSource s;
    s.residual = rows;
    return s;
  }

  // xq (m × w.k int8), sa (m scales) = the input (unfolded, or its glu) rotated and quantized per row
  // (quant::quantize_activations_i8), one pass per row; act, rot: row scratch. A non-finite input value throws
  // model::fail_non_finite naming w ("input of"). A quantized source is copied (checked when it was
  // quantized). A GatedSums source gives the bits the gated source of its scaled rows gives.
  void quantize(const model::Linear& w, int64_t m, std::vector<int8_t>& xq, std::vector<float>& sa,
                std::vector<float>& act, std::vector<float>& rot) const;
  // quantize() of a GatedSums source into xq (m × w.k), sa (m).
  void quantize_sums(const model::Linear& w, int64_t m, int8_t* xq, float* sa, std::vector<float>& act,
                     std::vector<float>& rot) const;
  // The same for W4A4 (`--npu-wtype i4a4`, `--cpu-int4 w4a4`): xq holds int4 codes (−7..7) of the
  // rotated rows, quant::quantize_rows_i4 — a gated input is computed whole into act first.
  void quantize_i4(const model::Linear& w, int64_t m, std::vector<int8_t>& xq, std::vector<float>& sa,
                   std::vector<float>& act, std::vector<float>& rot) const;
  // The int4 paths' input of w: this rows source with w's norm weight to divide out (`unfold` =
  // w.in_norm; the int4 weights carry it, weights/packed_int4.h); a gated or quantized source, or a
  // w without in_norm: this source unchanged.
  ActivationSource unfold_norm(const model::Linear& w) const;
  // The input as f32 rows (not checked finite): x itself, glu(x, up), the residual source's rows or x,
  // with the norm divided out when unfold is set, written into `all` (m × k).
  // A quantized source has no f32 rows: ork::Error. A GatedSums source's rows are scaled, then activated.
  const float* materialize(const model::Linear& w, int64_t m, std::vector<float>& all) const;

 private:
  // ork::Error unless the residual source gives rows of w.k values and is consistent.
  void check_residual(const model::Linear& w) const;
};

}  // namespace ork::runtime
