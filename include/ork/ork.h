/* ork.h — the C API of ork: load a GGUF language model onto the RK3588 NPU (or its simulator, or
 * the CPU), create sequences (contexts), tokenize, evaluate, sample, generate; query and share memory.
 *
 * Conventions
 *  - Every function returns an ork_status: ORK_OK (0) or a negative code. On failure nothing is
 *    written to out-parameters, and ork_last_error() returns a message naming what was wrong (the
 *    message is thread-local: it belongs to the failed call made on the calling thread).
 *  - Handles are opaque. A NULL, freed or made-up handle is reported as ORK_ERR_BAD_HANDLE (never a
 *    crash); a handle freed and whose address was reused by a new object of the same kind cannot be
 *    told apart from it.
 *  - Freeing a model while contexts still use it is allowed: the model's memory lives until the last
 *    of its contexts is freed, and those contexts then fail with ORK_ERR_MODEL_FREED.
 *  - Thread-safety: every function may be called from any thread. Different contexts (including
 *    duplicates of one context) may evaluate concurrently; their forward passes through one model are
 *    serialized inside. A single context or sampler is meant for one thread at a time (concurrent
 *    calls on the same context are serialized; on the same sampler they are not allowed).
 *  - Sizes are in bytes unless named otherwise; counts are int64_t; a negative count is
 *    ORK_ERR_INVALID_ARG; sizes whose products overflow are ORK_ERR_INVALID_ARG.
 */
#ifndef ORK_ORK_H
#define ORK_ORK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ORK_API_VERSION 1
#define ORK_MAX_DOMAINS 16

typedef enum ork_status {
  ORK_OK = 0,
  ORK_ERR_INVALID_ARG = -1,     /* a NULL pointer, bad value or overflowing size */
  ORK_ERR_BAD_HANDLE = -2,      /* NULL, freed or unknown handle */
  ORK_ERR_MODEL_FREED = -3,     /* the context's model was freed */
  ORK_ERR_LOAD = -4,            /* the model file cannot be loaded */
  ORK_ERR_DEVICE = -5,          /* the NPU or simulator refused (no room, fault, unsupported) */
  ORK_ERR_CONTEXT_FULL = -6,    /* the tokens do not fit in the context */
  ORK_ERR_BUFFER_TOO_SMALL = -7,/* a caller buffer is too small (the size needed is reported) */
  ORK_ERR_OUT_OF_MEMORY = -8,
  ORK_ERR_INTERNAL = -9
} ork_status;

typedef struct ork_model ork_model;
typedef struct ork_context ork_context;
typedef struct ork_sampler ork_sampler;
typedef struct ork_mem ork_mem;

/* The message of the last failed call on this thread ("" when none). Valid until the next call. */
const char* ork_last_error(void);
/* "ORK_OK", "ORK_ERR_INVALID_ARG", ... ("unknown status" for other values). */
const char* ork_status_name(int status);

/* ---- Models --------------------------------------------------------------------------------- */

