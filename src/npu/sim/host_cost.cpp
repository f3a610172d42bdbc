#include "npu/sim/host_cost.h"

#include <algorithm>

namespace ork::npu::sim {

namespace {

// Accumulates ops priced as host_op_us (or a pool dispatch) + max(memory, arithmetic).
struct Tally {
  const BoardProfile& p;
  HostCost c;
  void op(double bytes, double flops, double fixed_us) {
    c.ns += fixed_us * 1e3 + std::max(bytes / p.cpu_read_gbps, flops / p.cpu_f32_gflops);  // GB/s = bytes/ns
    c.ops += 1, c.bytes += bytes, c.flops += flops;
  }
  void vec(double elems_read, double elems_written, double flops_per_elem) {  // f32 in and out
    op(4 * (elems_read + elems_written), flops_per_elem * elems_written, p.host_op_us);
  }
};

}  // namespace

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
  const auto quantize = [&](double elems) {  // f32 → int8 with one scale per row
    if (q8) t.op(5 * elems, 3 * elems, p.host_op_us);
  };
  const auto scale = [&](double elems) {  // int32 → f32 × row scale × column scale
    if (q8) t.op(8 * elems, 2 * elems, p.host_op_us);
  };
  for (int64_t l = 0; l < s.layers; ++l) {
    t.vec(m * E, m * E, 4);          // attn_norm
    quantize(m * E);                 // Q/K/V input
    scale(m * (Q + 2 * KV));         // Q/K/V results
    t.vec(m * (Q + KV), m * (Q + KV), 6);  // RoPE on q and k
    t.op(m * 2 * KV * (4 + s.kv_elem_bytes), m * 2 * KV, p.host_op_us);  // KV cache store
    const double seqs = double(std::max<int64_t>(1, pass.sequences));  // each sequence attends on its own
    const bool in_place = s.kv_converted && s.kv_decode_in_place && pass.rows == std::max<int64_t>(1, pass.sequences);
    if (s.kv_converted && !in_place) {
      t.op(pass.loaded_rows * 2 * KV * (s.kv_elem_bytes + 4), pass.loaded_rows * 2 * KV, seqs * p.host_op_us);
    }
    // Attention: per query row and key, a dot product and a weighted sum per query head (2 · head_dim
    // flops each) and the softmax (≈ 5 per score); each K and V row read once per rows_per_key_load
    // query rows (the query heads of one KV head share the load).
    const double keys = pass.key_rows;
    const double key_loads = keys / double(std::max<int64_t>(1, pass.rows_per_key_load));
    const double key_bytes = in_place ? s.kv_elem_bytes : 4;  // f32 rows, or the cache's own in place
    const double converts = in_place ? key_loads * 2 * KV : 0;  // f16 → f32 of each row slice read
    t.op(key_loads * 2 * KV * key_bytes + 8 * m * Q, keys * double(s.heads) * (4 * double(s.head_dim) + 5) + converts,
         seqs * p.cpu_call_us);
    quantize(m * Q);                 // attention output
    scale(m * E);                    // attn_output
    t.vec(2 * m * E, m * E, 1);      // residual add
    t.vec(m * E, m * E, 4);          // ffn_norm
    quantize(m * E);
    scale(m * 2 * F);                // gate, up
    t.vec(2 * m * F, m * F, 10);     // SwiGLU (an exp per element)
    quantize(m * F);
    scale(m * E);                    // ffn_down
    t.vec(2 * m * E, m * E, 1);      // residual add
  }
  t.vec(m * E, m * E, 0);            // embedding rows
  const double o = double(pass.out_rows);
  t.vec(o * E, o * E, 4);            // output_norm
  quantize(o * E);
  scale(o * double(s.vocab));        // logits
  t.vec(o * double(s.vocab) * 2, 0, 0);  // sampling: a max and a softmax pass over the logits
  return t.c;
}

}  // namespace ork::npu::sim
