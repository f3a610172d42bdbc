#include "model/matmul_backend.h"

#include <algorithm>

#include "core/error.h"
#include "core/huge_page_arena.h"
#include "core/quote.h"
#include "gguf/file.h"
#include "model/non_finite.h"
#include "ops/activation_fast.h"
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

void check_ffn_shapes(const Linear& gate, const Linear& up, const Linear& down) {
  ORK_CHECK(gate.n == down.k && up.n == down.k, "ffn: ", quote(gate.name()), " and ", quote(up.name()), " give ",
            gate.n, " and ", up.n, " values, ", quote(down.name()), " reads ", down.k);
}

const float* MatmulBackend::input_rows(const Linear& w, const ResidualNorm& in, int64_t m) {
  ORK_CHECK(in.width == w.k, "input of ", quote(w.name()), ": rows of ", in.width, " values, ", w.k, " wanted");
  const float* x = in.materialize(m);
  if (!checks_inputs_finite()) check_finite(x, m, w.k, "input of", w);
  return x;
}

void MatmulBackend::matmul_group_unscaled(std::span<const Linear* const> ws, const ResidualNorm& in, int64_t m,
                                          std::span<float* const> ys, std::span<UnscaledRows> out) {
  ORK_CHECK(out.size() == ws.size() && !ws.empty(), "matmul group: ", ws.size(), " weights, ", out.size(),
            " results");
  matmul_group(ws, input_rows(*ws[0], in, m), m, ys);
  for (size_t i = 0; i < ws.size(); ++i) out[i] = UnscaledRows::f32(ys[i], ws[i]->n);
}

UnscaledRows MatmulBackend::matmul_unscaled(const Linear& w, const float* x, int64_t m, float* y) {
  matmul(w, x, m, y);
  return UnscaledRows::f32(y, w.n);
}

UnscaledRows MatmulBackend::ffn(const Linear& gate, const Linear& up, const Linear& down, ops::Glu glu,
                                const ResidualNorm& in, int64_t m, float* gate_out, float* up_out, float* act,
                                float* y) {
  const Linear* ws[] = {&gate, &up};
  float* ys[] = {gate_out, up_out};
  matmul_group(ws, input_rows(gate, in, m), m, ys);
  matmul_glu(down, glu, gate_out, up_out, m, act, y);
  return UnscaledRows::f32(y, down.n);
}

CpuMatmul::CpuMatmul(ThreadPool& pool, ops::MatmulMode mode, const Weights* weights,
                     const gguf::File* file)
    : pool_(pool), mode_(mode) {
  if (mode != ops::MatmulMode::kFast || weights == nullptr || file == nullptr) return;
  panels_.resize(weights->linears().size());
  next_.assign(weights->linears().size(), -1);
  calls_.resize(weights->linears().size());
  // Packed when a vector kernel has the type (e.g. Q5_K on AVX-512 VNNI CPUs runs the AVX2 kernel).
  const auto packs = [](const Linear& lin) {
    const quant::Type t = lin.w->type;
    return ops::QPanels::supports(t) && ops::best_panel_isa(t) != ops::Isa::kScalar;
  };
  uint64_t arena_bytes = 0;
  for (const Linear* lin : weights->linears())
    if (packs(*lin))
      arena_bytes += HugePageArena::slice_bytes(ops::QPanels::packed_bytes(lin->w->type, lin->n, lin->k));
  arena_ = std::make_unique<HugePageArena>(size_t(arena_bytes));
  for (const Linear* lin : weights->linears()) {
    if (!packs(*lin)) continue;
    panels_[size_t(lin->index)] = std::make_unique<ops::QPanels>(
        ops::QPanels::pack(lin->w->type, lin->w->data, lin->n, lin->k, &pool, arena_.get()));
    packed_bytes_ += panels_[size_t(lin->index)]->bytes();
    // Not a tied output's: they are the embedding rows, kept mapped for the lookup (runtime::Engine).
    if (lin->w != weights->token_embd) file->mapping().drop_pages(lin->w->offset, lin->w->n_bytes);
  }
}

void CpuMatmul::follow(int32_t index, std::span<const ops::QPanels* const> panels) {
  pool_.end_idle_prefetch();
  if (index < 0 || size_t(index) >= next_.size()) return;
  if (last_ >= 0) next_[size_t(last_)] = index;
  last_ = index;
  std::vector<const ops::QPanels*>& call = calls_[size_t(index)];
  if (call.size() != panels.size() || !std::equal(call.begin(), call.end(), panels.begin()))
    call.assign(panels.begin(), panels.end());
}

void CpuMatmul::prefetch_next(int32_t index) {
  if (index < 0 || size_t(index) >= next_.size() || next_[size_t(index)] < 0) return;
  const std::vector<const ops::QPanels*>& call = calls_[size_t(next_[size_t(index)])];
  std::span<const uint8_t> segments[kMaxHintedPanels];
  if (call.empty() || call.size() > kMaxHintedPanels) return;
  for (size_t i = 0; i < call.size(); ++i) segments[i] = {call[i]->panel(0), call[i]->bytes()};
  pool_.prefetch_while_idle(std::span(segments, call.size()), kIdlePrefetchBytes);
}

void CpuMatmul::matmul(const Linear& w, const float* x, int64_t m, float* y) {
  if (const ops::QPanels* p = panels_of(w)) {
    follow(w.index, std::span(&p, 1));
    ops::matmul_qpanels(pool_, x, m, *p, y);
    prefetch_next(w.index);
    return;
  }
  pool_.end_idle_prefetch();
  ops::matmul(pool_, x, m, w.k, w.w->data, w.w->type, w.n, y, mode_);
}

void CpuMatmul::matmul_group(std::span<const Linear* const> ws, const float* x, int64_t m,
                             std::span<float* const> ys) {
  std::vector<const ops::QPanels*> grouped;
  std::vector<float*> outs;
  int32_t first = -1;  // the index of the first grouped linear
  for (size_t i = 0; i < ws.size(); ++i) {
    const ops::QPanels* p = panels_of(*ws[i]);
    if (p != nullptr && (grouped.empty() || ops::same_activations(*p, *grouped[0]))) {
      if (grouped.empty()) first = ws[i]->index;
      grouped.push_back(p);
      outs.push_back(ys[i]);
    } else {
      matmul(*ws[i], x, m, ys[i]);
    }
  }
  if (grouped.empty()) return;
  follow(first, grouped);
  ops::matmul_qpanels_group(pool_, x, m, grouped, outs);
  prefetch_next(first);
}

void CpuMatmul::matmul_glu(const Linear& down, ops::Glu glu, const float* gate, const float* up, int64_t m,
                           float* act, float* y) {
  // Elementwise: any split of the m × down.k values gives the same values. A decode step's few
  // thousand values (a few µs with the vector exp) stay on the caller: a loop costs about as much.
  constexpr int64_t kGrain = 8192;
  const bool fast = mode_ == ops::MatmulMode::kFast;  // the vectorized exp (ops/activation_fast.h)
  pool_.parallel_for(m * down.k, kGrain, [&](int64_t i0, int64_t i1) {
    (fast ? ops::glu_fast : ops::glu)(glu, gate + i0, up + i0, i1 - i0, act + i0);
  });
  check_finite(act, m, down.k, "input of", down);
  matmul(down, act, m, y);
}

}  // namespace ork::model