typedef struct ork_model_options {
  const char* device;            /* "cpu" | "npu" | "sim" | "auto" (NULL: "auto") */
  const char* residency;         /* npu/sim weights: "auto" | "resident" | "stream" (NULL: "auto") */
  int32_t threads;               /* 0: all cores */
  int32_t cpu_int8;              /* cpu: nonzero runs matmuls as w8a8 int8 (the NPU path's math) */
  uint64_t wcache_budget_bytes;  /* streaming weight budget; 0: 3 GiB */
  const char* persist_path;      /* .orkpack cache of packed weights; NULL: none */
  uint64_t sim_window_bytes;     /* simulator: IOVA window per domain; 0: 4 GiB */
  uint32_t sim_domains;          /* simulator: IOMMU domains; 0: 16 */
  uint32_t sim_cores;            /* simulator: cores; 0: 3 */
  /* Sharing with a model loaded earlier (npu/sim; its device is used and the device fields above
   * are ignored). The other model's memory lives at least as long as this one. */
  ork_model* share_scratch_with; /* one device scratch for both (models that run one after another) */
  ork_model* share_weights_with; /* reuse its resident copy of every weight with identical bytes */
  /* "Allocate outside" (npu/sim, resident plans): the weights' device memory from the caller, one
   * fd (a dma-buf; a memfd on the simulator) per domain the plan uses: weight_mem_fds[d] holding
   * weight_mem_sizes[d] bytes, at least ork_query_plan's domains[d].weight_bytes (else
   * ORK_ERR_BUFFER_TOO_SMALL). Each is imported into its domain and the packed weights are placed in
   * it; ork allocates no weight buffer. The caller keeps the fds (the memory must stay until the
   * model is freed). n_weight_mem 0: ork allocates. A streaming plan or a count other than the
   * plan's domains: ORK_ERR_INVALID_ARG. */
  const int* weight_mem_fds;
  const uint64_t* weight_mem_sizes;
  uint32_t n_weight_mem;
  /* Caller-provided internal memory (npu/sim; the SDK's rknn_set_internal_mem): the device matmul
   * scratch from the caller, one fd (a dma-buf; a memfd on the simulator) per domain of the plan:
   * internal_mem_fds[d] holding internal_mem_sizes[d] bytes, at least ork_query_plan's
   * internal_mem_bytes[d] (else ORK_ERR_BUFFER_TOO_SMALL, the message naming the bytes needed); a
   * domain whose internal_mem_bytes[d] is 0 ignores its entry (fd may be -1). Each is imported into
   * its domain and the scratch's inputs, outputs and register commands are placed in it; only the
   * per-domain task arrays (a page or so each: the driver reads them through a kernel mapping, which
   * imported memory lacks) stay ork's. The caller keeps the fds (the memory must stay until the model
   * is freed). n_internal_mem 0: ork allocates. A count other than the plan's n_domains, or
   * share_scratch_with at the same time: ORK_ERR_INVALID_ARG. */
  const int* internal_mem_fds;
  const uint64_t* internal_mem_sizes;
  uint32_t n_internal_mem;
  /* Non-zero: bind the model's threads (and the thread that loads it) to CPUs, fastest cores first
   * (the Cortex-A76 cores of an RK3588 before its A55 cores). */
  int32_t pin_threads;
  /* Element type of the KV cache of the model's contexts (and of ork_query_plan's KV bytes):
   * "f32" | "f16" | "q8_0" (NULL: "f16", llama.cpp's default). q8_0 needs n_head_kv × head_dim to be a
   * multiple of 32. Another name: ORK_ERR_INVALID_ARG. */
  const char* kv_type;
  /* npu/sim: the device form of the linear weights: "i8" (int8 per row), "i4" (int4 with one scale per
   * row, W4A8 on the device: half the device weight bytes), "i4a4" (the same weights with int4
   * activations, W4A4: less accurate), or "auto" (i4 when most linear weights are 4/5-bit GGUF types);
   * NULL: "i8". Another name: ORK_ERR_INVALID_ARG. */
  const char* npu_wtype;
} ork_model_options;

/* Fills *opts with the defaults (all zero/NULL). */
void ork_model_options_init(ork_model_options* opts);

/* Loads a GGUF model. opts may be NULL (defaults). */
int ork_model_load(const char* path, const ork_model_options* opts, ork_model** out);
/* Frees the handle (see "Freeing a model" above). NULL is ORK_ERR_BAD_HANDLE. */
int ork_model_free(ork_model* model);

typedef struct ork_model_info {
  int32_t n_vocab;
  int32_t n_embd;
  int32_t n_layer;
  int64_t n_ctx_train;
  int32_t bos;             /* -1 when none */
  int32_t eos;             /* -1 when none */
  char device[16];         /* "cpu", "cpu-int8", "npu", "sim" */
  char residency[16];      /* "resident", "stream", "none" (cpu) */
  uint32_t domains_used;
} ork_model_info;
int ork_model_get_info(const ork_model* model, ork_model_info* out);

