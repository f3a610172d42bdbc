#include "weights/convert.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "core/thread_pool.h"
#include "core/timer.h"
#include "weights/orkpack_format.h"
#include "weights/pack_grouped.h"
#include "weights/pack_writer.h"
#include "weights/packed_int4.h"

namespace ork::weights {

uint64_t peak_rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  uint64_t kb = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, "VmHWM:", 6) == 0) {
      unsigned long long v = 0;
      if (std::sscanf(line + 6, "%llu", &v) == 1) kb = v;
      break;
    }
  }
  std::fclose(f);
  return kb * 1024;
}

ConvertResult convert(const model::Model& model, const ConvertOptions& options) {
  ORK_CHECK(!options.output_path.empty(), "convert: no output path");
  ORK_CHECK(options.output_path != model.file().path(), options.output_path,
            ": the output would overwrite the model");
  Stopwatch sw;
  ThreadPool pool(options.threads);
  const auto& linears = model.weights().linears();
  PackWriter writer(options.output_path, fingerprint_of(model.file()), options.dtype);
  ConvertResult r;
  for (size_t i = 0; i < linears.size(); ++i) {
    const model::Linear& w = *linears[i];
    {
      const PackedHost p = options.dtype == npu::Dtype::kI4 ? pack_linear_i4(w, &pool)
                                                            : pack_linear_grouped(w, options.dtype, &pool);
      if (options.evict_src) model.file().mapping().drop_pages(w.w->offset, w.w->n_bytes);
      if (writer.append(w.name(), p.view())) ++r.weights;
    }  // the packed copy is freed before the next weight
    if (options.progress) options.progress(i + 1, linears.size(), writer.bytes());
  }
  writer.finalize();
  struct stat st {};
  r.bytes = ::stat(options.output_path.c_str(), &st) == 0 ? uint64_t(st.st_size) : writer.bytes();
  r.ms = sw.elapsed_ms();
  r.peak_rss_bytes = peak_rss_bytes();
  return r;
}

}  // namespace ork::weights
