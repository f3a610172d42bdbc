// weights::Store with a persistent .orkpack: build, reload, and every kind of bad file repacks —
// a damaged or stale pack never feeds wrong bytes.
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <random>
#include <thread>

#include "npu/layout_int4.h"
#include "weights/convert.h"
#include "weights/hash64.h"
#include "weights/orkpack_format.h"
#include "weights/pack_reader.h"
#include "weights/pack_writer.h"
#include "weights/packed_int4.h"
#include "weights/store.h"
#include "core/error.h"
#include "weights_test_util.h"

namespace ork::weights {
namespace {

using testutil::make_model;
using testutil::read_file;
using testutil::same_bytes;
using testutil::write_file;

class StorePersist : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = make_model(dir_.file("m.gguf"));
    path_ = dir_.file("m.orkpack");
    for (const model::Linear* l : model_->weights().linears()) refs_.push_back(pack_linear(*l, nullptr));
  }
  // Gets every weight once through a Store on `path`; checks each against the reference.
  StoreStats run_once(const std::string& path) {
    Store s(*model_, StoreOptions{path, false});
    const auto& ls = model_->weights().linears();
    for (size_t i = 0; i < ls.size(); ++i) {
      const Packed p = s.get(*ls[i]);
      EXPECT_TRUE(same_bytes(p.view, refs_[i].view())) << "wrong bytes for " << ls[i]->name();
    }
    EXPECT_FALSE(s.building());
    return s.stats();
  }
  size_t n() const { return refs_.size(); }

  ork::testing::TempDir dir_;
  std::unique_ptr<model::Model> model_;
  std::string path_;
  std::vector<PackedHost> refs_;
};

TEST_F(StorePersist, NoPersistPathPacksEveryTime) {
  Store s(*model_, StoreOptions{});
  const auto& l = *model_->weights().linears()[0];
  const Packed a = s.get(l), b = s.get(l);
  EXPECT_NE(a.owner, nullptr);
  EXPECT_TRUE(same_bytes(a.view, refs_[0].view()));
  EXPECT_TRUE(same_bytes(b.view, refs_[0].view()));
  EXPECT_EQ(s.stats().packed, 2u);
  EXPECT_EQ(s.stats().loaded, 0u);
}

TEST_F(StorePersist, FirstRunBuildsSecondRunLoadsEverything) {
  const StoreStats first = run_once(path_);
  EXPECT_EQ(first.packed, n());
  EXPECT_EQ(first.loaded, 0u);
  ASSERT_TRUE(std::filesystem::exists(path_));
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
  const StoreStats second = run_once(path_);
  EXPECT_EQ(second.packed, 0u);
  EXPECT_EQ(second.loaded, n());
}

TEST_F(StorePersist, HitsPointIntoTheMappingAndCycleWithoutRepacking) {
  run_once(path_);
  Store s(*model_, StoreOptions{path_, false});
  EXPECT_TRUE(s.has_pack());
  const auto& ls = model_->weights().linears();
  for (int cycle = 0; cycle < 3; ++cycle) {
    for (size_t i = 0; i < ls.size(); ++i) {
      const Packed p = s.get(*ls[i]);
      EXPECT_EQ(p.owner, nullptr);
      EXPECT_TRUE(same_bytes(p.view, refs_[i].view()));
    }
  }
  EXPECT_EQ(s.stats().loaded, 3 * n());
  EXPECT_EQ(s.stats().packed, 0u);
}

TEST_F(StorePersist, AfterBuildingTheStoreServesFromTheNewFile) {
  Store s(*model_, StoreOptions{path_, false});
  EXPECT_TRUE(s.building());
  const auto& ls = model_->weights().linears();
  for (const model::Linear* l : ls) s.get(*l);
  EXPECT_FALSE(s.building());
  EXPECT_TRUE(s.has_pack());
  const Packed p = s.get(*ls[3]);
  EXPECT_EQ(p.owner, nullptr);
  EXPECT_TRUE(same_bytes(p.view, refs_[3].view()));
  EXPECT_EQ(s.stats().loaded, 1u);
}

TEST_F(StorePersist, FinalizeFillsWeightsNeverServed) {
  {
    Store s(*model_, StoreOptions{path_, false});
    s.get(*model_->weights().linears()[0]);
    EXPECT_FALSE(std::filesystem::exists(path_));
    s.finalize();
    EXPECT_TRUE(std::filesystem::exists(path_));
  }
  EXPECT_EQ(run_once(path_).packed, 0u);
}

TEST_F(StorePersist, UnfinishedRunLeavesNoFile) {
  {
    Store s(*model_, StoreOptions{path_, false});
    s.get(*model_->weights().linears()[0]);
  }
  EXPECT_FALSE(std::filesystem::exists(path_));
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
}