/* ---- Tokens --------------------------------------------------------------------------------- */

/* Encodes text (NUL-terminated) into at most `capacity` tokens; *n_tokens = the count. When they do
 * not fit: ORK_ERR_BUFFER_TOO_SMALL with *n_tokens = the count needed (nothing else written). */
int ork_tokenize(const ork_model* model, const char* text, int add_bos, int32_t* tokens,
                 int64_t capacity, int64_t* n_tokens);
/* Decodes tokens into buf (NUL-terminated, at most `capacity` bytes with the NUL); *n_bytes = the
 * length without the NUL. Too small: ORK_ERR_BUFFER_TOO_SMALL with *n_bytes = the length needed. */
int ork_detokenize(const ork_model* model, const int32_t* tokens, int64_t n_tokens, char* buf,
                   uint64_t capacity, uint64_t* n_bytes);

/* ---- Contexts (one sequence each) -------------------------------------------------------------- */

/* A new sequence: its own KV cache of n_ctx tokens (0: the model's trained length, bounded by half
 * the available memory; a larger n_ctx than fits is an error with the numbers) and scratch. */
int ork_context_create(ork_model* model, int64_t n_ctx, ork_context** out);
/* A new sequence sharing src's model (weights, device tasks, scratch); its own KV cache of the same
 * size: empty, or with copy_state != 0 a copy of src's tokens so far. */
int ork_context_dup(ork_context* src, int copy_state, ork_context** out);
int ork_context_free(ork_context* ctx);
/* Forgets the sequence (positions restart at 0). */
int ork_context_reset(ork_context* ctx);
int ork_context_n_past(const ork_context* ctx, int64_t* n_past);
int ork_context_n_ctx(const ork_context* ctx, int64_t* n_ctx);

/* Evaluates n tokens after those already in the context. *logits (may be NULL) receives the last
 * token's n_vocab logits: in the caller's logits memory when one is set (ork_context_set_logits),
 * else in a buffer owned by the context; valid until the next evaluation. */
int ork_eval(ork_context* ctx, const int32_t* tokens, int64_t n, const float** logits);
/* Like ork_eval, but writes the logits straight into `out` (capacity floats): the last token's, or
 * with all != 0 every token's [n][n_vocab]. ORK_ERR_BUFFER_TOO_SMALL when capacity is short. */
int ork_eval_into(ork_context* ctx, const int32_t* tokens, int64_t n, int all, float* out,
                  uint64_t capacity);

/* ---- Sampling and generation ------------------------------------------------------------------ */

typedef struct ork_sampler_params {
  float temperature;     /* <= 0: greedy */
  int32_t top_k;         /* 0: off */
  float top_p;           /* 1: off */
  float min_p;           /* 0: off */
  float repeat_penalty;  /* 1: off */
  int32_t repeat_last_n;
  uint64_t seed;
} ork_sampler_params;
/* llama.cpp-like defaults: temperature 0.8, top_k 40, top_p 0.95, min_p 0.05, no penalty, seed 0. */
void ork_sampler_params_init(ork_sampler_params* p);
int ork_sampler_create(const ork_sampler_params* p, ork_sampler** out);
int ork_sampler_free(ork_sampler* s);
/* Picks a token from n_vocab logits and adds it to the sampler's history. */
int ork_sample(ork_sampler* s, const float* logits, int32_t n_vocab, int32_t* token);

/* Called with each generated token; return nonzero to stop. A call on the same context from inside
 * the callback returns ORK_ERR_INVALID_ARG (that context is busy with ork_generate); other contexts
 * and models may be used. */
typedef int (*ork_token_callback)(int32_t token, void* user);
/* Evaluates the prompt (the context must be empty), then samples and evaluates up to n_predict
 * tokens, stopping at an end-of-generation token or a full context. Writes at most `capacity` tokens
 * to out (may be NULL when capacity is 0); *n_out = tokens generated (all of them, even past
 * capacity — then ORK_ERR_BUFFER_TOO_SMALL is returned after generation). on_token may be NULL. */
