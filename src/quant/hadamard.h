// Block-Hadamard rotation of a linear layer's input space: the outlier-safe int8 transform.
//
// For a linear y = x Wᵀ with K inputs, R = diag(H_b, ..., H_b) (K/b blocks) with H_b the orthonormal
// Walsh–Hadamard matrix of size b (Sylvester order, H_b[i][j] = (-1)^popcount(i & j) / sqrt(b)) is
// symmetric and orthogonal, so (x R)(W R)ᵀ = x R Rᵀ Wᵀ = x Wᵀ exactly in real arithmetic. Rotating
// both sides before int8 quantization spreads a few large activation channels over all b channels of
// their block, so one scale per token no longer spends its range on them (QuaRot, Ashkboos et al.
// 2024, arXiv:2404.00456; QuIP#, Tseng et al. 2024, arXiv:2402.04396). The weights are rotated once
// (at pack time), the activations on the host before quantizing.
//
// hadamard_rotate_rows is the implementation both sides use (so the CPU int8 path and the NPU path
// see the same bits): an in-place fast Walsh–Hadamard transform per block, butterflies
// (a, b) -> (a + b, a - b) for h = 1, 2, 4, ..., b/2 in that order, then each element times
// 1/sqrt(b) rounded to f32 once (f32 throughout). The scalar reference (hadamard_entry, an O(b²)
// product) lives beside it for tests.
// All functions are pure apart from their output; thread-safe on distinct data.
#pragma once

#include <cstdint>
#include <vector>

namespace ork::quant {

inline constexpr int64_t kMaxHadamardBlock = 512;

// The block size used for K inputs: the largest power of two dividing k, at most kMaxHadamardBlock
// (1 for odd k: no rotation). k >= 1, else ork::Error.
int64_t hadamard_block(int64_t k);

// Sylvester Hadamard entry without normalisation: +1 or -1 = (-1)^popcount(i & j).
inline int hadamard_sign(int64_t i, int64_t j) { return __builtin_popcountll(uint64_t(i & j)) % 2 ? -1 : 1; }

// The block by which every int8 path (the NPU packing and NpuMatmul, the CPU int8 path) rotates a
// linear's K inputs: hadamard_block(k). Part of the .orkpack packing layout (version 2).
inline int64_t int8_rotation_block(int64_t k) { return hadamard_block(k); }

// x: m rows of k f32 (row stride k), rotated in place: each row's k/block consecutive blocks of
// `block` elements are multiplied by H_block. block: a power of two dividing k (ork::Error
// otherwise); block == 1 leaves x unchanged.
void hadamard_rotate_rows(float* x, int64_t m, int64_t k, int64_t block);

// The activations x [m][k] as the int8 paths quantize them: copied into `buf` and rotated by
// int8_rotation_block(k); returns buf.data() (x itself, not copied, when the block is 1).
const float* rotate_for_int8(const float* x, int64_t m, int64_t k, std::vector<float>& buf);

}  // namespace ork::quant
