#include "npu/sim/host_cost.h"

#include <algorithm>
#include <cmath>

#include "quant/hadamard.h"

namespace ork::npu::sim {

namespace {

// Accumulates ops priced as host_op_us (or a pool dispatch) + max(memory, arithmetic).
struct Tally {
  const BoardProfile& p;
  HostCost c;
  void op(HostKind kind, double bytes, double flops, double fixed_us) {
    const double ns = fixed_us * 1e3 + std::max(bytes / p.cpu_read_gbps, flops / p.cpu_f32_gflops);  // GB/s = bytes/ns
    c.ns += ns, c.ns_by_kind[int(kind)] += ns;
    c.ops += 1, c.bytes += bytes, c.flops += flops;
  }
  void vec(HostKind kind, double elems_read, double elems_written, double flops_per_elem) {  // f32 in and out
    op(kind, 4 * (elems_read + elems_written), flops_per_elem * elems_written, p.host_op_us);
  }
};

}  // namespace

const char* host_kind_name(HostKind k) {
  switch (k) {
    case HostKind::kQuantize: return "quantize";
    case HostKind::kScale: return "scale";
    case HostKind::kRopeKv: return "rope_kv";
    case HostKind::kAttention: return "attention";
    case HostKind::kNormResidual: return "norm_residual";
    case HostKind::kEdges: return "edges";
  }
  return "?";
}

HostPass sequence_pass(int64_t pos0, int64_t n, int64_t out_rows, int64_t rows_per_key_load) {
  HostPass h;
  h.rows_per_key_load = rows_per_key_load;
  h.rows = n;
  h.out_rows = out_rows;
  h.key_rows = double(n) * double(pos0) + double(n) * double(n + 1) / 2;
  h.loaded_rows = double(pos0 + n);
  return h;
}

HostCost cost_host_pass(const BoardProfile& p, const HostShape& s, const HostPass& pass) {
  Tally t{p, {}};
  if (pass.rows <= 0) return t.c;
  const double m = double(pass.rows), E = double(s.hidden), F = double(s.ff);
  const double Q = double(s.heads * s.head_dim), KV = double(s.kv_heads * s.head_dim);
  const bool q8 = s.int8_matmuls;
  // A MoE FFN (HostShape::moe_ffn): its experts' calls scale their own results, and its input is
  // written whole for the router; Q/K/V's and attn_output's readers are the dense layer's.
  const bool glu_sums = s.glu_from_sums && !s.moe_ffn;
  // f32 → int8 with one scale per row, of rows of `width` inputs: the finiteness test, the
  // block-Hadamard butterflies (log2 b add/sub and one scaling per element, the row in cache) and the
  // quantization (amax, divide, round) in one pass.
  // glu: the input is the SwiGLU of two f32 rows (an exp per element), computed in the same pass
  // (runtime/activation_source.h).
  // normed: the input follows a norm, whose weight int4 weights fold in (HostShape::norm_fold).
  // glu from sums (HostShape::glu_from_sums): gate and up read as int32 (the same bytes as f32) and
  // scaled in the pass.
  // residual (HostShape::residual_in_quantize): the input is the stream after a residual add, normed in
  // the pass — base and branch read, the stream written (12 bytes per element instead of 4), the add
  // and the norm's 5 flops (and 2 more when the branch is scaled as it is read); norm_only: layer 0's
  // rows, normed in the pass (4 flops).
  enum class Pre { kNone, kNormOnly, kResidual, kResidualScaled };
  const auto quantize = [&](double rows, int64_t width, bool glu = false, bool normed = false, Pre pre = Pre::kNone) {
    if (!q8) return;
    const int64_t b = quant::int8_rotation_block(width);
    const double rotate = b > 1 ? std::log2(double(b)) + 1 : 0;
    const double elems = rows * double(width);
    const double unfold = normed && s.norm_fold ? 1 : 0;
    const double glu_flops = glu ? (glu_sums ? 14 : 10) : 0;
    const bool residual = pre == Pre::kResidual || pre == Pre::kResidualScaled;
    const double pre_flops = pre == Pre::kNone ? 0 : pre == Pre::kNormOnly ? 4 : pre == Pre::kResidual ? 5 : 7;
    t.op(HostKind::kQuantize, (glu ? 9 : residual ? 13 : 5) * elems,
         (glu_flops + pre_flops + 4 + rotate + unfold) * elems, p.host_op_us);
  };
  const auto scale = [&](double elems) {  // int32 → f32 × row scale × column scale
    if (q8) t.op(HostKind::kScale, 8 * elems, 2 * elems, p.host_op_us);
  };
  // residual add, with the next input's RMSNorm of the same row; scaled: the branch read as int32 sums
  // and scaled in the pass (HostShape::scale_in_readers), 2 more flops per value
  const auto add_norm = [&](bool norm, bool scaled) {
    const double extra = scaled ? 2 * m * E : 0;
    if (norm) {
      // read base and branch, write the sum and its norm
      t.op(HostKind::kNormResidual, 4 * 4 * m * E, 5 * m * E + extra, p.host_op_us);
    } else {
      t.op(HostKind::kNormResidual, 4 * 3 * m * E, m * E + extra, p.host_op_us);
    }
  };
  const bool fused_residual = q8 && s.residual_in_quantize;
  const bool in_readers = q8 && s.scale_in_readers;  // the scales below done by the passes that read
  const bool down_in_reader = in_readers && !s.moe_ffn;  // the FFN's results scaled by the residual add
  const bool ffn_fused_residual = fused_residual && !s.moe_ffn;  // the FFN's input rows never written
  // The residual add before Q/K/V (after the FFN) and before the FFN (after attn_output).
  const Pre qkv_pre = down_in_reader ? Pre::kResidualScaled : Pre::kResidual;
  const Pre ffn_pre = in_readers ? Pre::kResidualScaled : Pre::kResidual;
  // layer 0's attn_norm (later layers': add_norm, or the Q/K/V quantizing pass)
  if (s.layers > 0 && !fused_residual) t.vec(HostKind::kNormResidual, m * E, m * E, 4);
  for (int64_t l = 0; l < s.layers; ++l) {
    if (fused_residual) {  // Q/K/V input: layer 0's rows normed, or the previous layer's last add and norm
      quantize(m, s.hidden, false, true, l == 0 ? Pre::kNormOnly : qkv_pre);
    } else {
      quantize(m, s.hidden, false, true);
    }
    if (!in_readers) scale(m * (Q + 2 * KV));  // Q/K/V results
    // One pass per row (Forward::attend): the Q/K/V biases, RoPE on q and k, the K/V row stored (and
    // with in_readers the rows scaled first, V's written back).
    const double bias_flops = s.qkv_bias ? m * (Q + 2 * KV) : 0;
    const double scale_flops = in_readers ? 2 * m * (Q + 2 * KV) : 0;
    t.op(HostKind::kRopeKv, m * (8 * Q + 8 * KV + 4 * KV) + m * 2 * KV * s.kv_elem_bytes + (in_readers ? 4 * m * KV : 0),
         m * (6 * (Q + KV) + 2 * KV) + bias_flops + scale_flops, p.host_op_us);
    const double seqs = double(std::max<int64_t>(1, pass.sequences));  // each sequence attends on its own
    const bool in_place = s.kv_converted && s.kv_decode_in_place && pass.rows == std::max<int64_t>(1, pass.sequences);
    if (s.kv_converted && !in_place) {
      t.op(HostKind::kAttention, pass.loaded_rows * 2 * KV * (s.kv_elem_bytes + 4), pass.loaded_rows * 2 * KV,
           seqs * p.host_op_us);
    }
    // Attention: per query row and key, a dot product and a weighted sum per query head (2 · head_dim
    // flops each) and the softmax (≈ 5 per score); each K and V row read once per rows_per_key_load
    // query rows (the query heads of one KV head share the load).
    const double keys = pass.key_rows;
    const double key_loads = keys / double(std::max<int64_t>(1, pass.rows_per_key_load));
    const double key_bytes = in_place ? s.kv_elem_bytes : 4;  // f32 rows, or the cache's own in place
    const double converts = in_place ? key_loads * 2 * KV : 0;  // f16 → f32 of each row slice read
    t.op(HostKind::kAttention, key_loads * 2 * KV * key_bytes + 8 * m * Q,
         keys * double(s.heads) * (4 * double(s.head_dim) + 5) + converts, seqs * p.cpu_call_us);
    quantize(m, s.heads * s.head_dim);  // attention output
    if (!in_readers) scale(m * E);   // attn_output
    if (ffn_fused_residual) {        // residual add + ffn_norm in gate/up's quantizing pass
      quantize(m, s.hidden, false, true, ffn_pre);
    } else {
      add_norm(true, in_readers);    // residual add + ffn_norm
      quantize(m, s.hidden, false, true);
    }
    if (!glu_sums) scale(m * 2 * F);  // gate, up (else in ffn_down's quantizing pass)
    if (q8) {
      quantize(m, s.ff, true);       // SwiGLU and ffn_down's input quantized in one pass
    } else {
      t.vec(HostKind::kQuantize, 2 * m * F, m * F, 10);   // SwiGLU (an exp per element)
    }
    if (!down_in_reader) scale(m * E);  // ffn_down
    // residual add + the next layer's attn_norm (fused: in the next Q/K/V quantizing pass, below for the last)
    if (!fused_residual) add_norm(l + 1 < s.layers, down_in_reader);
  }
  t.vec(HostKind::kEdges, m * E, m * E, 0);  // embedding rows
  const double o = double(pass.out_rows);
  if (fused_residual && s.layers > 0) {  // the last add and output_norm, of the output rows only
    t.op(HostKind::kNormResidual, 4 * 4 * o * E, (down_in_reader ? 7 : 5) * o * E, p.host_op_us);
  } else {
    t.vec(HostKind::kNormResidual, o * E, o * E, 4);  // output_norm
  }
  quantize(o, s.hidden, false, true);
  scale(o * double(s.vocab));        // logits
  t.vec(HostKind::kEdges, o * double(s.vocab), 0, 1);  // the logits checked finite (Forward::run)
  t.vec(HostKind::kEdges, o * double(s.vocab) * 2, 0, 0);  // sampling: a max and a softmax pass over the logits
  return t.c;
}

}  // namespace ork::npu::sim