int ork_generate(ork_context* ctx, ork_sampler* s, const int32_t* prompt, int64_t n_prompt,
                 int64_t n_predict, int32_t* out, int64_t capacity, int64_t* n_out,
                 ork_token_callback on_token, void* user);

/* ---- Speculative decoding (docs/speculative.md) ----------------------------------------------- */

typedef struct ork_speculative_options {
  ork_context* draft;  /* a context of the draft model (same vocabulary as the target's; its sequence
                        * is replaced), or NULL for prompt lookup (lookup_n > 0) */
  int32_t lookup_n;    /* draft == NULL: propose what followed the last n-gram (n <= lookup_n) earlier */
  int32_t draft_max;   /* K: tokens drafted per target pass, >= 1 */
  int32_t draft_min;   /* drafts shorter than this are not verified, in [0, draft_max] */
  float draft_p_min;   /* stop drafting at a draft probability below this, in [0, 1] */
} ork_speculative_options;
/* Defaults: no draft, lookup_n 0, draft_max 8, draft_min 0, draft_p_min 0. */
void ork_speculative_options_init(ork_speculative_options* o);

typedef struct ork_speculative_stats {
  int64_t target_passes;  /* target forward passes after the prompt's */
  int64_t drafted;        /* tokens proposed and verified */
  int64_t accepted;       /* of those, kept */
  int64_t generated;      /* tokens after the first (which the prompt's pass gives) */
  double draft_ms;        /* time drafting */
  double verify_ms;       /* time in the target's passes */
  uint64_t bytes_streamed; /* weight bytes the target's device streamed while decoding */
} ork_speculative_stats;

/* ork_generate with a draft: the draft proposes up to draft_max tokens, the target checks them in one
 * batched pass. Greedy samplers give exactly ork_generate's tokens; sampling keeps the target's
 * distribution. Same arguments, errors and stops as ork_generate; `ctx` is the target's context and
 * must not be opts->draft; a draft of another vocabulary is ORK_ERR_INVALID_ARG. stats may be NULL.
 * The draft context is busy for the whole call. */
int ork_generate_speculative(ork_context* ctx, ork_sampler* s, const ork_speculative_options* opts,
                             const int32_t* prompt, int64_t n_prompt, int64_t n_predict, int32_t* out,
                             int64_t capacity, int64_t* n_out, ork_token_callback on_token, void* user,
                             ork_speculative_stats* stats);

/* ---- Memory query ------------------------------------------------------------------------------ */

typedef struct ork_mem_domain {
  uint64_t weight_bytes;     /* device weight buffers of the model(s) queried */
  uint64_t internal_bytes;   /* device matmul scratch */
  uint64_t io_bytes;         /* imported caller memory (ork_mem) */
  uint64_t total_bytes;      /* the device's own count of mapped bytes in this domain (all users) */
  uint64_t peak_total_bytes;
} ork_mem_domain;