TEST_F(StorePersist, TmpLeftByAKilledRunIsReplaced) {
  write_file(path_ + ".tmp", std::vector<uint8_t>(10000, 0xAB));
  EXPECT_EQ(run_once(path_).packed, n());
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
  EXPECT_EQ(run_once(path_).loaded, n());
}

TEST_F(StorePersist, GarbageFileIsRepackedAndRebuilt) {
  write_file(path_, std::vector<uint8_t>(50000, 0x5A));
  EXPECT_EQ(run_once(path_).packed, n());
  EXPECT_EQ(run_once(path_).loaded, n());
}

TEST_F(StorePersist, WrongModelIsRepackedAndRebuilt) {
  const auto other = make_model(dir_.file("other.gguf"), /*seed=*/9);
  {
    Store s(*other, StoreOptions{path_, false});
    for (const model::Linear* l : other->weights().linears()) s.get(*l);
  }
  ASSERT_TRUE(std::filesystem::exists(path_));
  EXPECT_EQ(run_once(path_).packed, n());  // the other model's pack is not used
  EXPECT_EQ(run_once(path_).loaded, n());
}

TEST_F(StorePersist, F16PackIsRejectedAndRepackedAsI8) {
  ConvertOptions co;
  co.output_path = path_;
  co.dtype = npu::Dtype::kF16;
  co.threads = 1;
  convert(*model_, co);
  EXPECT_EQ(PackReader::open(path_)->header().dtype, npu::Dtype::kF16);
  EXPECT_EQ(run_once(path_).packed, n());
  EXPECT_EQ(PackReader::open(path_)->header().dtype, npu::Dtype::kI8);
  EXPECT_EQ(run_once(path_).loaded, n());
}

// A pack of an older packing layout (1: int8 without the Hadamard rotation; 2: K segments of 8192, no int4 packs;
// 3: int4 with scales per group of 32 in K chunks of 32; 4: int4 without the norm weight folded in)
// holds other bytes for the same weights: it is reported stale and rebuilt, never served.
TEST_F(StorePersist, PackOfAnOlderLayoutIsRebuilt) {
  ASSERT_EQ(kPackLayoutVersion, 5u);
  for (uint32_t old = 1; old < kPackLayoutVersion; ++old) {
    std::filesystem::remove(path_);
    run_once(path_);
    std::vector<uint8_t> b = read_file(path_);
    put_u32(b.data() + hdr::kLayout, old);
    put_u64(b.data() + hdr::kChecksum, hash64(b.data(), hdr::kChecksum));
    write_file(path_, b);
    EXPECT_EQ(PackReader::open(path_)->header().layout_version, old);  // a well-formed file
    EXPECT_EQ(run_once(path_).packed, n()) << "layout " << old;
    EXPECT_EQ(PackReader::open(path_)->header().layout_version, kPackLayoutVersion);
    EXPECT_EQ(run_once(path_).loaded, n());
  }
}

// int4 weights (--npu-wtype i4) persist too: the first run builds an i4 pack, the second serves
// every weight from it with the bytes and scales of pack_linear_i4. A pack of the other type is
// rebuilt, never misread, both ways.
TEST_F(StorePersist, Int4PacksAreBuiltServedAndNeverConfusedWithInt8) {
  const auto& ls = model_->weights().linears();
  std::vector<PackedHost> refs4;
  for (const model::Linear* l : ls) refs4.push_back(pack_linear_i4(*l, nullptr));
  auto run_i4 = [&] {
    StoreOptions o{path_, false};
    o.wtype = npu::Dtype::kI4;
    Store s(*model_, o);
    for (size_t i = 0; i < ls.size(); ++i) {
      const Packed p = s.get(*ls[i]);
      EXPECT_EQ(p.view.dtype, npu::Dtype::kI4);
      EXPECT_TRUE(same_bytes(p.view, refs4[i].view())) << "wrong int4 bytes for " << ls[i]->name();
    }
    EXPECT_FALSE(s.building());
    return s.stats();
  };
  run_once(path_);  // an i8 pack
  EXPECT_EQ(run_i4().packed, n());
  EXPECT_EQ(PackReader::open(path_)->header().dtype, npu::Dtype::kI4);
  const auto reader = PackReader::open(path_);  // the entry lives in the reader
  const PackEntry& e = *reader->find(ls[0]->name());
  EXPECT_EQ(e.blob_size, npu::packed_weight_bytes_i4(ls[0]->n, ls[0]->k));
  EXPECT_EQ(e.scale_size, 4 * uint64_t(ls[0]->n));  // one scale per row
  const StoreStats again = run_i4();
  EXPECT_EQ(again.packed, 0u);
  EXPECT_EQ(again.loaded, n());
  EXPECT_EQ(run_once(path_).packed, n());  // back to i8: the i4 pack is rebuilt
  EXPECT_EQ(PackReader::open(path_)->header().dtype, npu::Dtype::kI8);
}

