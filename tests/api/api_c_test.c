/* The C API from C (compiled as C11, using only ork.h): a generated model on the simulator, one
 * context duplicated four times, four threads generating at once, each output equal to a
 * single-context run; then the error paths. Usage: test_api_c MODEL.gguf. Exit status 0 = pass. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ork/ork.h"

#define N_PREDICT 16
#define N_THREADS 4

static int failures = 0;

#define EXPECT(cond)                                                              \
  do {                                                                            \
    if (!(cond)) {                                                                \
      fprintf(stderr, "%s:%d: FAILED: %s (last error: %s)\n", __FILE__, __LINE__, \
              #cond, ork_last_error());                                           \
      failures++;                                                                 \
    }                                                                             \
  } while (0)

#define CHECK_OK(call)                                                    \
  do {                                                                    \
    int st_ = (call);                                                     \
    if (st_ != ORK_OK) {                                                  \
      fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call, \
              ork_status_name(st_), ork_last_error());                    \
      exit(1);                                                            \
    }                                                                     \
  } while (0)

static const int32_t kPrompt[] = {1, 17, 300, 42, 5, 99, 250, 3};
#define N_PROMPT ((int64_t)(sizeof kPrompt / sizeof kPrompt[0]))

static ork_sampler* make_sampler(void) {
  ork_sampler_params p;
  ork_sampler_params_init(&p);
  p.temperature = 0.9f;
  p.seed = 1234;
  ork_sampler* s = NULL;
  if (ork_sampler_create(&p, &s) != ORK_OK) return NULL;
  return s;
}

struct Job {
  ork_context* ctx;
  int32_t out[N_PREDICT];
  int64_t n;
  int status;
};

static void* worker(void* arg) {
  struct Job* job = (struct Job*)arg;
  ork_sampler* s = make_sampler();
  if (s == NULL) {
    job->status = ORK_ERR_INTERNAL;
    return NULL;
  }
  job->status = ork_generate(job->ctx, s, kPrompt, N_PROMPT, N_PREDICT, job->out, N_PREDICT, &job->n,
                             NULL, NULL);
  ork_sampler_free(s);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.gguf\n", argv[0]);
    return 2;
  }
  ork_model_options o;
  ork_model_options_init(&o);
  o.device = "sim";
  o.threads = 2;
  ork_model* model = NULL;
  CHECK_OK(ork_model_load(argv[1], &o, &model));
  ork_model_info info;
  CHECK_OK(ork_model_get_info(model, &info));
  EXPECT(strcmp(info.device, "sim") == 0);
  EXPECT(info.n_vocab > 0);

  /* The reference: one context, alone. */
  ork_context* ref = NULL;
  CHECK_OK(ork_context_create(model, 64, &ref));
  struct Job reference;
  memset(&reference, 0, sizeof reference);
  reference.ctx = ref;
  worker(&reference);
  CHECK_OK(reference.status);
  EXPECT(reference.n > 0);

  /* Four duplicates of a fresh context, generating concurrently. */
  ork_context* base = NULL;
  CHECK_OK(ork_context_create(model, 64, &base));
  struct Job jobs[N_THREADS];
  pthread_t threads[N_THREADS];
  for (int i = 0; i < N_THREADS; ++i) {
    memset(&jobs[i], 0, sizeof jobs[i]);
    CHECK_OK(ork_context_dup(base, 0, &jobs[i].ctx));
  }
  for (int i = 0; i < N_THREADS; ++i) pthread_create(&threads[i], NULL, worker, &jobs[i]);
  for (int i = 0; i < N_THREADS; ++i) pthread_join(threads[i], NULL);
  for (int i = 0; i < N_THREADS; ++i) {
    EXPECT(jobs[i].status == ORK_OK);
    EXPECT(jobs[i].n == reference.n);
    EXPECT(memcmp(jobs[i].out, reference.out, sizeof(int32_t) * (size_t)reference.n) == 0);
  }

  /* The memory query of a context: its model's device memory and its own KV cache. */
  ork_mem_info mi;
  CHECK_OK(ork_query_mem(NULL, jobs[0].ctx, &mi));
  EXPECT(mi.weight_bytes > 0);
  EXPECT(mi.kv_cache_bytes > 0);
  EXPECT(mi.total_dma_bytes >= mi.weight_bytes + mi.internal_device_bytes);
  EXPECT(mi.sram_bytes == 0);

  /* Bad input: a status and a message, never a crash. */
  const float* logits = NULL;
  EXPECT(ork_eval(NULL, kPrompt, 1, &logits) == ORK_ERR_BAD_HANDLE);
  EXPECT(strlen(ork_last_error()) > 0);
  ork_context* never = NULL;
  EXPECT(ork_context_create(NULL, 0, &never) == ORK_ERR_BAD_HANDLE);
  EXPECT(never == NULL);
  EXPECT(ork_model_load(NULL, NULL, &model) == ORK_ERR_INVALID_ARG);
  ork_model* missing = NULL;
  EXPECT(ork_model_load("/nonexistent/model.gguf", NULL, &missing) == ORK_ERR_LOAD);
  EXPECT(missing == NULL);
  int32_t few[2];
  int64_t n_tok = 0;
  EXPECT(ork_tokenize(model, "hello world, hello world", 1, few, 2, &n_tok) == ORK_ERR_BUFFER_TOO_SMALL);
  EXPECT(n_tok > 2);
  float small[4];
  EXPECT(ork_eval_into(ref, kPrompt, 1, 0, small, 4) == ORK_ERR_BUFFER_TOO_SMALL);
  EXPECT(ork_eval(ref, kPrompt, -1, &logits) == ORK_ERR_INVALID_ARG);

  ork_context* dead = jobs[3].ctx;
  CHECK_OK(ork_context_free(dead));
  EXPECT(ork_eval(dead, kPrompt, 1, &logits) == ORK_ERR_BAD_HANDLE);
  EXPECT(ork_context_free(dead) == ORK_ERR_BAD_HANDLE);

  /* The model freed while contexts still exist: they report it, and can still be freed. */
  CHECK_OK(ork_model_free(model));
  EXPECT(ork_model_free(model) == ORK_ERR_BAD_HANDLE);
  CHECK_OK(ork_context_reset(jobs[0].ctx));
  EXPECT(ork_eval(jobs[0].ctx, kPrompt, 1, &logits) == ORK_ERR_MODEL_FREED);
  for (int i = 0; i < 3; ++i) CHECK_OK(ork_context_free(jobs[i].ctx));
  CHECK_OK(ork_context_free(base));
  CHECK_OK(ork_context_free(ref));

  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("api_c_test: OK (%d concurrent contexts, %lld tokens each)\n", N_THREADS, (long long)reference.n);
  return 0;
}