typedef struct ork_mem_info {
  /* The model (or the context's model). */
  uint64_t weight_bytes;          /* device-resident weights (cpu: the mapped GGUF tensor bytes) */
  uint64_t weight_shared_bytes;   /* weights served by share_weights_with's copy (not allocated) */
  uint32_t weights_shared;        /* how many weights that is */
  uint64_t internal_device_bytes; /* device matmul scratch this model uses */
  uint64_t internal_shared_saving;/* device bytes saved by a shared scratch (0 when not shared) */
  /* The context (all zero when the query names no context). */
  uint64_t kv_cache_bytes;
  uint64_t scratch_host_bytes;    /* activations of the largest batch so far */
  uint64_t internal_bytes;        /* internal_device_bytes + kv_cache_bytes + scratch_host_bytes */
  uint64_t io_bytes;              /* the context's own logits buffer (0 with caller memory) */
  uint64_t io_external_bytes;     /* caller memory set for logits (ork_context_set_logits) */
  /* The device (all users of it). */
  uint64_t total_dma_bytes;
  uint64_t peak_total_dma_bytes;
  uint64_t sram_bytes;            /* 0: SRAM is not used */
  uint32_t n_domains;             /* entries of domains[] that are meaningful */
  ork_mem_domain domains[ORK_MAX_DOMAINS];
  uint64_t weight_external_bytes; /* caller memory holding the weights (weight_mem_fds), imported */
  uint64_t internal_external_bytes; /* caller memory holding the device scratch (internal_mem_fds) */
  /* ork_query_plan: per domain, the bytes internal_mem_fds[d] must hold (0: that domain needs none).
   * Part of domains[d].internal_bytes (which adds the task arrays ork keeps). */
  uint64_t internal_mem_bytes[ORK_MAX_DOMAINS];
  /* Planned beside another model (share_scratch_with, e.g. a speculative draft loaded first): the
   * plan fills only what that model's weights leave of each domain's IOVA window. Per domain, that
   * model's device weight bytes (beside_weight_bytes) and the IOVA window bytes its weights take
   * (beside_window_bytes); domains[d].internal_bytes is then the one scratch both use. All zero
   * without share_scratch_with. ork_query_mem and ork_query_plan. */
  uint64_t beside_weight_bytes[ORK_MAX_DOMAINS];
  uint64_t beside_window_bytes[ORK_MAX_DOMAINS];
  uint64_t window_bytes;          /* the IOVA window of one domain of the device (0: cpu) */
} ork_mem_info;

/* Memory of a model, or of a context and its model: give one of model or ctx (the other NULL). */
int ork_query_mem(const ork_model* model, const ork_context* ctx, ork_mem_info* out);
/* What loading `path` with `opts` (NULL: defaults) would take, before loading it (nothing is
 * allocated on the device): the plan. Fills weight_bytes, internal_device_bytes, and for one context
 * of n_ctx tokens (0: the model's trained length, bounded by half the available memory)
 * kv_cache_bytes, scratch_host_bytes (a batch of 128 tokens) and internal_bytes; total_dma_bytes (the device bytes loading adds); n_domains = the
 * domains the plan uses, each with weight_bytes (resident plans; the size weight_mem_fds[d] must
 * have) and internal_bytes, and internal_mem_bytes[d] (the size internal_mem_fds[d] must have).
 * With share_weights_with (a loaded model) the plan is on that model's device and leaves out every
 * weight identical to one of its resident weights: weight_shared_bytes and weights_shared say what,
 * as ork_query_mem does after loading (this packs every weight, as loading does). With
 * share_scratch_with the plan is on that model's device: domains[d].internal_bytes is the shared
 * scratch after loading (grown to this model's need), total_dma_bytes counts only that growth, and
 * internal_shared_saving the scratch of its own this model does not allocate — as ork_query_mem
 * reports after loading. */
int ork_query_plan(const char* path, const ork_model_options* opts, int64_t n_ctx, ork_mem_info* out);

/* ---- Experts (mixture-of-experts models) ------------------------------------------------------ */

/* A struct that grows: its first field, struct_size, is set by the caller to the sizeof of the struct
 * as the caller's header declares it (ork_expert_info_init does). ork fills only the first
 * min(struct_size, its own sizeof) bytes and writes back that count, so a program built against an
 * older, shorter ork_expert_info keeps working when fields are appended, and a program built against
 * a newer one finds the fields an older ork does not know left as init set them (zero). Fields are
 * only ever appended. */
typedef enum ork_expert_placement {
  ORK_EXPERTS_NONE = 0,     /* a dense model: every other field is zero */
  ORK_EXPERTS_CPU = 1,      /* the CPU computes the experts from the GGUF mapping */
  ORK_EXPERTS_RESIDENT = 2, /* every expert resident on the device, in resident_domains IOMMU domains */
  ORK_EXPERTS_STREAMED = 3  /* the experts stream through the device weight budget (routed prefetch) */
} ork_expert_placement;

