// Per weight: packing from the GGUF (decode → requantize → tile, one thread) vs loading the same
// weight from an .orkpack the way a cache hit does (pages dropped first, so page faults are paid;
// checksum verified; bytes and scales copied into a buffer, as into a DMA buffer). Medians over
// --reps runs. Prints one JSON object naming the machine. Target (issue 5): load ≥ 20× faster.
//
// usage: orkpack_load [--model PATH.gguf] [--reps N]   (default: a generated q4_K model in $TMPDIR)
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/env.h"
#include "core/json.h"
#include "core/timer.h"
#include "gen_model/gen_model.h"
#include "model/model.h"
#include "weights/orkpack_format.h"
#include "weights/pack_reader.h"
#include "weights/pack_writer.h"
#include "weights/packed.h"

int main(int argc, char** argv) {
  using namespace ork;
  std::string model_path;
  int reps = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--model") model_path = argv[i + 1];
    else if (a == "--reps") reps = int(parse_int(argv[i + 1], "--reps", 1, 1000));
  }
  const auto tmp = std::filesystem::temp_directory_path();
  const std::string pid = std::to_string(::getpid());
  bool generated = false;
  if (model_path.empty()) {
    gen::ModelSpec s = gen::preset("tiny-llama");
    s.weight_type = quant::Type::Q4_K;
    s.n_embd = 1024;
    s.n_ff = 2816;
    s.n_head = 16;
    s.n_head_kv = 4;
    s.n_layer = 2;
    s.n_vocab = 8192;
    model_path = (tmp / ("ork-bench-load-" + pid + ".gguf")).string();
    gen::write_model(s, model_path);
    generated = true;
  }
  const std::string pack_path = (tmp / ("ork-bench-load-" + pid + ".orkpack")).string();
  const auto model = model::Model::load(model_path);
  const auto& linears = model->weights().linears();

  struct Row {
    std::string name;
    int64_t n, k;
    double pack_ms, load_ms;
    bool identical;
  };
  std::vector<Row> rows;
  std::vector<weights::PackedHost> refs;
  {
    weights::PackWriter w(pack_path, weights::fingerprint_of(model->file()), npu::Dtype::kI8);
    for (const model::Linear* l : linears) {
      std::vector<double> t;
      weights::PackedHost p;
      for (int r = 0; r < reps; ++r) {
        Stopwatch sw;
        p = weights::pack_linear(*l, nullptr);
        t.push_back(sw.elapsed_ms());
      }
      w.append(l->name(), p.view());
      rows.push_back({std::string(l->name()), l->n, l->k, bench::median(t), 0, false});
      refs.push_back(std::move(p));
    }
    w.finalize();
  }
  const auto pack = weights::PackReader::open(pack_path);
  std::vector<uint8_t> buf;
  double pack_total = 0, load_total = 0;
  bool all_identical = true;
  for (size_t i = 0; i < linears.size(); ++i) {
    const weights::PackEntry& e = *pack->find(rows[i].name);
    std::vector<double> t;
    buf.resize(size_t(e.blob_size + e.scale_size));
    for (int r = 0; r < reps; ++r) {
      pack->mapping().drop_pages(e.blob_offset, e.scale_offset + e.scale_size - e.blob_offset);
      Stopwatch sw;
      if (!pack->verify(e)) {
        std::fprintf(stderr, "checksum failure on %s\n", e.name.c_str());
        return 1;
      }
      const weights::PackedView v = pack->view(e);
      std::memcpy(buf.data(), v.bytes, size_t(e.blob_size));
      std::memcpy(buf.data() + e.blob_size, v.scales, size_t(e.scale_size));
      t.push_back(sw.elapsed_ms());
    }
    rows[i].load_ms = bench::median(t);
    rows[i].identical =
        std::memcmp(buf.data(), refs[i].bytes.data(), refs[i].bytes.size()) == 0 &&
        std::memcmp(buf.data() + e.blob_size, refs[i].scales.data(), size_t(e.scale_size)) == 0;
    all_identical = all_identical && rows[i].identical;
    pack_total += rows[i].pack_ms;
    load_total += rows[i].load_ms;
  }
  std::filesystem::remove(pack_path);
  if (generated) std::filesystem::remove(model_path);

  std::vector<double> ratios;
  for (const auto& r : rows) ratios.push_back(r.load_ms > 0 ? r.pack_ms / r.load_ms : 0);
  JsonWriter j;
  j.begin_object();
  j.key("bench").value("orkpack_load");
  j.key("machine").value(bench::machine_name());
  j.key("model").value(generated ? std::string("generated q4_K n_embd 1024 n_ff 2816 vocab 8192")
                                 : model_path);
  j.key("reps").value(reps);
  j.key("weights").begin_array();
  for (const auto& r : rows) {
    j.begin_object();
    j.key("name").value(r.name);
    j.key("n").value(r.n);
    j.key("k").value(r.k);
    j.key("pack_ms").value(r.pack_ms);
    j.key("load_ms").value(r.load_ms);
    j.key("ratio").value(r.load_ms > 0 ? r.pack_ms / r.load_ms : 0.0);
    j.key("identical").value(r.identical);
    j.end_object();
  }
  j.end_array();
  j.key("pack_ms_total").value(pack_total);
  j.key("load_ms_total").value(load_total);
  j.key("ratio_total").value(load_total > 0 ? pack_total / load_total : 0.0);
  j.key("ratio_median").value(bench::median(ratios));
  j.key("ratio_min").value(ratios.empty() ? 0.0 : *std::min_element(ratios.begin(), ratios.end()));
  j.key("all_identical").value(all_identical);
  j.key("target_ratio").value(20.0);
  j.end_object();
  std::printf("%s\n", j.str().c_str());
  return all_identical ? 0 : 1;
}
