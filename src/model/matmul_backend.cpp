#include "model/matmul_backend.h"

#include "gguf/file.h"
#include "model/non_finite.h"
#include "ops/matmul.h"

namespace ork::model {

void MatmulBackend::matmul_group(std::span<const Linear* const> ws, const float* x, int64_t m,
                                 std::span<float* const> ys) {
  for (size_t i = 0; i < ws.size(); ++i) matmul(*ws[i], x, m, ys[i]);
}

void MatmulBackend::matmul_glu(const Linear& down, ops::Glu glu, const float* gate, const float* up, int64_t m,
                               float* act, float* y) {
  ops::glu(glu, gate, up, m * down.k, act);
  if (!checks_inputs_finite()) check_finite(act, m, down.k, "input of", down);
  matmul(down, act, m, y);
}

CpuMatmul::CpuMatmul(ThreadPool& pool, ops::MatmulMode mode, const Weights* weights,
                     const gguf::File* file)
    : pool_(pool), mode_(mode) {
  if (mode != ops::MatmulMode::kFast || weights == nullptr || file == nullptr) return;
  panels_.resize(weights->linears().size());
  for (const Linear* lin : weights->linears()) {
    const quant::Type t = lin->w->type;
    // Packed when a vector kernel has the type (e.g. Q5_K on AVX-512 VNNI CPUs runs the AVX2 kernel).
    if (!ops::QPanels::supports(t) || ops::best_panel_isa(t) == ops::Isa::kScalar) continue;
    panels_[size_t(lin->index)] =
        std::make_unique<ops::QPanels>(ops::QPanels::pack(t, lin->w->data, lin->n, lin->k, &pool));
    packed_bytes_ += panels_[size_t(lin->index)]->bytes();
    // Also for a tied output: the embedding lookup then faults in only the rows it reads.
    file->mapping().drop_pages(lin->w->offset, lin->w->n_bytes);
  }
}

void CpuMatmul::matmul(const Linear& w, const float* x, int64_t m, float* y) {
  if (w.index >= 0 && size_t(w.index) < panels_.size() && panels_[size_t(w.index)] != nullptr) {
    ops::matmul_qpanels(pool_, x, m, *panels_[size_t(w.index)], y);
    return;
  }
  ops::matmul(pool_, x, m, w.k, w.w->data, w.w->type, w.n, y, mode_);
}

}  // namespace ork::model
