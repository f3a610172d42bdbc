#include "gguf/file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "gguf/test_util.h"
#include "gguf/writer.h"
#include "quant/types.h"

namespace ork::gguf {
namespace {

using testing::Bytes;
using testing::TempDir;

// Every supported tensor type id (the quant layer's table decides).
std::vector<quant::Type> supported_types() {
  std::vector<quant::Type> out;
  for (uint32_t id = 0; id < 64; ++id) {
    if (quant::is_supported(id)) out.push_back(quant::Type(id));
  }
  return out;
}

// Deterministic bytes for tensor data.
std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = uint8_t(x >> 24);
  }
  return v;
}

Value make(ValueType t) {
  Value v;
  v.type = t;
  return v;
}

TEST(GgufFile, RoundTripsEveryValueType) {
  TempDir dir;
  Writer w;
  w.add_uint8("u8", 255);
  w.add_int8("i8", -128);
  w.add_uint16("u16", 65535);
  w.add_int16("i16", -32768);
  w.add_uint32("u32", 4294967295u);
  w.add_int32("i32", std::numeric_limits<int32_t>::min());
  w.add_uint64("u64", std::numeric_limits<uint64_t>::max());
  w.add_int64("i64", std::numeric_limits<int64_t>::min());
  w.add_float32("f32", 1.5f);
  w.add_float64("f64", -2.25e300);
  w.add_bool("yes", true);
  w.add_bool("no", false);
  w.add_string("s", "h\xC3\xA9llo \xE2\x96\x81 world");
  w.add_string("empty", "");
  w.add_string_array("sa", {"a", "", "ccc"});
  w.add_float32_array("fa", {0.5f, -1.0f, 3.25f});
  w.add_int32_array("ia", {-1, 0, 7});
  w.add_uint32_array("ua", {1, 2, 4294967295u});
  w.add_int32_array("empty_array", {});
  // Nested: an array of two arrays of strings, and an array of arrays of arrays of u8.
  std::vector<Value> inners;
  for (int k = 0; k < 2; ++k) {
    std::vector<Value> strs;
    for (int j = 0; j <= k; ++j) {
      Value s = make(ValueType::STRING);
      s.str = k == 0 ? "x" : "yz";
      strs.push_back(s);
    }
    inners.push_back(Value::array_of(ValueType::STRING, strs));
  }
  w.add_value("nested", Value::array_of(ValueType::ARRAY, inners));
  Value b = make(ValueType::UINT8);
  b.u = 9;
  const Value leaf = Value::array_of(ValueType::UINT8, {b, b});
  const Value mid = Value::array_of(ValueType::ARRAY, {leaf});
  w.add_value("deep", Value::array_of(ValueType::ARRAY, {mid, mid}));
  Value e = make(ValueType::INT64);
  e.i = -5;
  w.add_value("i64s", Value::array_of(ValueType::INT64, {e}));

  const std::string path = dir.file("v.gguf");
  w.write(path);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  const File f = File::open(path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_TRUE(f.tensors().empty());

  ASSERT_EQ(f.metadata().size(), 22u);
  // Insertion order is kept.
  EXPECT_EQ(f.metadata()[0].key, "u8");
  EXPECT_EQ(f.metadata()[21].key, "i64s");

  EXPECT_EQ(f.find("u8")->type, ValueType::UINT8);
  EXPECT_EQ(f.get_uint("u8"), 255u);
  EXPECT_EQ(f.get_int("i8"), -128);
  EXPECT_EQ(f.find("i8")->type, ValueType::INT8);
  EXPECT_EQ(f.get_uint("u16"), 65535u);
  EXPECT_EQ(f.get_int("i16"), -32768);
  EXPECT_EQ(f.get_uint("u32"), 4294967295u);
  EXPECT_EQ(f.get_int("i32"), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(f.get_uint("u64"), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(f.get_int("i64"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(f.find("f32")->type, ValueType::FLOAT32);
  EXPECT_EQ(f.get_float("f32"), 1.5);
  EXPECT_EQ(f.get_float("f64"), -2.25e300);
  EXPECT_TRUE(f.get_bool("yes"));
  EXPECT_FALSE(f.get_bool("no"));
  EXPECT_EQ(f.get_string("s"), "h\xC3\xA9llo \xE2\x96\x81 world");
  EXPECT_EQ(f.get_string("empty"), "");

  const auto& sa = f.find("sa")->as_array("sa", ValueType::STRING);
  ASSERT_EQ(sa.size(), 3u);
  EXPECT_EQ(sa[0].str, "a");
  EXPECT_EQ(sa[1].str, "");
  EXPECT_EQ(sa[2].str, "ccc");
  const auto& fa = f.find("fa")->as_array("fa", ValueType::FLOAT32);
  ASSERT_EQ(fa.size(), 3u);
  EXPECT_EQ(fa[2].f, 3.25);
  const auto& ia = f.find("ia")->as_array("ia", ValueType::INT32);
  ASSERT_EQ(ia.size(), 3u);
  EXPECT_EQ(ia[0].i, -1);
  const auto& ua = f.find("ua")->as_array("ua", ValueType::UINT32);
  EXPECT_EQ(ua[2].u, 4294967295u);
  EXPECT_TRUE(f.find("empty_array")->as_array("empty_array", ValueType::INT32).empty());

  const auto& n = f.find("nested")->as_array("nested", ValueType::ARRAY);
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n[0].as_array("n0", ValueType::STRING).size(), 1u);
  ASSERT_EQ(n[1].as_array("n1", ValueType::STRING).size(), 2u);
  EXPECT_EQ(n[1].elements()[1].str, "yz");
  const auto& d = f.find("deep")->as_array("deep", ValueType::ARRAY);
  ASSERT_EQ(d.size(), 2u);
  const auto& d1 = d[1].as_array("d1", ValueType::ARRAY);
  ASSERT_EQ(d1.size(), 1u);
  const auto& d2 = d1[0].as_array("d2", ValueType::UINT8);
  ASSERT_EQ(d2.size(), 2u);
  EXPECT_EQ(d2[1].u, 9u);
  EXPECT_EQ(f.find("i64s")->as_array("i64s", ValueType::INT64)[0].i, -5);

  // to_bytes() and write() produce the same bytes.
  EXPECT_EQ(w.to_bytes(), testing::read_bytes(path));
}

TEST(GgufFile, GettersCheckTypesAndName) {
  TempDir dir;
  Writer w;
  w.add_string("name", "m");
  w.add_int32("neg", -3);
  w.add_uint32("n", 7);
  const std::string path = dir.file("g.gguf");
  w.write(path);
  const File f = File::open(path);

  EXPECT_EQ(f.get_string_or("absent", "def"), "def");
  EXPECT_EQ(f.get_uint_or("absent", 11), 11u);
  EXPECT_EQ(f.get_float_or("absent", 0.25), 0.25);
  EXPECT_TRUE(f.get_bool_or("absent", true));
  EXPECT_EQ(f.get_uint_or("n", 11), 7u);
  EXPECT_EQ(f.get_float("n"), 7.0);
  EXPECT_EQ(f.find("absent"), nullptr);

  auto expect_error = [&](auto&& fn, const std::string& needle) {
    try {
      fn();
      ADD_FAILURE() << "no error; wanted " << needle;
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(path, 0), 0u) << msg;
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    }
  };
  expect_error([&] { f.get_string("absent"); }, "missing metadata key 'absent'");
  expect_error([&] { f.get_uint("name"); }, "'name'");
  expect_error([&] { f.get_uint("neg"); }, "'neg'");
  expect_error([&] { f.get_bool("n"); }, "'n'");
  expect_error([&] { f.get_string_or("n", ""); }, "'n'");
  expect_error([&] { f.tensor("nope"); }, "'nope'");
}

TEST(GgufFile, RoundTripsEverySupportedTensorType) {
  const std::vector<quant::Type> types = supported_types();
  ASSERT_FALSE(types.empty());
  TempDir dir;
  Writer w;
  struct Expect {
    std::string name;
    quant::Type type;
    std::vector<uint64_t> dims;
    std::vector<uint8_t> data;
  };
  std::vector<Expect> expect;
  uint32_t seed = 0;
  for (quant::Type t : types) {
    const auto& tr = quant::traits(t);
    const uint64_t k = uint64_t(tr.block_size) * 2;
    const std::vector<std::vector<uint64_t>> shapes = {
        {k}, {k, 3}, {k, 2, 3}, {uint64_t(tr.block_size), 1, 2, 2}};
    for (size_t s = 0; s < shapes.size(); ++s) {
      uint64_t rows = 1;
      for (size_t d = 1; d < shapes[s].size(); ++d) rows *= shapes[s][d];
      const int64_t rb = quant::row_bytes(t, int64_t(shapes[s][0]));
      Expect e{std::string(tr.name) + ".s" + std::to_string(s), t, shapes[s],
               pattern(size_t(rb) * rows, ++seed)};
      w.add_tensor(e.name, e.type, e.dims, e.data.data(), e.data.size());
      expect.push_back(std::move(e));
    }
  }
  const std::string path = dir.file("t.gguf");
  w.write(path);
  const File f = File::open(path);
  ASSERT_EQ(f.tensors().size(), expect.size());
  for (size_t i = 0; i < expect.size(); ++i) {
    const TensorInfo& t = f.tensors()[i];
    SCOPED_TRACE(expect[i].name);
    EXPECT_EQ(t.name, expect[i].name);  // insertion order
    EXPECT_EQ(&t, f.find_tensor(expect[i].name));
    EXPECT_EQ(t.type, expect[i].type);
    EXPECT_EQ(t.dims, expect[i].dims);
    uint64_t n = 1;
    for (uint64_t d : expect[i].dims) n *= d;
    EXPECT_EQ(t.n_elements, n);
    EXPECT_EQ(t.row_length(), expect[i].dims[0]);
    EXPECT_EQ(t.rows(), n / expect[i].dims[0]);
    EXPECT_EQ(t.n_bytes, expect[i].data.size());
    EXPECT_EQ(t.offset % f.alignment(), 0u);
    EXPECT_GE(t.offset, f.data_offset());
    EXPECT_EQ(t.data, f.mapping().data() + t.offset);
    EXPECT_EQ(std::vector<uint8_t>(t.data, t.data + t.n_bytes), expect[i].data);
  }
  EXPECT_EQ(f.data_offset() % 32, 0u);
}

TEST(GgufFile, CustomAlignmentIsWrittenAndHonoured) {
  TempDir dir;
  Writer w;
  w.add_string("general.architecture", "llama");
  w.set_alignment(64);
  const std::vector<float> a(3, 1.0f), b(5, 2.0f);
  w.add_tensor("a", quant::Type::F32, {3}, a.data(), a.size() * 4);
  w.add_tensor("b", quant::Type::F32, {5}, b.data(), b.size() * 4);
  const std::string path = dir.file("a.gguf");
  w.write(path);
  const File f = File::open(path);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.get_uint("general.alignment"), 64u);
  EXPECT_EQ(f.find("general.alignment")->type, ValueType::UINT32);
  EXPECT_EQ(f.data_offset() % 64, 0u);
  EXPECT_EQ(f.tensor("b").offset - f.tensor("a").offset, 64u);
  EXPECT_EQ(reinterpret_cast<const float*>(f.tensor("b").data)[4], 2.0f);
  // Padding bytes are zero.
  const uint8_t* pad = f.tensor("a").data + 12;
  for (int i = 0; i < 64 - 12; ++i) EXPECT_EQ(pad[i], 0) << i;
  // Changing the alignment again updates the key in place.
  w.set_alignment(128);
  w.write(path);
  const File g = File::open(path);
  EXPECT_EQ(g.alignment(), 128u);
  EXPECT_EQ(g.metadata().size(), 2u);
}

TEST(GgufFile, WriteReplacesAnExistingFileAtomically) {
  TempDir dir;
  const std::string path = dir.file("r.gguf");
  testing::write_bytes(path, {1, 2, 3});
  Writer w;
  w.add_uint32("x", 5);
  w.write(path);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_EQ(File::open(path).get_uint("x"), 5u);
  // Writing into a missing directory fails with an error naming the path.
  try {
    w.write(dir.file("missing/dir.gguf"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing/dir.gguf"), std::string::npos);
  }
}

TEST(GgufFile, AcceptsVersion2) {
  TempDir dir;
  Bytes b;
  b.header(2, 1, 2);
  b.str("general.architecture").u32(8).str("llama");
  b.str("n").u32(4).u32(42);
  b.tensor("w", {4, 2}, 0, 0);
  b.pad_to(32);
  for (int i = 0; i < 8; ++i) b.f32(float(i));
  const std::string path = dir.file("v2.gguf");
  testing::write_bytes(path, b.b);
  const File f = File::open(path);
  EXPECT_EQ(f.version(), 2u);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_uint("n"), 42u);
  const TensorInfo& t = f.tensor("w");
  EXPECT_EQ(t.dims, (std::vector<uint64_t>{4, 2}));
  EXPECT_EQ(t.n_bytes, 32u);
  EXPECT_EQ(reinterpret_cast<const float*>(t.data)[7], 7.0f);
}

TEST(GgufFile, MoveKeepsViewsValid) {
  TempDir dir;
  Writer w;
  w.add_string("k", "value");
  const std::string path = dir.file("m.gguf");
  w.write(path);
  File a = File::open(path);
  const std::string_view before = a.get_string("k");
  File b = std::move(a);
  EXPECT_EQ(b.get_string("k"), "value");
  EXPECT_EQ(b.get_string("k").data(), before.data());
  EXPECT_EQ(b.path(), path);
}

TEST(GgufWriter, RejectsBadInput) {
  Writer w;
  w.add_uint32("a", 1);
  EXPECT_THROW(w.add_string("a", "again"), Error);
  EXPECT_THROW(w.set_alignment(48), Error);
  EXPECT_THROW(w.set_alignment(0), Error);
  EXPECT_THROW(w.add_uint64("general.alignment", 64), Error);  // must be uint32
  EXPECT_THROW(w.add_uint32("general.alignment", 24), Error);
  const std::vector<float> d(8);
  EXPECT_THROW(w.add_tensor("t", quant::Type::F32, {}, d.data(), 0), Error);
  EXPECT_THROW(w.add_tensor("t", quant::Type::F32, {1, 1, 1, 1, 8}, d.data(), 32), Error);
  EXPECT_THROW(w.add_tensor("t", quant::Type::F32, {8, 0}, d.data(), 0), Error);
  EXPECT_THROW(w.add_tensor("t", quant::Type::F32, {8}, d.data(), 16), Error);  // wrong size
  EXPECT_THROW(w.add_tensor("t", quant::Type(99), {8}, d.data(), 32), Error);
  EXPECT_THROW(w.add_tensor("t", quant::Type::Q8_0, {8}, d.data(), 32), Error);  // not a block
  w.add_tensor("t", quant::Type::F32, {8}, d.data(), 32);
  EXPECT_THROW(w.add_tensor("t", quant::Type::F32, {8}, d.data(), 32), Error);
  EXPECT_THROW(Value::array_of(ValueType::INT32, {Value{}}), Error);  // a UINT8 element in an INT32 array
}

}  // namespace
}  // namespace ork::gguf
