// GGUF (ggml) quantized block layouts, one POD struct per format, byte-for-byte as ggml stores them
// (ggml/src/ggml-common.h). docs/quant.md has a table per format and the decode formulas.
//
// All multi-byte fields are little-endian (GGUF files are little-endian; ork runs on little-endian
// hosts only). Half-precision fields hold IEEE fp16 bits (decode with ork::f16_to_f32). The structs
// have no padding (checked by static_assert) so an array of them is exactly the bytes of a row.
// Codecs copy blocks in and out with memcpy, so data need not be aligned to alignof(block).
#pragma once

#include <cstdint>

namespace ork::quant {

inline constexpr int kQK = 32;     // elements per block of the legacy formats (Q4_0 .. Q8_1)
inline constexpr int kQK_K = 256;  // elements per super-block of the K formats (Q2_K .. Q8_K)
inline constexpr int kKScaleBytes = 12;  // packed 6-bit scales and mins of Q4_K / Q5_K

// Q4_0: x = d * (q - 8), q in [0, 15]. 4.5 bits per weight.
struct BlockQ4_0 {
  uint16_t d;           // fp16 scale
  uint8_t qs[kQK / 2];  // element j (< 16) in the low nibble of qs[j], element j + 16 in its high nibble
};
static_assert(sizeof(BlockQ4_0) == 18);

// Q4_1: x = d * q + m, q in [0, 15]. 5 bits per weight.
struct BlockQ4_1 {
  uint16_t d;           // fp16 scale
  uint16_t m;           // fp16 offset (the block minimum)
  uint8_t qs[kQK / 2];  // nibbles, as in Q4_0
};
static_assert(sizeof(BlockQ4_1) == 20);

// Q5_0: x = d * (q - 16), q in [0, 31]. 5.5 bits per weight.
struct BlockQ5_0 {
  uint16_t d;           // fp16 scale
  uint8_t qh[4];        // 5th bits: bit j of the little-endian uint32 is bit 4 of element j
  uint8_t qs[kQK / 2];  // low 4 bits, nibbles as in Q4_0
};
static_assert(sizeof(BlockQ5_0) == 22);

// Q5_1: x = d * q + m, q in [0, 31]. 6 bits per weight.
struct BlockQ5_1 {
  uint16_t d;           // fp16 scale
  uint16_t m;           // fp16 offset (the block minimum)
  uint8_t qh[4];        // 5th bits, as in Q5_0
  uint8_t qs[kQK / 2];  // low 4 bits, as in Q4_0
};
static_assert(sizeof(BlockQ5_1) == 24);

// Q8_0: x = d * q, q in [-128, 127]. 8.5 bits per weight.
struct BlockQ8_0 {
  uint16_t d;       // fp16 scale
  int8_t qs[kQK];   // element j is qs[j]
};
static_assert(sizeof(BlockQ8_0) == 34);

// Q8_1: x = d * q; s caches d * sum(q) for dot products with the _1 formats. 9 bits per weight.
struct BlockQ8_1 {
  uint16_t d;       // fp16 scale
  uint16_t s;       // fp16 of d * sum(qs)
  int8_t qs[kQK];   // element j is qs[j]
};
static_assert(sizeof(BlockQ8_1) == 36);

// Q2_K: 16 sub-blocks of 16; x = d*sc*q - dmin*m, q in [0, 3], sc and m 4-bit. 2.625 bits/weight.
// Element e = 128*h + 32*g + l (h < 2, g < 4, l < 32) is bits 2g..2g+1 of qs[32*h + l]; its
// sub-block is e / 16.
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];  // sub-block j: scale in the low nibble, min in the high nibble
  uint8_t qs[kQK_K / 4];       // 2-bit quants, 4 per byte (layout above)
  uint16_t d;                  // fp16 super-block scale of the scales
  uint16_t dmin;               // fp16 super-block scale of the mins
};
static_assert(sizeof(BlockQ2_K) == 84);

// Q3_K: 16 sub-blocks of 16; x = d*(sc-32)*q, q in [-4, 3], sc 6-bit. 3.4375 bits per weight.
// Element e = 128*h + 32*g + l: low 2 bits are bits 2g..2g+1 of qs[32*h + l]; the high bit is bit
// 4h+g of hmask[l]; q = low - (high ? 0 : 4). Its sub-block is e / 16.
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];  // high bits (set bit: q = low; clear: q = low - 4)
  uint8_t qs[kQK_K / 4];     // low 2 bits, 4 per byte (layout above)
  uint8_t scales[12];        // 16 6-bit scales: low 4 bits of scale j in byte j%8 (nibble j/8),
                             // high 2 bits in byte 8 + j%4 at bits 2*(j/4)
  uint16_t d;                // fp16 super-block scale
};
static_assert(sizeof(BlockQ3_K) == 110);

