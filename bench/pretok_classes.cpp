// The cost of llama.cpp's character classes in the pre-tokenizer regex (model/unicode_classes.h):
// the GPT-2 pattern (llama.cpp src/llama-vocab.cpp) matched over a multilingual text with PCRE2's own
// \p{..}/\s tables (what ork did before), and with the classes expanded into llama.cpp's ranges (what
// ork does), each with and without PCRE2's JIT. bytes_per_second is text bytes split per second.
// Run with --benchmark_format=json --benchmark_repetitions=N for JSON medians and spreads; the machine
// is named in the context. Host wall clock of this machine only.
#include <benchmark/benchmark.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_util.h"
#include "model/unicode_classes.h"

namespace {

constexpr const char* kGpt2 =
    R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re";

// English, German, Russian, Greek, Arabic, Hindi, Chinese, Japanese, Korean, digits, emoji.
const std::string& text() {
  static const std::string t = [] {
    const std::string para =
        "The quick brown fox jumps over the lazy dog 1234567890. Zwölf Boxkämpfer jagen Viktor quer "
        "über den großen Sylter Deich. Съешь же ещё этих мягких французских булок, да выпей чаю. "
        "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. نص حكيم له سر قاطع وذو شأن عظيم مكتوب على ثوب أخضر. "
        "ऋषियों को सताने वाले दुष्ट राक्षसों के राजा रावण का सर्वनाश करने वाले विष्णुवतार भगवान श्रीराम। "
        "我能吞下玻璃而不伤身体。いろはにほへと ちりぬるを。다람쥐 헌 쳇바퀴에 타고파. 🦙🚀 ok!\n\n";
    std::string s;
    while (s.size() < 64 * 1024) s += para;
    return s;
  }();
  return t;
}

pcre2_code* compile(const std::string& pattern, bool jit) {
  int err = 0;
  PCRE2_SIZE off = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &err, &off, nullptr);
  if (code == nullptr) {
    std::fprintf(stderr, "pretok_classes: pattern does not compile (error %d at %zu)\n", err, size_t(off));
    std::exit(1);
  }
  if (jit) pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  return code;
}

// args: llama_classes (0: PCRE2's tables, 1: expanded), jit (0/1)
void BM_SplitGpt2(benchmark::State& state) {
  const bool llama = state.range(0) != 0, jit = state.range(1) != 0;
  pcre2_code* code = compile(llama ? ork::model::unicode::expand_classes(kGpt2) : std::string(kGpt2), jit);
  pcre2_match_data* md = pcre2_match_data_create(1, nullptr);
  const std::string& s = text();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(s.data());
  const uint32_t flags = PCRE2_NO_UTF_CHECK | (jit ? 0 : PCRE2_NO_JIT);
  int64_t pieces = 0;
  for (auto _ : state) {
    size_t pos = 0;
    pieces = 0;
    while (pos < s.size()) {
      const int rc = pcre2_match(code, subject, s.size(), pos, flags, md, nullptr);
      if (rc < 0) break;
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
      pos = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
      ++pieces;
    }
    benchmark::DoNotOptimize(pieces);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(s.size()));
  state.counters["pieces"] = double(pieces);
  pcre2_match_data_free(md);
  pcre2_code_free(code);
}
BENCHMARK(BM_SplitGpt2)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->ArgNames({"llama_classes", "jit"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("machine", ork::bench::machine_name());
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
