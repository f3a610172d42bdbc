// ork convert — pack every linear weight of a GGUF once into an .orkpack (docs/orkpack.md).
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "core/env.h"
#include "core/error.h"
#include "core/json.h"
#include "model/model.h"
#include "npu/layout.h"
#include "runtime/npu_wtype.h"
#include "weights/convert.h"

namespace ork::cli {
namespace {

const std::vector<OptionSpec> kConvertOptions = {
    {{"-m", "--model"}, true, "GGUF model file (default: the embedded default model)"},
    {{"-o", "--output"}, true, "the .orkpack to write (default: MODEL with .orkpack for .gguf)"},
    {{"--dtype"}, true, "i8 (default; what the NPU path loads) | i4 (what --npu-wtype i4 loads) | auto (i4 for a 4/5-bit GGUF, as --npu-wtype auto) | f16"},
    {{"-t", "--threads"}, true, "threads (default: all cores)"},
    {{"--evict-src"}, false, "drop each source tensor's pages once packed (ORK_EVICT_SRC=1)"},
    {{"--json"}, false, "print {weights, bytes, ms, peak_rss_bytes} as JSON at the end"},
    {{"-h", "--help"}, false, "this help"},
};

std::string default_output(const std::string& model) {
  const std::string ext = ".gguf";
  if (model.size() > ext.size() && model.compare(model.size() - ext.size(), ext.size(), ext) == 0) {
    return model.substr(0, model.size() - ext.size()) + ".orkpack";
  }
  return model + ".orkpack";
}

}  // namespace

int cmd_convert(const std::vector<std::string>& argv) {
  const Args args("convert", kConvertOptions, argv);
  if (args.has("--help")) {
    std::printf("usage: ork convert [-m MODEL.gguf] [-o MODEL.orkpack] [options]\n\n%s",
                format_options(kConvertOptions).c_str());
    return 0;
  }
  const std::string model_path = args.get_or("--model", default_model_path());
  weights::ConvertOptions o;
  o.output_path = args.get_or("--output", default_output(model_path));
  const std::string dtype = args.get_or("--dtype", "i8");
  if (dtype != "i8" && dtype != "i4" && dtype != "auto" && dtype != "f16") {
    throw UsageError{"--dtype: '" + dtype + "' is not one of i8, i4, auto, f16"};
  }
  o.threads = int(args.get_int("--threads", 0, 1, 1024));
  o.evict_src = args.has("--evict-src") || env_flag("ORK_EVICT_SRC", false);
  const bool json = args.has("--json");
  const bool bar = !json && ::isatty(STDERR_FILENO) != 0;
  if (bar) {
    o.progress = [](uint64_t done, uint64_t total, uint64_t bytes) {
      constexpr int kWidth = 40;
      const int filled = total > 0 ? int(done * kWidth / total) : kWidth;
      std::fprintf(stderr, "\r[%s%s] %llu/%llu weights, %.1f MB", std::string(size_t(filled), '#').c_str(),
                   std::string(size_t(kWidth - filled), ' ').c_str(), (unsigned long long)done,
                   (unsigned long long)total, double(bytes) / 1e6);
      if (done == total) std::fputc('\n', stderr);
      std::fflush(stderr);
    };
  }

  const auto model = model::Model::load(model_path);
  o.dtype = dtype == "f16" ? npu::Dtype::kF16
                           : runtime::resolve_npu_wtype(runtime::parse_npu_wtype(dtype), model->weights());
  const weights::ConvertResult r = weights::convert(*model, o);
  if (json) {
    JsonWriter j;
    j.begin_object();
    j.key("model").value(model_path);
    j.key("output").value(o.output_path);
    j.key("dtype").value(npu::dtype_name(o.dtype));
    j.key("weights").value(r.weights);
    j.key("bytes").value(r.bytes);
    j.key("ms").value(r.ms);
    j.key("peak_rss_bytes").value(r.peak_rss_bytes);
    j.key("evict_src").value(o.evict_src);
    j.end_object();
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("%s: %llu weights, %.1f MB (%s) in %.1f s, peak RSS %.1f MB\n", o.output_path.c_str(),
                (unsigned long long)r.weights, double(r.bytes) / 1e6, npu::dtype_name(o.dtype),
                r.ms / 1000.0, double(r.peak_rss_bytes) / 1e6);
  }
  return 0;
}

}  // namespace ork::cli
