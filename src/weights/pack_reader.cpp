#include "weights/pack_reader.h"

#include <algorithm>
#include <cstring>

#include "core/checked.h"
#include "core/error.h"
#include "core/quote.h"
#include "weights/hash64.h"

namespace ork::weights {

std::unique_ptr<PackReader> PackReader::open(const std::string& path) {
  std::unique_ptr<PackReader> r(new PackReader(MappedFile(path)));
  r->parse();
  return r;
}

void PackReader::parse() {
  const std::string& p = map_.path();
  const uint8_t* d = map_.data();
  const uint64_t size = map_.size();
  ORK_CHECK(size >= kPackDataStart + kPackFooterBytes, p, ": not an .orkpack: ", size,
            " bytes is shorter than the smallest pack (", kPackDataStart + kPackFooterBytes, ")");

  // Header.
  ORK_CHECK(std::memcmp(d + hdr::kMagic, kPackMagic, 8) == 0, p, ": not an .orkpack (bad magic)");
  header_.format_version = get_u32(d + hdr::kVersion);
  ORK_CHECK(header_.format_version == kPackFormatVersion, p, ": .orkpack format version ",
            header_.format_version, "; this ork reads version ", kPackFormatVersion);
  ORK_CHECK(get_u32(d + hdr::kHeaderBytes) == kPackHeaderBytes, p, ": header_bytes ",
            get_u32(d + hdr::kHeaderBytes), " is not ", kPackHeaderBytes);
  ORK_CHECK(hash64(d, hdr::kChecksum) == get_u64(d + hdr::kChecksum), p,
            ": header checksum mismatch (damaged header)");
  header_.source.size = get_u64(d + hdr::kSourceSize);
  header_.source.meta_hash = get_u64(d + hdr::kMetaHash);
  header_.source.data_hash = get_u64(d + hdr::kDataHash);
  header_.layout_version = get_u32(d + hdr::kLayout);
  header_.dtype = dtype_from_code(get_u32(d + hdr::kDtype), p + ": header dtype");
  ORK_CHECK(get_u32(d + hdr::kAlign) == kPackAlign, p, ": alignment ", get_u32(d + hdr::kAlign),
            " is not ", kPackAlign);

  // Footer.
  const uint8_t* f = d + size - kPackFooterBytes;
  ORK_CHECK(std::memcmp(f + 40, kPackMagic, 8) == 0, p,
            ": no .orkpack footer (the file is truncated or was never finished)");
  ORK_CHECK(hash64(f, 32) == get_u64(f + 32), p, ": footer checksum mismatch (damaged footer)");
  const uint64_t index_offset = get_u64(f);
  const uint64_t index_bytes = get_u64(f + 8);
  const uint64_t count = get_u64(f + 16);
  const uint64_t index_end = size - kPackFooterBytes;
  ORK_CHECK(index_offset >= kPackDataStart && index_offset <= index_end, p, ": index_offset ",
            index_offset, " is outside [", kPackDataStart, ", ", index_end, "]");
  ORK_CHECK(index_bytes == index_end - index_offset, p, ": index_bytes ", index_bytes,
            " does not reach the footer (expected ", index_end - index_offset, ")");
  constexpr uint64_t kMinRecord = 4 + 8 + 8 + 8 + 4 + 4 + 5 * 8;
  ORK_CHECK(count <= index_bytes / kMinRecord, p, ": entry count ", count, " cannot fit in ",
            index_bytes, " index bytes");
  ORK_CHECK(hash64(d + index_offset, index_bytes) == get_u64(f + 24), p,
            ": index checksum mismatch (damaged index)");

  // Index records.
  entries_.reserve(size_t(count));
  uint64_t pos = index_offset;
  auto need = [&](uint64_t bytes, const char* field) {
    ORK_CHECK(bytes <= index_end - pos, p, ": index record ", entries_.size(), ": ", field,
              " runs past the index end");
  };
  for (uint64_t i = 0; i < count; ++i) {
    need(4, "name_len");
    const uint64_t name_len = get_u32(d + pos);
    pos += 4;
    ORK_CHECK(name_len >= 1 && name_len <= kPackMaxName, p, ": index record ", i, ": name_len ",
              name_len, " is outside [1, ", kPackMaxName, "]");
    const uint64_t padded = align_up(4 + name_len, 8) - 4;
    need(padded, "name");
    PackEntry e;
    e.name.assign(reinterpret_cast<const char*>(d + pos), size_t(name_len));
    pos += padded;
    need(64, "fields");
    const uint64_t k = get_u64(d + pos), n = get_u64(d + pos + 8);
    const std::string what = p + ": entry '" + e.name + "'";
    ORK_CHECK(k >= 1 && k <= uint64_t(npu::kMaxDim) && n >= 1 && n <= uint64_t(npu::kMaxDim), what,
              ": shape ", n, "x", k, " is out of range");
    e.k = int64_t(k);
    e.n = int64_t(n);
    e.dtype = dtype_from_code(get_u32(d + pos + 16), what);
    ORK_CHECK(e.dtype == header_.dtype, what, ": dtype ", npu::dtype_name(e.dtype),
              " differs from the pack's ", npu::dtype_name(header_.dtype));
    e.blob_offset = get_u64(d + pos + 24);
    e.blob_size = get_u64(d + pos + 32);
    e.scale_offset = get_u64(d + pos + 40);
    e.scale_size = get_u64(d + pos + 48);
    e.checksum = get_u64(d + pos + 56);
    pos += 64;

    ORK_CHECK(e.blob_offset >= kPackDataStart && e.blob_offset % kPackAlign == 0, what,
              ": blob_offset ", e.blob_offset, " is not a multiple of ", kPackAlign, " >= ",
              kPackDataStart);
    const uint64_t want_blob = packed_bytes(e.n, e.k, e.dtype);
    ORK_CHECK(e.blob_size == want_blob, what, ": blob_size ", e.blob_size, " is not ", want_blob,
              " (", n, "x", k, " ", npu::dtype_name(e.dtype), ")");
    ORK_CHECK(e.blob_offset <= index_offset && e.blob_size <= index_offset - e.blob_offset, what, ": blob [", e.blob_offset, ", +",
              e.blob_size, ") runs past the entry data (", index_offset, ")");
    const uint64_t want_scales = 4 * uint64_t(PackedView{nullptr, nullptr, e.n, e.k, e.dtype}.scale_count());
    if (want_scales > 0) {
      ORK_CHECK(e.scale_size == want_scales, what, ": scale_size ", e.scale_size, " is not ", want_scales);
      ORK_CHECK(e.scale_offset >= kPackDataStart && e.scale_offset % 4 == 0 &&
                    e.scale_offset <= index_offset && e.scale_size <= index_offset - e.scale_offset,
                what, ": scales [", e.scale_offset, ", +", e.scale_size,
                ") are outside the entry data");
    } else {
      ORK_CHECK(e.scale_offset == 0 && e.scale_size == 0, what, ": f16 entry has scales");
    }
    ORK_CHECK(index_.find(e.name) == index_.end(), p, ": duplicate entry ", quote(e.name));
    entries_.push_back(std::move(e));
    index_.emplace(entries_.back().name, entries_.size() - 1);
  }
  ORK_CHECK(pos == index_end, p, ": ", index_end - pos, " stray bytes after the last index record");
  // Rebuild the map: entries_ no longer reallocates, but string_views into moved strings may have
  // been invalidated by reallocation during the loop (small-string optimization).
  index_.clear();
  for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].name, i);

  // No two entries' byte ranges overlap.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const PackEntry& e : entries_) {
    ranges.emplace_back(e.blob_offset, e.blob_offset + e.blob_size);
    if (e.scale_size > 0) ranges.emplace_back(e.scale_offset, e.scale_offset + e.scale_size);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    ORK_CHECK(ranges[i].first >= ranges[i - 1].second, p, ": entry data overlaps at offset ",
              ranges[i].first);
  }
}