// BlockQ3_K::scales <-> its 16 six-bit scales (0..63, stored biased: the scale is sc − 32), as
// the layout above says; a bijection (96 bits each way).
inline void unpack_q3_K_scales(const uint8_t* s, int (&sc)[16]) {
  for (int j = 0; j < 16; ++j)
    sc[j] = ((s[j % 8] >> (4 * (j / 8))) & 0x0f) | ((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4;
}
inline void pack_q3_K_scales(const int (&sc)[16], uint8_t* s) {
  for (int j = 0; j < 12; ++j) s[j] = 0;
  for (int j = 0; j < 16; ++j) {
    s[j % 8] = uint8_t(s[j % 8] | (sc[j] & 0x0f) << (4 * (j / 8)));
    s[8 + j % 4] = uint8_t(s[8 + j % 4] | (sc[j] >> 4) << (2 * (j / 4)));
  }
}

// Q4_K: 8 sub-blocks of 32; x = d*sc*q - dmin*m, q in [0, 15], sc and m 6-bit. 4.5 bits/weight.
// Element e = 64*p + 32*u + l is nibble u (0 low, 1 high) of qs[32*p + l]; its sub-block is e / 32.
struct BlockQ4_K {
  uint16_t d;                    // fp16 super-block scale of the scales
  uint16_t dmin;                 // fp16 super-block scale of the mins
  uint8_t scales[kKScaleBytes];  // 6-bit sc/m of sub-block j: j < 4: sc = s[j] & 63, m = s[j+4] & 63;
                                 // j >= 4: sc = s[j+4] & 15 | (s[j-4] >> 6) << 4,
                                 //         m  = s[j+4] >> 4 | (s[j] >> 6) << 4
  uint8_t qs[kQK_K / 2];         // 4-bit quants (layout above)
};
static_assert(sizeof(BlockQ4_K) == 144);

// Q5_K: as Q4_K with a 5th bit, q in [0, 31]. 5.5 bits per weight.
// Element e = 64*p + 32*u + l: low 4 bits as in Q4_K, 5th bit is bit 2p+u of qh[l].
struct BlockQ5_K {
  uint16_t d;                    // fp16 super-block scale of the scales
  uint16_t dmin;                 // fp16 super-block scale of the mins
  uint8_t scales[kKScaleBytes];  // 6-bit scales and mins, packed as in Q4_K
  uint8_t qh[kQK_K / 8];         // 5th bits (layout above)
  uint8_t qs[kQK_K / 2];         // low 4 bits (layout above)
};
static_assert(sizeof(BlockQ5_K) == 176);

// Q6_K: 16 sub-blocks of 16; x = d*sc*(q - 32), q in [0, 63], sc int8. 6.5625 bits per weight.
// Element e = 128*h + 32*g + l: low 4 bits are nibble g/2 of ql[64*h + 32*(g%2) + l]; high 2 bits
// are bits 2g..2g+1 of qh[32*h + l]. Its sub-block is e / 16.
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];      // low 4 bits (layout above)
  uint8_t qh[kQK_K / 4];      // high 2 bits (layout above)
  int8_t scales[kQK_K / 16];  // signed 8-bit sub-block scales
  uint16_t d;                 // fp16 super-block scale
};
static_assert(sizeof(BlockQ6_K) == 210);

// Q8_K: x = d * q. ggml's intermediate format for activations in K-quant dot products.
struct BlockQ8_K {
  float d;                     // f32 scale
  int8_t qs[kQK_K];            // element j is qs[j]
  int16_t bsums[kQK_K / 16];   // bsums[j] = sum of qs[16*j .. 16*j + 15]
};
static_assert(sizeof(BlockQ8_K) == 292);

// IQ4_NL: x = d * kIQ4NLValues[q], q in [0, 15] (a non-uniform 4-bit grid). 4.5 bits per weight.
// The grid is ggml's kvalues_iq4nl (ggml/src/ggml-common.h).
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};
struct BlockIQ4_NL {
  uint16_t d;           // fp16 scale
  uint8_t qs[kQK / 2];  // grid indices, nibbles as in Q4_0
};
static_assert(sizeof(BlockIQ4_NL) == 18);

// IQ4_XS: 8 sub-blocks of 32; x = d * (ls - 32) * kIQ4NLValues[q], ls 6-bit. 4.25 bits per weight.
// Sub-block j: ls = (scales_l[j/2] >> 4*(j%2)) & 15 | ((scales_h >> 2*j) & 3) << 4; its 32 indices
// are nibbles of qs[16*j .. 16*j + 15] as in Q4_0 (element l < 16 low nibble of byte l, 16 + l high).
struct BlockIQ4_XS {
  uint16_t d;                 // fp16 super-block scale
  uint16_t scales_h;          // high 2 bits of the 8 sub-block scales
  uint8_t scales_l[kQK_K / 64];  // low 4 bits of the 8 sub-block scales, two per byte
  uint8_t qs[kQK_K / 2];      // grid indices
};
static_assert(sizeof(BlockIQ4_XS) == 136);

}  // namespace ork::quant
