// The board cost model's price of the host work of one forward pass (board_model.h): what the CPU
// does between the matmuls — norms, RoPE, the KV cache, attention, activations, residual adds,
// quantizing each matmul's input for the NPU and scaling its int32 results, the final norm and
// sampling. MODELED from the shapes, not measured: the op list of ork's dense layer
// (model/forward.cpp) on the int8 device path, each op priced at
//   host_op_us + max(bytes / cpu_read_gbps, flops / cpu_f32_gflops)
// An op is one pass over the rows: quantizing a matmul's input is one op that checks it finite,
// rotates each row by its block-Hadamard transform and quantizes it (quant/quantize_activations.h);
// each residual add is one op with the RMSNorm of the next linear's input (Forward::add_branch);
// the SwiGLU is computed inside the quantizing pass of ffn_down's input (MatmulBackend::matmul_glu),
// and with HostShape::glu_from_sums so is the scaling of gate/up's int32 results (MatmulBackend::ffn);
// the Q/K/V biases, RoPE and the K/V store are one pass per row (Forward::attend).
// (attention, which runs on the thread pool, at cpu_call_us instead of host_op_us). Architecture
// extras (Gemma's post-norms and soft-capping, QK norms, MoE routing) and sliding windows are not
// priced separately: a pass is priced as the dense layer with every key attended.
// Thread-safe: pure functions of their arguments.
#pragma once

#include <cstdint>

#include "npu/sim/board_model.h"

namespace ork::npu::sim {

struct HostShape {
  int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, ff = 0, vocab = 0;
  double kv_elem_bytes = 2;  // bytes per KV cache element (f16: 2, f32: 4, q8_0: 34 / 32)
  // The cache holds other than f32: each layer's attended rows are converted to f32 before attention
  // (model/forward.cpp), read at kv_elem_bytes and written at 4 bytes per element.
  bool kv_converted = true;
  // ... except in a decode step (one token per sequence), where attention reads the rows in place at
  // kv_elem_bytes (an f16 cache: ops::attention_f16).
  bool kv_decode_in_place = true;
  bool int8_matmuls = true;  // the w8a8 path: matmul inputs quantized, results scaled on the host
  bool qkv_bias = false;     // Q/K/V biases added after the Q/K/V results (qwen2)
  // int4 weights (`--npu-wtype i4|i4a4`): the quantizing pass of each input that follows a norm
  // (Q/K/V, gate/up, the output) also divides the norm weight out of it (quant/norm_fold.h): one
  // more flop per element.
  bool norm_fold = false;
  // The FFN's gate/up results stay unscaled int32 until ffn_down's quantizing pass reads them
  // (MatmulBackend::ffn, runtime/activation_source.h GatedSums): no scale pass of their own, 4 more
  // flops per element in that pass (two scalings). ork's dense device path, int8 or int4 (not MoE).
  bool glu_from_sums = false;
  // Q/K/V's, attn_output's and ffn_down's int32 results are scaled by the passes that read them
  // (MatmulBackend::*_unscaled: the RoPE pass in place, the residual adds into a row buffer): no scale
  // pass of their own, 2 flops per value in the reader, and V's rows written back by the RoPE pass.
  bool scale_in_readers = false;
  // Each residual add and the next input's RMSNorm are done by that input's quantizing pass
  // (model::ResidualNorm: MatmulBackend::matmul_group_unscaled and ffn compute their input rows as
  // they quantize them): one op instead of two, the normed rows never written (the stream still is);
  // layer 0's attn_norm in its Q/K/V quantizing pass; the last layer's add and the output norm for
  // the output rows only (Forward::run).
  bool residual_in_quantize = false;
  // The FFN is a MoE layer's (model::MoeFfn), priced as a dense one of the routed experts' width `ff`
  // whose calls scale their own results (no glu_from_sums, ffn_down's results not scaled by the
  // residual add) and whose input rows are written for the router (no residual_in_quantize there);
  // Q/K/V and attn_output as the dense layer's.
  bool moe_ffn = false;
};

// One pass over `rows` tokens of one or more sequences.
struct HostPass {
  int64_t rows = 0;
  int64_t out_rows = 1;     // rows that reach the output projection and sampling
  double key_rows = 0;      // Σ over the query rows of the keys each attends to
  double loaded_rows = 0;   // Σ over the sequences of the cache rows converted per layer (kv_converted)
  int64_t sequences = 1;    // each converts its cache rows and runs attention as its own op
  // Query rows that share one load of a K/V row: 1 for a decode step, ops::kAttentionTileTokens for
  // a prefill pass (ops::attention_blocked).
  int64_t rows_per_key_load = 1;
};

// A pass of n tokens of one sequence at positions pos0 .. pos0 + n − 1 (keys 0 .. p each).
HostPass sequence_pass(int64_t pos0, int64_t n, int64_t out_rows, int64_t rows_per_key_load = 1);

// What a host op does, for the breakdown of HostCost::ns.
enum class HostKind : int {
  kQuantize,      // a matmul's input checked, rotated and quantized, with the FFN's activation (fused
                  // into ffn_down's quantizing pass on the int8 paths, an op of its own on the float path)
                  // and, with HostShape::residual_in_quantize, the residual add and RMSNorm before it
  kScale,         // a matmul's int32 results scaled to f32
  kRopeKv,        // the Q/K/V biases, RoPE and the K/V store
  kAttention,     // attention, and converting the cache rows it reads to f32
  kNormResidual,  // RMSNorms and residual adds
  kEdges,         // embedding rows, the logits' check and sampling
};
inline constexpr int kHostKinds = 6;
const char* host_kind_name(HostKind k);  // "quantize", "scale", "rope_kv", "attention", "norm_residual", "edges"

struct HostCost {
  double ns = 0;      // modeled time
  double ops = 0;     // host ops priced
  double bytes = 0;   // bytes they read and write
  double flops = 0;
  double ns_by_kind[kHostKinds] = {};  // ns split by HostKind (sums to ns)
};

// The modeled host time of `pass` on a model of `shape`. Zero rows cost nothing.
HostCost cost_host_pass(const BoardProfile& p, const HostShape& shape, const HostPass& pass);

}  // namespace ork::npu::sim