const PackEntry* PackReader::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

PackedView PackReader::view(const PackEntry& e) const {
  PackedView v;
  v.bytes = map_.data() + e.blob_offset;
  v.scales = e.scale_size > 0 ? reinterpret_cast<const float*>(map_.data() + e.scale_offset) : nullptr;
  v.n = e.n;
  v.k = e.k;
  v.dtype = e.dtype;
  return v;
}

uint64_t entry_checksum(const PackedView& w) {
  const uint64_t h = hash64(w.bytes, size_t(packed_bytes(w.n, w.k, w.dtype)), 0);
  const size_t scale_bytes = w.scales != nullptr ? size_t(w.scale_count()) * 4 : 0;
  return hash64(w.scales, scale_bytes, h);
}

bool PackReader::verify(const PackEntry& e) const { return entry_checksum(view(e)) == e.checksum; }

void check_pack_source(const PackReader& pack, const Fingerprint& source, npu::Dtype dtype) {
  const PackHeader& h = pack.header();
  ORK_CHECK(h.source.size == source.size && h.source.meta_hash == source.meta_hash,
            pack.path(), ": made from another model (source size ", h.source.size, ", this model ",
            source.size, ", or its metadata differs)");
  ORK_CHECK(h.source.data_hash == source.data_hash, pack.path(),
            ": made from another model (its tensor data differs)");
  ORK_CHECK(h.layout_version == kPackLayoutVersion, pack.path(), ": packing layout version ",
            h.layout_version, "; this ork packs version ", kPackLayoutVersion);
  ORK_CHECK(h.dtype == dtype, pack.path(), ": holds ", npu::dtype_name(h.dtype),
            " weights, ", npu::dtype_name(dtype), " are needed");
}

}  // namespace ork::weights