typedef struct ork_expert_info {
  uint32_t struct_size;       /* in: sizeof(ork_expert_info) as the caller knows it (>= 8); out: bytes filled */
  uint32_t placement;         /* ork_expert_placement */
  uint32_t n_moe_layers;      /* layers with routed experts */
  uint32_t n_expert;          /* routed experts per layer */
  uint32_t n_expert_used;     /* experts each token runs per layer */
  uint32_t resident_domains;  /* RESIDENT: the device domains the model's weights (experts included) use */
  uint64_t expert_bytes;      /* one expert (gate, up, down): device form on npu/sim, GGUF bytes on cpu */
  uint64_t experts_total;     /* n_moe_layers * n_expert */
  uint64_t experts_resident;  /* experts whose every slice is on the device now (RESIDENT: all; cpu: 0) */
  uint64_t experts_streamed;  /* STREAMED: experts_total (each comes and goes through the budget); else 0 */
  uint64_t expert_slot_bytes; /* STREAMED with expert-sized slots: the bytes of one slot (0: experts tiled) */
  uint32_t expert_slots;      /*   and how many the budget holds */
  uint32_t reserved;          /* zero */
  /* With a context (ctx given; else zero): what its forward passes computed. */
  uint64_t tokens_routed;     /* tokens the MoE layers routed, per layer */
  uint64_t expert_runs;       /* expert products run (each selected expert once per layer pass) */
  uint64_t expert_bytes_read; /* GGUF bytes of the experts that ran (only those; a shared expert included) */
} ork_expert_info;

/* Zeroes *info and sets struct_size = sizeof(ork_expert_info). */
void ork_expert_info_init(ork_expert_info* info);
/* The experts of a model, or of a context and its model: give one of model or ctx (the other NULL).
 * out->struct_size below 8: ORK_ERR_INVALID_ARG. */
int ork_query_experts(const ork_model* model, const ork_context* ctx, ork_expert_info* out);

/* ---- External memory (zero-copy I/O) ------------------------------------------------------------ */

/* Imports `size` bytes of the memory behind `fd` (a dma-buf; a memfd on the simulator) as device
 * memory of the model's device (domain 0). The caller keeps the fd and its memory; the import is
 * dropped by ork_mem_free. cpu models: the fd is mapped into the process. */
int ork_mem_import_fd(ork_model* model, int fd, uint64_t size, ork_mem** out);
/* The CPU address and size of imported memory. */
int ork_mem_info_get(const ork_mem* mem, void** host, uint64_t* size);
/* Fails with ORK_ERR_INVALID_ARG while a context still writes its logits there. */
int ork_mem_free(ork_mem* mem);
/* From now on ork_eval writes the last token's logits at byte `offset` of `mem` (which must hold
 * n_vocab floats there, else ORK_ERR_BUFFER_TOO_SMALL) with no copy. mem NULL: back to the
 * context's own buffer. */
int ork_context_set_logits(ork_context* ctx, ork_mem* mem, uint64_t offset);

/* ---- Input embeddings (zero-copy input) ---------------------------------------------------------- */

/* The model's input embeddings of n tokens (its token_embd rows, as f32): out [n][n_embd], capacity
 * floats (ORK_ERR_BUFFER_TOO_SMALL when short). Tokens outside the vocabulary: ORK_ERR_INVALID_ARG. */
int ork_embed_tokens(const ork_model* model, const int32_t* tokens, int64_t n, float* out, uint64_t capacity);
/* Like ork_eval, but from n_tokens input embeddings [n_tokens][n_embd] (f32, row-major) at byte
 * `offset` of `mem` instead of token ids. The forward pass reads them in place (no copy into ork's
 * buffers), so they must not change until the call returns. offset must be 4-byte aligned; when the
 * embeddings do not fit in mem past offset: ORK_ERR_BUFFER_TOO_SMALL. */
int ork_eval_embd(ork_context* ctx, const ork_mem* mem, uint64_t offset, int64_t n_tokens,
                  const float** logits);

#ifdef __cplusplus
}
#endif

#endif /* ORK_ORK_H */