TEST_F(StorePersist, OneDamagedEntryRepacksOnlyThatWeightAndHealsTheFile) {
  run_once(path_);
  std::vector<uint8_t> b = read_file(path_);
  const PackEntry e = *PackReader::open(path_)->find(model_->weights().linears()[2]->name());
  b[e.blob_offset + 5] ^= 0x01;
  write_file(path_, b);
  const StoreStats s = run_once(path_);
  EXPECT_EQ(s.packed, 1u);
  EXPECT_EQ(s.loaded, n() - 1);
  const StoreStats healed = run_once(path_);
  EXPECT_EQ(healed.packed, 0u);
  EXPECT_EQ(healed.loaded, n());
}

// A pack whose checksums hold over NaN/Inf scales (written wrong, not damaged in transit) is damaged
// all the same: that weight is repacked, the run goes on, and the file is healed.
TEST_F(StorePersist, NonFiniteScalesUnderValidChecksumsAreRepacked) {
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    std::filesystem::remove(path_);
    {
      PackWriter w(path_, fingerprint_of(model_->file()), npu::Dtype::kI8);
      const auto& ls = model_->weights().linears();
      std::vector<float> scales(refs_[2].scales);
      scales[3] = bad;
      for (size_t i = 0; i < ls.size(); ++i) {
        PackedView v = refs_[i].view();
        if (i == 2) v.scales = scales.data();
        ASSERT_TRUE(w.append(ls[i]->name(), v));
      }
      w.finalize();
    }
    const auto reader = PackReader::open(path_);
    ASSERT_TRUE(reader->verify(*reader->find(model_->weights().linears()[2]->name())));  // checksums hold
    const StoreStats s = run_once(path_);  // checks every served weight against the reference
    EXPECT_EQ(s.packed, 1u) << bad;
    EXPECT_EQ(s.loaded, n() - 1) << bad;
    EXPECT_EQ(run_once(path_).loaded, n()) << bad;
  }
}

TEST_F(StorePersist, RandomFlipsAndTruncationsNeverServeWrongBytes) {
  run_once(path_);
  const std::vector<uint8_t> good = read_file(path_);
  std::mt19937_64 rng(11);
  const std::string p = dir_.file("damaged.orkpack");
  for (int t = 0; t < 40; ++t) {
    std::vector<uint8_t> b = good;
    if (t % 2 == 0) {
      b[rng() % b.size()] ^= uint8_t(1u << (rng() % 8));
    } else {
      b.resize(rng() % b.size());
    }
    write_file(p, b);
    const StoreStats s = run_once(p);  // checks every weight's bytes
    EXPECT_EQ(s.packed + s.loaded, n());
    if (t % 2 == 1) {
      EXPECT_EQ(s.packed, n()) << "a truncated pack served weights";
    }
    std::filesystem::remove(p);
  }
}

TEST_F(StorePersist, ConcurrentGetFromTwoThreads) {
  // Building: two threads get every weight (in different orders) while the pack is written.
  for (int pass = 0; pass < 2; ++pass) {
    Store s(*model_, StoreOptions{path_, false});
    const auto& ls = model_->weights().linears();
    auto worker = [&](bool reverse) {
      for (int rep = 0; rep < 3; ++rep) {
        for (size_t j = 0; j < ls.size(); ++j) {
          const size_t i = reverse ? ls.size() - 1 - j : j;
          const Packed p = s.get(*ls[i]);
          EXPECT_TRUE(same_bytes(p.view, refs_[i].view()));
        }
      }
    };
    std::thread a(worker, false), b(worker, true);
    a.join();
    b.join();
    const StoreStats st = s.stats();
    EXPECT_EQ(st.packed + st.loaded, 6 * n());
    if (pass == 1) {
      EXPECT_EQ(st.packed, 0u);
    }
    EXPECT_TRUE(std::filesystem::exists(path_));
  }
}

TEST_F(StorePersist, EvictSrcKeepsResultsIdentical) {
  Store s(*model_, StoreOptions{"", true});
  const auto& ls = model_->weights().linears();
  for (size_t i = 0; i < ls.size(); ++i) EXPECT_TRUE(same_bytes(s.get(*ls[i]).view, refs_[i].view()));
}

TEST_F(StorePersist, ForeignLinearIsAnError) {
  const auto other = make_model(dir_.file("other.gguf"), /*seed=*/3);
  Store s(*model_, StoreOptions{});
  EXPECT_THROW(s.get(*other->weights().linears()[0]), Error);
}

}  // namespace
}  // namespace ork::weights
