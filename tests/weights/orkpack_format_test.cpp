// The .orkpack file format: round trip, and every kind of damage is detected on open or verify.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>

#include "core/error.h"
#include "weights/hash64.h"
#include "weights/orkpack_format.h"
#include "weights/pack_grouped.h"
#include "weights/pack_reader.h"
#include "weights/pack_writer.h"
#include "weights_test_util.h"

namespace ork::weights {
namespace {

using testutil::make_model;
using testutil::read_file;
using testutil::same_bytes;
using testutil::write_file;

class OrkpackFormat : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = make_model(dir_.file("m.gguf"));
    path_ = dir_.file("m.orkpack");
    PackWriter w(path_, fingerprint_of(model_->file()), npu::Dtype::kI8);
    for (const model::Linear* l : model_->weights().linears()) {
      refs_.push_back(pack_linear(*l, nullptr));
      ASSERT_TRUE(w.append(l->name(), refs_.back().view()));
    }
    EXPECT_FALSE(w.append(model_->weights().linears()[0]->name(), refs_[0].view()));  // duplicate
    w.finalize();
    bytes_ = read_file(path_);
  }

  // Opens `bytes` as a pack; returns "" and checks every entry when it is accepted and verified
  // entries are byte-identical, else the error text. Never returns wrong bytes silently: a verified
  // entry that differs from the reference fails the test.
  std::string open_and_check(const std::vector<uint8_t>& bytes, int* verified_ok = nullptr) {
    const std::string p = dir_.file("damaged.orkpack");
    write_file(p, bytes);
    std::unique_ptr<PackReader> r;
    try {
      r = PackReader::open(p);
    } catch (const Error& e) {
      return e.what();
    }
    int ok = 0;
    const auto& ls = model_->weights().linears();
    for (size_t i = 0; i < ls.size(); ++i) {
      const PackEntry* e = r->find(ls[i]->name());
      if (e == nullptr || !r->verify(*e)) continue;
      EXPECT_TRUE(same_bytes(r->view(*e), refs_[i].view())) << "wrong bytes served for "
                                                            << ls[i]->name();
      ++ok;
    }
    if (verified_ok) *verified_ok = ok;
    return "";
  }

  ork::testing::TempDir dir_;
  std::unique_ptr<model::Model> model_;
  std::string path_;
  std::vector<PackedHost> refs_;
  std::vector<uint8_t> bytes_;
};

TEST_F(OrkpackFormat, RoundTripIsByteIdentical) {
  const auto r = PackReader::open(path_);
  EXPECT_EQ(r->header().format_version, kPackFormatVersion);
  EXPECT_EQ(r->header().source, fingerprint_of(model_->file()));
  EXPECT_NO_THROW(check_pack_source(*r, fingerprint_of(model_->file()), npu::Dtype::kI8));
  const auto& ls = model_->weights().linears();
  ASSERT_EQ(r->entries().size(), ls.size());
  for (size_t i = 0; i < ls.size(); ++i) {
    const PackEntry* e = r->find(ls[i]->name());
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->blob_offset % kPackAlign, 0u);
    EXPECT_EQ(e->k, ls[i]->k);
    EXPECT_EQ(e->n, ls[i]->n);
    EXPECT_TRUE(r->verify(*e));
    EXPECT_TRUE(same_bytes(r->view(*e), refs_[i].view())) << ls[i]->name();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r->view(*e).bytes) % kPackAlign, 0u);
  }
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
}

TEST_F(OrkpackFormat, F16RoundTrip) {
  const std::string p = dir_.file("f16.orkpack");
  std::vector<PackedHost> hs;
  {
    PackWriter w(p, fingerprint_of(model_->file()), npu::Dtype::kF16);
    for (const model::Linear* l : model_->weights().linears()) {
      hs.push_back(pack_linear_grouped(*l, npu::Dtype::kF16, nullptr));
      EXPECT_THROW(w.append(l->name(), refs_[0].view()), Error);  // i8 into an f16 pack
      ASSERT_TRUE(w.append(l->name(), hs.back().view()));
    }
    w.finalize();
  }
  const auto r = PackReader::open(p);
  EXPECT_EQ(r->header().dtype, npu::Dtype::kF16);
  const auto& ls = model_->weights().linears();
  for (size_t i = 0; i < ls.size(); ++i) {
    const PackEntry* e = r->find(ls[i]->name());
    ASSERT_NE(e, nullptr);
    EXPECT_TRUE(r->verify(*e));
    EXPECT_EQ(r->view(*e).scales, nullptr);
    EXPECT_TRUE(same_bytes(r->view(*e), hs[i].view()));
  }
  EXPECT_THROW(check_pack_source(*r, fingerprint_of(model_->file()), npu::Dtype::kI8), Error);
}

TEST_F(OrkpackFormat, EveryTruncationIsDetected) {
  // Every length from 0 to the full size minus one, in steps that hit every region, plus the
  // last 100 lengths one by one.
  std::vector<uint64_t> lengths;
  for (uint64_t n = 0; n < bytes_.size(); n += 997) lengths.push_back(n);
  for (uint64_t n = bytes_.size() > 100 ? bytes_.size() - 100 : 0; n < bytes_.size(); ++n) {
    lengths.push_back(n);
  }
  for (uint64_t n : lengths) {
    std::vector<uint8_t> b(bytes_.begin(), bytes_.begin() + int64_t(n));
    EXPECT_NE(open_and_check(b), "") << "truncated to " << n << " bytes was accepted";
  }
}

