// The board model's price of host work (npu/sim/host_cost.h): its op list, its terms, and the passes
// a sequence and a batch make.
#include <gtest/gtest.h>

#include "npu/sim/host_cost.h"

namespace ork::npu::sim {
namespace {

HostShape small_shape() {
  HostShape s;
  s.hidden = 64, s.layers = 3, s.heads = 4, s.kv_heads = 2, s.head_dim = 16, s.ff = 128, s.vocab = 1000;
  return s;
}

// Only the fixed costs: bandwidth and arithmetic so high that they price nothing.
BoardProfile fixed_only() {
  BoardProfile p;
  p.cpu_read_gbps = 1e30, p.cpu_f32_gflops = 1e30;
  p.host_op_us = 1, p.cpu_call_us = 10;
  return p;
}

// The fixed costs of fixed_only() and one byte read or written per ns; arithmetic free.
BoardProfile one_byte_per_ns() {
  BoardProfile p = fixed_only();
  p.cpu_read_gbps = 1;
  return p;
}

TEST(HostCost, ANoRowPassCostsNothing) {
  EXPECT_EQ(cost_host_pass(BoardProfile{}, small_shape(), HostPass{}).ns, 0.0);
}

TEST(HostCost, TheInt8PathPricesThirteenOpsPerLayerAndSevenAroundThem) {
  HostShape s = small_shape();
  s.kv_decode_in_place = false;  // every pass converts the cache
  const HostCost c = cost_host_pass(fixed_only(), s, sequence_pass(7, 1, 1));
  // Per layer: RoPE with the KV store, KV conversion, attention, 2 residual adds each with the next
  // norm, a quantize + scale around each of the 4 jobs (ffn_down's quantize computing the SwiGLU);
  // then layer 0's attn_norm, embedding, output norm, its quantize + scale, the logits' finiteness
  // check, sampling.
  EXPECT_EQ(c.ops, 13.0 * 3 + 7);
  // 12 ops of host_op_us and attention at cpu_call_us per layer; 7 of host_op_us.
  EXPECT_DOUBLE_EQ(c.ns, (3 * (12 * 1.0 + 10.0) + 7 * 1.0) * 1e3);
}

TEST(HostCost, EachOpIsCountedUnderItsKindAndTheKindsSumToTheWhole) {
  HostShape s = small_shape();
  s.kv_decode_in_place = false;
  const HostCost c = cost_host_pass(fixed_only(), s, sequence_pass(7, 1, 1));
  const auto kind = [&](HostKind k) { return c.ns_by_kind[int(k)] / 1e3; };  // µs: ops × their fixed cost
  // Per layer 4 quantizes, 4 scales, 1 RoPE/KV pass, the conversion (host_op_us) and attention
  // (cpu_call_us), 2 residual adds with norms; around the layers: the output's quantize and scale,
  // layer 0's norm and the output norm, the embedding rows, the logits' check and sampling.
  EXPECT_DOUBLE_EQ(kind(HostKind::kQuantize), 3 * 4 + 1);
  EXPECT_DOUBLE_EQ(kind(HostKind::kScale), 3 * 4 + 1);
  EXPECT_DOUBLE_EQ(kind(HostKind::kRopeKv), 3);
  EXPECT_DOUBLE_EQ(kind(HostKind::kAttention), 3 * (1 + 10.0));
  EXPECT_DOUBLE_EQ(kind(HostKind::kNormResidual), 3 * 2 + 2);  // the last add without a norm
  EXPECT_DOUBLE_EQ(kind(HostKind::kEdges), 3);
  double sum = 0;
  for (const double ns : c.ns_by_kind) sum += ns;
  EXPECT_DOUBLE_EQ(sum, c.ns);
  EXPECT_STREQ(host_kind_name(HostKind::kNormResidual), "norm_residual");
}

TEST(HostCost, GateUpResultsScaledInsideDownsQuantizingPassSaveTheirScalePass) {
  const BoardProfile p = one_byte_per_ns();
  HostShape unfused = small_shape(), fused = small_shape();
  fused.glu_from_sums = true;
  const HostPass pass = sequence_pass(0, 5, 1);
  const HostCost a = cost_host_pass(p, unfused, pass), b = cost_host_pass(p, fused, pass);
  // Per layer one op fewer (gate/up's scale: 5 rows × 2 × ff 128 int32 read and f32 written), the
  // same flops (the scale's 2 per value now in the quantizing pass).
  EXPECT_EQ(a.ops - b.ops, 3.0);
  EXPECT_DOUBLE_EQ(a.bytes - b.bytes, 3 * 8 * 5 * 2 * 128.0);
  EXPECT_DOUBLE_EQ(a.flops, b.flops);
  EXPECT_NEAR(a.ns - b.ns, 3 * (1e3 + 8 * 5 * 2 * 128.0), 1e-6);
  EXPECT_NEAR(a.ns_by_kind[int(HostKind::kScale)] - b.ns_by_kind[int(HostKind::kScale)], a.ns - b.ns, 1e-6);
}

TEST(HostCost, ResultsScaledByTheirReadersSaveThreeScalePassesPerLayer) {
  const BoardProfile p = one_byte_per_ns();
  HostShape unfused = small_shape(), fused = small_shape();
  fused.scale_in_readers = true;
  const HostPass pass = sequence_pass(0, 5, 1);
  const HostCost a = cost_host_pass(p, unfused, pass), b = cost_host_pass(p, fused, pass);
  // Per layer: Q/K/V's (q_dim 64 + 2 · kv_dim 32), attn_output's and ffn_down's (hidden 64 each) scale
  // passes gone, 8 bytes per value; V's rows written back by the RoPE pass (4 bytes per value); the
  // same flops (each scale's 2 per value now in its reader).
  EXPECT_EQ(a.ops - b.ops, 3.0 * 3);
  const double per_layer = 8 * 5 * (64 + 64 + 2 * 64.0) - 4 * 5 * 32.0;
  EXPECT_DOUBLE_EQ(a.bytes - b.bytes, 3 * per_layer);
  EXPECT_DOUBLE_EQ(a.flops, b.flops);
  EXPECT_NEAR(a.ns - b.ns, 3 * (3e3 + per_layer), 1e-6);
}

TEST(HostCost, ResidualAddsDoneByTheQuantizingPassesSaveAnOpAndTheNormedRows) {
  const BoardProfile p = one_byte_per_ns();
  HostShape unfused = small_shape(), fused = small_shape();
  unfused.scale_in_readers = fused.scale_in_readers = true;
  fused.residual_in_quantize = true;
  const HostPass pass = sequence_pass(0, 5, 2);
  const HostCost a = cost_host_pass(p, unfused, pass), b = cost_host_pass(p, fused, pass);
  // 3 layers of hidden 64, 5 rows, 2 of them reach the output. Gone: layer 0's norm op (5 rows read and
  // written: 8 bytes per value), the normed rows each add wrote and its quantizing pass read (8 bytes per
  // value, 2 adds per layer but the last); the last layer's add over 5 rows (12 bytes per value) and the
  // output norm (8) become one pass over the 2 output rows (base and branch read, stream and normed
  // row written: 16).
  EXPECT_EQ(a.ops - b.ops, 1.0 + 2 * 3 - 1 + 1);
  const double E = 64, m = 5, o = 2;
  const double saved = 8 * m * E + 8 * m * E * (2 * 3 - 1) + 12 * m * E + 8 * o * E - 16 * o * E;
  EXPECT_DOUBLE_EQ(a.bytes - b.bytes, saved);
  EXPECT_NEAR(a.ns - b.ns, (1 + 2 * 3 - 1 + 1) * 1e3 + saved, 1e-6);
  // Without int8 matmuls nothing is quantized: the flag changes nothing.
  unfused.int8_matmuls = fused.int8_matmuls = false;
  EXPECT_DOUBLE_EQ(cost_host_pass(p, unfused, pass).ns, cost_host_pass(p, fused, pass).ns);
}

TEST(HostCost, AMoeFfnScalesItsOwnResultsAndWritesItsInput) {
  const BoardProfile p = one_byte_per_ns();
  HostShape dense = small_shape();
  dense.glu_from_sums = dense.scale_in_readers = dense.residual_in_quantize = true;
  HostShape moe = dense;
  moe.moe_ffn = true;
  const HostPass pass = sequence_pass(0, 5, 1);
  const HostCost a = cost_host_pass(p, dense, pass), b = cost_host_pass(p, moe, pass);
  // Per layer three ops more: gate/up's scale (8 bytes per value of 2 × ff 128), ffn_down's (hidden
  // 64) and the residual add before the FFN as a pass of its own whose normed rows the quantizing
  // pass reads back (8 bytes per hidden value more).
  EXPECT_EQ(b.ops - a.ops, 3.0 * 3);
  const double E = 64, F = 128, m = 5;
  EXPECT_DOUBLE_EQ(b.bytes - a.bytes, 3 * (8 * m * 2 * F + 8 * m * E + 8 * m * E));
  // Q/K/V and attn_output are read as the dense layer's: nothing else moves.
  EXPECT_NEAR(b.ns - a.ns, 3 * (3e3 + 8 * m * 2 * F + 16 * m * E), 1e-6);
}

TEST(HostCost, QkvBiasesAreAddedInTheRopePass) {
  BoardProfile p;
  p.cpu_read_gbps = 1e30, p.cpu_f32_gflops = 1, p.host_op_us = 0, p.cpu_call_us = 0;  // one flop per ns
  HostShape with = small_shape(), without = small_shape();
  with.qkv_bias = true;
  const HostPass pass = sequence_pass(7, 2, 1);
  EXPECT_EQ(cost_host_pass(fixed_only(), with, pass).ops, cost_host_pass(fixed_only(), without, pass).ops);
  // 2 rows × (q_dim 64 + 2 · kv_dim 32) additions per layer.
  EXPECT_NEAR(cost_host_pass(p, with, pass).ns - cost_host_pass(p, without, pass).ns, 3 * 2 * (64 + 64.0), 1e-6);
}

TEST(HostCost, QuantizingPricesTheHadamardButterflies) {
  // No layers: the int8 path adds only the output's quantize (hidden inputs) and scale (vocab results).
  const auto int8_flops = [](int64_t hidden) {
    HostShape s = small_shape(), f;
    s.layers = 0, s.hidden = hidden;
    f = s;
    f.int8_matmuls = false;
    const HostPass pass = sequence_pass(7, 1, 1);
    return cost_host_pass(BoardProfile{}, s, pass).flops - cost_host_pass(BoardProfile{}, f, pass).flops;
  };
  // hidden 64: a 64-block rotation, log2 64 + 1 = 7 flops per element beside the quantizing's 4;
  // hidden 63 (odd): no rotation. The scale: 2 flops per logit.
  EXPECT_DOUBLE_EQ(int8_flops(64), 64 * (4 + 7.0) + 2 * 1000.0);
  EXPECT_DOUBLE_EQ(int8_flops(63), 63 * 4.0 + 2 * 1000.0);
}

TEST(HostCost, TheFloatPathWithAnF32CacheHasNoQuantizingAndNoConversion) {
  HostShape s = small_shape();
  s.int8_matmuls = false, s.kv_converted = false;
  EXPECT_EQ(cost_host_pass(fixed_only(), s, sequence_pass(7, 1, 1)).ops, 5.0 * 3 + 5);
}

TEST(HostCost, AttentionReadsEveryKeysKAndVRowOncePerQueryRow) {
  BoardProfile p;
  p.cpu_read_gbps = 1;  // one byte per ns
  p.cpu_f32_gflops = 1e30, p.host_op_us = 0, p.cpu_call_us = 0;
  HostShape s = small_shape();
  s.kv_converted = false;
  HostPass a = sequence_pass(7, 1, 1), b = a;
  b.key_rows = 0;
  // 8 keys × (K + V) × kv_dim 32 × 4 bytes, per layer.
  EXPECT_NEAR(cost_host_pass(p, s, a).ns - cost_host_pass(p, s, b).ns, 3 * 8 * 2 * 32 * 4.0, 1e-6);
}

TEST(HostCost, APrefillTileSharesEachKeyLoad) {
  BoardProfile p;
  p.cpu_read_gbps = 1, p.cpu_f32_gflops = 1e30, p.host_op_us = 0, p.cpu_call_us = 0;
  HostShape s = small_shape();
  s.kv_converted = false;
  HostPass a = sequence_pass(0, 8, 1, 4), b = a;
  b.key_rows = 0;
  // 36 query-key pairs, a K and a V row loaded once per 4 query rows, per layer.
  EXPECT_NEAR(cost_host_pass(p, s, a).ns - cost_host_pass(p, s, b).ns, 3 * 36 / 4.0 * 2 * 32 * 4.0, 1e-6);
}

TEST(HostCost, TheConvertedCacheIsReadAtItsTypeAndWrittenAsF32) {
  BoardProfile p;
  p.cpu_read_gbps = 1, p.cpu_f32_gflops = 1e30, p.host_op_us = 0, p.cpu_call_us = 0;
  HostShape f16 = small_shape(), f32 = small_shape();
  f16.kv_decode_in_place = false;
  f32.kv_converted = false;
  const HostPass pass = sequence_pass(99, 1, 1);  // 100 rows converted per layer
  EXPECT_NEAR(cost_host_pass(p, f16, pass).ns - cost_host_pass(p, f32, pass).ns, 3 * 100 * 2 * 32 * (2.0 + 4.0), 1e-6);
}

TEST(HostCost, ADecodeStepReadsTheF16CacheInPlaceAndAPrefillConvertsIt) {
  BoardProfile p;
  p.cpu_read_gbps = 1, p.cpu_f32_gflops = 1e30, p.host_op_us = 0, p.cpu_call_us = 0;
  HostShape in_place = small_shape(), converted = small_shape();
  converted.kv_decode_in_place = false;
  const HostPass decode = sequence_pass(99, 1, 1);  // 100 keys
  // Converted: 100 rows × K and V × 32 read at 2 bytes and written at 4, then attention reads them at
  // 4; in place attention reads them at 2. Per layer.
  EXPECT_NEAR(cost_host_pass(p, converted, decode).ns - cost_host_pass(p, in_place, decode).ns,
              3 * 100 * 2 * 32 * ((2.0 + 4.0) + 4.0 - 2.0), 1e-6);
  EXPECT_EQ(cost_host_pass(fixed_only(), in_place, decode).ops, 12.0 * 3 + 7);
  // A prefill pass converts either way.
  const HostPass prefill = sequence_pass(0, 8, 1, 4);
  EXPECT_EQ(cost_host_pass(p, converted, prefill).ns, cost_host_pass(p, in_place, prefill).ns);
}

TEST(HostCost, ASequencePassAttendsToEveryEarlierPosition) {
  const HostPass h = sequence_pass(10, 3, 1);
  EXPECT_EQ(h.rows, 3);
  EXPECT_DOUBLE_EQ(h.key_rows, 11 + 12 + 13);
  EXPECT_DOUBLE_EQ(h.loaded_rows, 13);
}

TEST(HostCost, ArithmeticBoundAttentionAtLongContext) {
  BoardProfile p;
  p.cpu_read_gbps = 1e30, p.cpu_f32_gflops = 1, p.host_op_us = 0, p.cpu_call_us = 0;  // one flop per ns
  HostShape s = small_shape();
  HostPass a = sequence_pass(4095, 1, 1), b = a;
  b.key_rows = 0;
  // 4096 keys × 4 heads × (4 · 16 + 5) flops, and the f16 → f32 conversion of each key's K and V
  // (kv_dim 32) read in place, per layer.
  EXPECT_NEAR(cost_host_pass(p, s, a).ns - cost_host_pass(p, s, b).ns, 3 * (4096 * 4 * (4 * 16 + 5.0) + 4096 * 2 * 32.0), 1e-3);
}

TEST(HostCost, EachSequenceOfABatchAttendsOnItsOwn) {
  HostPass one = sequence_pass(7, 1, 1), four = one;
  four.rows = four.sequences = 4;  // a batched decode step: one token of each of 4 sequences
  // Three more attention dispatches (cpu_call_us) per layer; the f16 cache is read in place.
  EXPECT_NEAR(cost_host_pass(fixed_only(), small_shape(), four).ns - cost_host_pass(fixed_only(), small_shape(), one).ns,
              3 * 3 * 10.0 * 1e3, 1e-6);
}

}  // namespace
}  // namespace ork::npu::sim
