/* examples/generate.c — the ork C API in a few lines: load a model, see what memory it takes,
 * generate from a prompt in two duplicated contexts, print the text.
 *
 *   cc -std=c11 generate.c -I include -L build -lork_api ... (see docs/api.md), or the CMake target
 *   ork_example_generate:  ork_example_generate MODEL.gguf [sim|cpu|npu|auto] ["prompt"]           */
#include <stdio.h>
#include <stdlib.h>

#include "ork/ork.h"

static int check(int status, const char* what) {
  if (status != ORK_OK) {
    fprintf(stderr, "%s: %s: %s\n", what, ork_status_name(status), ork_last_error());
    exit(1);
  }
  return status;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.gguf [device] [prompt]\n", argv[0]);
    return 2;
  }
  ork_model_options opts;
  ork_model_options_init(&opts);
  opts.device = argc > 2 ? argv[2] : "auto";
  const char* text = argc > 3 ? argv[3] : "Once upon a time";

  ork_model* model = NULL;
  check(ork_model_load(argv[1], &opts, &model), "load");
  ork_model_info info;
  check(ork_model_get_info(model, &info), "info");

  ork_context* ctx = NULL;
  check(ork_context_create(model, 256, &ctx), "context");
  ork_mem_info mem;
  check(ork_query_mem(NULL, ctx, &mem), "query");
  printf("device %s (%s): weights %llu bytes, internal %llu bytes, device total %llu bytes\n", info.device,
         info.residency, (unsigned long long)mem.weight_bytes, (unsigned long long)mem.internal_bytes,
         (unsigned long long)mem.total_dma_bytes);

  int32_t prompt[256];
  int64_t n_prompt = 0;
  check(ork_tokenize(model, text, 1, prompt, 256, &n_prompt), "tokenize");

  ork_context* second = NULL;
  check(ork_context_dup(ctx, 0, &second), "dup");
  ork_context* seqs[2] = {ctx, second};
  for (int i = 0; i < 2; ++i) {
    ork_sampler_params sp;
    ork_sampler_params_init(&sp);
    sp.seed = (uint64_t)(i + 1);
    ork_sampler* sampler = NULL;
    check(ork_sampler_create(&sp, &sampler), "sampler");
    int32_t out[32];
    int64_t n_out = 0;
    check(ork_generate(seqs[i], sampler, prompt, n_prompt, 32, out, 32, &n_out, NULL, NULL), "generate");
    char buf[4096];
    uint64_t n_bytes = 0;
    check(ork_detokenize(model, out, n_out, buf, sizeof buf, &n_bytes), "detokenize");
    printf("[%d] %s%s\n", i, text, buf);
    ork_sampler_free(sampler);
  }
  ork_context_free(second);
  ork_context_free(ctx);
  ork_model_free(model);
  return 0;
}
