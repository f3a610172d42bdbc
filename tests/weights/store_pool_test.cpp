// weights::Store with a thread pool: the row groups pack in parallel and the bytes and scales are
// those of the single-thread pack, for the i8 and the i4 device forms.
#include <gtest/gtest.h>

#include <cstring>

#include "core/thread_pool.h"
#include "weights/store.h"
#include "weights_test_util.h"

namespace ork::weights {
namespace {

bool identical(const PackedView& a, const PackedView& b) {
  if (a.n != b.n || a.k != b.k || a.dtype != b.dtype || a.scale_count() != b.scale_count()) return false;
  if (std::memcmp(a.bytes, b.bytes, packed_bytes(a.n, a.k, a.dtype)) != 0) return false;
  return a.scales == nullptr || std::memcmp(a.scales, b.scales, size_t(a.scale_count()) * sizeof(float)) == 0;
}

TEST(StoreThreadPool, PackIsByteIdenticalToOneThread) {
  ork::testing::TempDir dir;
  const auto model = testutil::make_model(dir.file("m.gguf"));
  ThreadPool pool(3);  // more threads than this machine may have cores: chunks interleave
  for (const npu::Dtype wtype : {npu::Dtype::kI8, npu::Dtype::kI4}) {
    StoreOptions o;
    o.wtype = wtype;
    Store one(*model, o);
    Store many(*model, o, &pool);
    for (const model::Linear* l : model->weights().linears()) {
      const Packed a = one.get(*l), b = many.get(*l);
      EXPECT_TRUE(identical(a.view, b.view)) << npu::dtype_name(wtype) << " " << l->name();
    }
    EXPECT_EQ(many.stats().packed, model->weights().linears().size());
  }
}

}  // namespace
}  // namespace ork::weights