TEST_F(OrkpackFormat, RandomByteFlipsNeverServeWrongBytes) {
  std::mt19937_64 rng(7);
  const auto r = PackReader::open(path_);
  int detected_open = 0, detected_verify = 0, harmless = 0;
  for (int t = 0; t < 300; ++t) {
    std::vector<uint8_t> b = bytes_;
    const uint64_t at = rng() % b.size();
    b[at] ^= uint8_t(1u << (rng() % 8));
    int ok = 0;
    const std::string err = open_and_check(b, &ok);
    if (!err.empty()) {
      ++detected_open;
    } else if (ok < int(refs_.size())) {
      ++detected_verify;
    } else {
      ++harmless;  // in padding between blobs: never read
    }
  }
  EXPECT_GT(detected_open, 0);
  EXPECT_GT(detected_verify, 0);
  EXPECT_EQ(detected_open + detected_verify + harmless, 300);
}

TEST_F(OrkpackFormat, FlipsInTheHeaderIndexAndFooterAreRejected) {
  const uint64_t size = bytes_.size();
  const uint64_t index_offset = get_u64(bytes_.data() + size - kPackFooterBytes);
  std::vector<uint64_t> offsets;
  for (uint64_t o = 0; o < kPackHeaderBytes; ++o) offsets.push_back(o);
  for (uint64_t o = index_offset; o < size - kPackFooterBytes; o += 5) offsets.push_back(o);
  for (uint64_t o = size - kPackFooterBytes; o < size; ++o) offsets.push_back(o);
  for (uint64_t o : offsets) {
    std::vector<uint8_t> b = bytes_;
    b[o] ^= 0x10;
    EXPECT_NE(open_and_check(b), "") << "flip at " << o;
  }
}

// Rewrites a footer field and its checksum, as a buggy or malicious writer would.
void set_footer_field(std::vector<uint8_t>& b, uint64_t field_off, uint64_t v) {
  uint8_t* f = b.data() + b.size() - kPackFooterBytes;
  put_u64(f + field_off, v);
  put_u64(f + 32, hash64(f, 32));
}

TEST_F(OrkpackFormat, IndexPointingOutsideTheFileIsRejected) {
  for (uint64_t v : {uint64_t(0), uint64_t(bytes_.size()), uint64_t(1) << 62, ~uint64_t(0)}) {
    std::vector<uint8_t> b = bytes_;
    set_footer_field(b, 0, v);
    EXPECT_NE(open_and_check(b), "");
  }
  std::vector<uint8_t> b = bytes_;
  set_footer_field(b, 16, ~uint64_t(0));  // count
  EXPECT_NE(open_and_check(b), "");
}

TEST_F(OrkpackFormat, BlobOffsetOutsideTheDataIsRejectedEvenWithAValidChecksum) {
  std::vector<uint8_t> b = bytes_;
  uint8_t* f = b.data() + b.size() - kPackFooterBytes;
  const uint64_t index_offset = get_u64(f), index_bytes = get_u64(f + 8);
  uint8_t* rec = b.data() + index_offset;
  const uint64_t name_len = get_u32(rec);
  uint8_t* fields = rec + 4 + (((4 + name_len + 7) / 8) * 8 - 4);
  put_u64(fields + 24, uint64_t(1) << 40);  // blob_offset far outside
  put_u64(f + 24, hash64(b.data() + index_offset, index_bytes));
  put_u64(f + 32, hash64(f, 32));
  const std::string err = open_and_check(b);
  EXPECT_NE(err.find("blob"), std::string::npos) << err;
}

TEST_F(OrkpackFormat, OlderFormatVersionIsRejectedWithAClearMessage) {
  std::vector<uint8_t> b = bytes_;
  put_u32(b.data() + hdr::kVersion, 0);
  put_u64(b.data() + hdr::kChecksum, hash64(b.data(), hdr::kChecksum));
  const std::string err = open_and_check(b);
  EXPECT_NE(err.find("format version 0"), std::string::npos) << err;
}

TEST_F(OrkpackFormat, WrongModelIsRejected) {
  const auto other = make_model(dir_.file("other.gguf"), /*seed=*/2);
  const auto r = PackReader::open(path_);
  try {
    check_pack_source(*r, fingerprint_of(other->file()), npu::Dtype::kI8);
    FAIL() << "a pack of another model was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("another model"), std::string::npos) << e.what();
  }
}

TEST_F(OrkpackFormat, UnfinalizedWriterLeavesNothing) {
  const std::string p = dir_.file("x.orkpack");
  {
    PackWriter w(p, fingerprint_of(model_->file()), npu::Dtype::kI8);
    w.append(model_->weights().linears()[0]->name(), refs_[0].view());
    EXPECT_TRUE(std::filesystem::exists(p + ".tmp"));
    EXPECT_FALSE(std::filesystem::exists(p));
  }
  EXPECT_FALSE(std::filesystem::exists(p + ".tmp"));
  EXPECT_FALSE(std::filesystem::exists(p));
}

TEST_F(OrkpackFormat, LockedTmpIsRefused) {
  const std::string p = dir_.file("y.orkpack");
  PackWriter a(p, fingerprint_of(model_->file()), npu::Dtype::kI8);
  try {
    PackWriter b(p, fingerprint_of(model_->file()), npu::Dtype::kI8);
    FAIL() << "a second writer got the same .tmp";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
  }
}

TEST(OrkpackDtypeCodes, EachTypeHasItsCodeAndUnknownCodesAreErrors) {
  for (npu::Dtype d : {npu::Dtype::kI8, npu::Dtype::kF16, npu::Dtype::kI4})
    EXPECT_EQ(dtype_from_code(dtype_code(d), "t"), d);
  EXPECT_EQ(dtype_code(npu::Dtype::kI4), 2u);
  EXPECT_THROW(dtype_from_code(3, "t"), Error);
}

}  // namespace
}  // namespace ork::weights
