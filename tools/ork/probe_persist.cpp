// ork probe persist: for each linear weight, pack it (decode → requantize → tile), write it to an
// .orkpack, then load it back the way a cache hit does (mmap → verify checksum → copy into a buffer,
// with the weight's pages dropped first so page faults are paid) and compare the bytes.
#include "probe_persist.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "args.h"
#include "commands.h"
#include "core/error.h"
#include "core/json.h"
#include "core/quote.h"
#include "core/timer.h"
#include "model/model.h"
#include "weights/orkpack_format.h"
#include "weights/pack_grouped.h"
#include "weights/pack_reader.h"
#include "weights/pack_writer.h"

namespace ork::cli {
namespace {

const std::vector<OptionSpec> kPersistOptions = {
    {{"-m", "--model"}, true, "GGUF model file (default: the embedded default model)"},
    {{"--persist"}, true, "the .orkpack to write and read back (default: a file in $TMPDIR, removed)"},
    {{"--json"}, false, "print the result as JSON"},
    {{"-h", "--help"}, false, "this help"},
};

struct Row {
  std::string name;
  int64_t n = 0, k = 0;
  double pack_ms = 0, load_ms = 0;
  bool identical = false;
};

}  // namespace

int probe_persist(const std::vector<std::string>& argv) {
  const Args args("probe persist", kPersistOptions, argv);
  if (args.has("--help")) {
    std::printf("usage: ork probe persist [-m MODEL] [--persist PATH] [--json]\n\n%s",
                format_options(kPersistOptions).c_str());
    return 0;
  }
  const bool json = args.has("--json");
  const auto model = model::Model::load(args.get_or("--model", default_model_path()));
  const bool temp = !args.has("--persist");
  const std::string path =
      temp ? (std::filesystem::temp_directory_path() /
              ("ork-probe-persist-" + std::to_string(::getpid()) + ".orkpack")).string()
           : *args.get("--persist");
  const auto& linears = model->weights().linears();

  std::vector<Row> rows;
  std::vector<weights::PackedHost> packed;
  {
    weights::PackWriter writer(path, weights::fingerprint_of(model->file()), npu::Dtype::kI8);
    for (const model::Linear* l : linears) {
      Stopwatch sw;
      weights::PackedHost p = weights::pack_linear(*l, nullptr);
      Row r;
      r.pack_ms = sw.elapsed_ms();
      r.name = std::string(l->name());
      r.n = l->n;
      r.k = l->k;
      writer.append(l->name(), p.view());
      rows.push_back(r);
      packed.push_back(std::move(p));
    }
    writer.finalize();
  }
  const auto pack = weights::PackReader::open(path);
  weights::check_pack_source(*pack, weights::fingerprint_of(model->file()), npu::Dtype::kI8);
  std::vector<uint8_t> buf;
  for (size_t i = 0; i < linears.size(); ++i) {
    const weights::PackEntry* e = pack->find(rows[i].name);
    ORK_CHECK(e != nullptr, path, ": entry ", quote(rows[i].name), " is missing after writing it");
    pack->mapping().drop_pages(e->blob_offset, e->scale_offset + e->scale_size - e->blob_offset);
    Stopwatch sw;
    ORK_CHECK(pack->verify(*e), path, ": entry ", quote(rows[i].name), " fails its checksum");
    const weights::PackedView v = pack->view(*e);
    buf.resize(size_t(e->blob_size + e->scale_size));
    std::memcpy(buf.data(), v.bytes, size_t(e->blob_size));
    std::memcpy(buf.data() + e->blob_size, v.scales, size_t(e->scale_size));
    rows[i].load_ms = sw.elapsed_ms();
    const weights::PackedHost& ref = packed[i];
    rows[i].identical =
        ref.bytes.size() == e->blob_size &&
        std::memcmp(buf.data(), ref.bytes.data(), ref.bytes.size()) == 0 &&
        std::memcmp(buf.data() + e->blob_size, ref.scales.data(), size_t(e->scale_size)) == 0;
  }
  if (temp) std::filesystem::remove(path);

  double pack_total = 0, load_total = 0;
  int identical = 0;
  for (const Row& r : rows) {
    pack_total += r.pack_ms;
    load_total += r.load_ms;
    identical += r.identical ? 1 : 0;
  }
  const double ratio = load_total > 0 ? pack_total / load_total : 0;
  if (json) {
    JsonWriter j;
    j.begin_object();
    j.key("weights").begin_array();
    for (const Row& r : rows) {
      j.begin_object();
      j.key("name").value(r.name);
      j.key("n").value(r.n);
      j.key("k").value(r.k);
      j.key("pack_ms").value(r.pack_ms);
      j.key("load_ms").value(r.load_ms);
      j.key("identical").value(r.identical);
      j.end_object();
    }
    j.end_array();
    j.key("count").value(int64_t(rows.size()));
    j.key("identical").value(int64_t(identical));
    j.key("pack_ms").value(pack_total);
    j.key("load_ms").value(load_total);
    j.key("ratio").value(ratio);
    j.end_object();
    std::printf("%s\n", j.str().c_str());
  } else {
    for (const Row& r : rows) {
      std::printf("%-28s %6lldx%-6lld pack %8.2f ms  load %7.3f ms  %s\n", r.name.c_str(),
                  (long long)r.n, (long long)r.k, r.pack_ms, r.load_ms,
                  r.identical ? "identical" : "DIFFERENT");
    }
    std::printf("%zu weights: pack %.1f ms, load %.1f ms (%.1fx faster), %d byte-identical\n",
                rows.size(), pack_total, load_total, ratio, identical);
  }
  return identical == int(rows.size()) ? 0 : 1;
}

}  // namespace ork::cli
