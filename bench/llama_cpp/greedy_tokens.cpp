// greedy_tokens: llama.cpp's greedy continuation of a prompt given as token ids, for the oracle
// fixtures (tests/fixtures/llama_cpp_greedy/). Not part of ork's build or CI: bench/oracle_greedy.sh
// compiles it against a llama.cpp build (static libllama/libggml) and runs it on generated models.
//
// usage: greedy_tokens MODEL.gguf N_CTX N_PREDICT ID,ID,...
// Prints one JSON object: the context llama.cpp made (its n_ctx, padded), the prompt, the n_predict tokens chosen by argmax (ties: the lowest id), and
// the logits of the last prompt position. The KV cache is f32 and flash attention off, so the only
// approximations left are ggml's own (its f16 GELU table, its matmul accumulation order).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "llama.h"

namespace {

void quiet(ggml_log_level level, const char* text, void*) {
  if (level >= GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

int argmax(const float* x, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i) {
    if (x[i] > x[best]) best = i;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s MODEL.gguf N_CTX N_PREDICT ID,ID,...\n", argv[0]);
    return 2;
  }
  const int n_ctx = std::atoi(argv[2]);
  const int n_predict = std::atoi(argv[3]);
  std::vector<llama_token> prompt;
  for (const char* p = argv[4]; *p;) {
    char* end = nullptr;
    prompt.push_back(llama_token(std::strtol(p, &end, 10)));
    if (end == p) {
      std::fprintf(stderr, "greedy_tokens: bad token list '%s'\n", argv[4]);
      return 2;
    }
    p = *end == ',' ? end + 1 : end;
  }
  if (n_ctx < 1 || n_predict < 0 || prompt.empty() || int(prompt.size()) + n_predict > n_ctx) {
    std::fprintf(stderr, "greedy_tokens: need 1 <= prompt + n_predict <= n_ctx\n");
    return 2;
  }
  llama_log_set(quiet, nullptr);
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (model == nullptr) {
    std::fprintf(stderr, "greedy_tokens: cannot load %s\n", argv[1]);
    return 1;
  }
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = uint32_t(n_ctx);
  cp.n_batch = uint32_t(n_ctx);
  cp.n_ubatch = uint32_t(n_ctx);
  cp.n_threads = 2;
  cp.n_threads_batch = 2;
  cp.type_k = GGML_TYPE_F32;
  cp.type_v = GGML_TYPE_F32;
  cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  cp.swa_full = true;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (ctx == nullptr) {
    std::fprintf(stderr, "greedy_tokens: cannot create a context of %d\n", n_ctx);
    return 1;
  }
  const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));

  std::vector<llama_token> batch = prompt;
  std::vector<float> first_logits;
  std::vector<llama_token> out;
  for (int step = 0; step < n_predict || first_logits.empty(); ++step) {
    if (llama_decode(ctx, llama_batch_get_one(batch.data(), int32_t(batch.size()))) != 0) {
      std::fprintf(stderr, "greedy_tokens: llama_decode failed at step %d\n", step);
      return 1;
    }
    const float* logits = llama_get_logits_ith(ctx, -1);
    if (first_logits.empty()) first_logits.assign(logits, logits + n_vocab);
    if (step >= n_predict) break;
    const llama_token next = llama_token(argmax(logits, n_vocab));
    out.push_back(next);
    batch.assign(1, next);
  }

  // llama.cpp pads the context to a multiple of 256; phi3's LongRoPE choice depends on the padded one.
  std::printf("{\"model\": \"%s\", \"n_ctx\": %u, \"prompt\": [", argv[1], llama_n_ctx(ctx));
  for (size_t i = 0; i < prompt.size(); ++i) std::printf("%s%d", i ? ", " : "", prompt[i]);
  std::printf("], \"tokens\": [");
  for (size_t i = 0; i < out.size(); ++i) std::printf("%s%d", i ? ", " : "", out[i]);
  std::printf("], \"last_prompt_logits\": [");
  for (int i = 0; i < n_vocab; ++i) std::printf("%s%.6g", i ? ", " : "", first_logits[size_t(i)]);
  std::printf("]}\n");
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
