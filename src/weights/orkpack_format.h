// The .orkpack file format constants and the source fingerprint (docs/orkpack.md is the spec).
// Little-endian; every field is read with bounds checks (pack_reader.h).
#pragma once

#include <cstdint>
#include <string>

#include "gguf/file.h"
#include "npu/layout.h"

namespace ork::weights {

inline constexpr char kPackMagic[8] = {'O', 'R', 'K', 'P', 'K', '0', '1', '\0'};
inline constexpr uint32_t kPackFormatVersion = 1;
// Packing rules: int8 rows rotated by the block-Hadamard transform of their K inputs
// (quant/hadamard.h, int8_rotation_block) before per-row symmetric quantization (quant/requant.h),
// native B layout with K segments of npu::k_segment_width (npu/layout.h); fp16 RNE, not rotated;
// int4 packs (dtype code 2, weights/packed_int4.h: the input's norm weight folded into the columns,
// rotated, int4 with one scale per row, K chunks of 480, scales n). Bump when any of these changes
// (older packs are reported stale and rebuilt).
// 1: int8 without rotation; 2: rotated, K segments of 8192; 3: K segments of 2048 (int8) / 1024
// (fp16), and int4 packs with scales per group of 32 in K chunks of 32; 4: int4 per row in K chunks
// of 480; 5: int4 weights with the norm weight folded in (quant/norm_fold.h).
inline constexpr uint32_t kPackLayoutVersion = 5;
inline constexpr uint64_t kPackAlign = 4096;      // blob alignment (pages, DMA)
inline constexpr uint64_t kPackScaleAlign = 64;   // scales after their blob
inline constexpr uint64_t kPackHeaderBytes = 128;
inline constexpr uint64_t kPackFooterBytes = 48;
inline constexpr uint64_t kPackMaxName = 1024;
inline constexpr uint64_t kPackDataStart = kPackAlign;  // first blob offset

// Header field offsets.
namespace hdr {
inline constexpr uint64_t kMagic = 0, kVersion = 8, kHeaderBytes = 12, kSourceSize = 16,
                          kMetaHash = 24, kDataHash = 32, kLayout = 40, kDtype = 44, kAlign = 48,
                          kChecksum = 120;
}

// Identifies the GGUF a pack was made from.
struct Fingerprint {
  uint64_t size = 0;       // file bytes
  uint64_t meta_hash = 0;  // hash64 of [0, data_offset)
  uint64_t data_hash = 0;  // hash64 of 16 sampled 4 KiB windows of the data section
  bool operator==(const Fingerprint&) const = default;
};

// Computes the fingerprint of an opened GGUF (reads its header region and 64 KiB of data).
Fingerprint fingerprint_of(const gguf::File& file);

// Dtype ↔ file code (0 = i8, 1 = f16, 2 = i4).
uint32_t dtype_code(npu::Dtype d);
// Throws ork::Error naming `what` for an unknown code.
npu::Dtype dtype_from_code(uint32_t code, const std::string& what);

// Little-endian stores/loads (unaligned-safe).
void put_u32(uint8_t* p, uint32_t v);
void put_u64(uint8_t* p, uint64_t v);
uint32_t get_u32(const uint8_t* p);
uint64_t get_u64(const uint8_t* p);

}  // namespace ork::weights
