/*===- mla/launcher.h - run mla-compile's decode kernels from C ----------===*
 *
 * The C API a project calls to run the code objects that
 * `mla-compile --emit=header` embeds, without knowing MLIR:
 *
 *   #include "deepseek_r1_decode_fp8.h"     // generated; includes this file
 *   mla_context *ctx;
 *   mla_status s = deepseek_r1_decode_fp8_create("gfx950", 0, &ctx);
 *   size_t ws;  mla_workspace_size(ctx, batch, max_kv_len, &ws);
 *   mla_decode_args a = {q, kv, kv_scale, qo_indptr, kv_indptr, out,
 *                        workspace, ws, batch, max_kv_len, NULL, 0,
 *                        kv_rows};
 *   s = mla_decode(ctx, &a, stream);        // hipStream_t or CUstream
 *   // or plan once per shape, run every step (new buffers, updated indptr):
 *   mla_decode_plan p;  mla_plan_decode(ctx, &a, &p);
 *   s = mla_decode_run(ctx, &p, &a, stream);
 *   mla_context_destroy(ctx);
 *
 * Every call returns a status; on failure nothing was launched and
 * mla_last_error() holds a sentence saying why (per thread). The launcher
 * applies the manifest's rules: the split count from the split cost model
 * (docs/Design.md), the mask-free stage 1 only when it can see that every
 * length is a multiple of splits x the kernel's dispatch multiple (pass a
 * host copy of kv_indptr for that; it never reads device memory and never
 * synchronises), stage 2 only with several splits (and, where the spec
 * says one_launch or the flags say MLA_DECODE_ONE_LAUNCH, only where stage 1
 * cannot combine them itself in one launch: cluster_splits). A plan
 * depends only on the batch, max_kv_len and (for the mask-free variant) the
 * host copy's lengths, never on device contents: mla_decode_run launches a
 * plan on new buffers or after kv_indptr changed without planning again.
 * docs/Embedding.md walks through it.
 *===----------------------------------------------------------------------===*/
#ifndef MLA_LAUNCHER_H
#define MLA_LAUNCHER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever the descriptor structs below change layout; generated
 * headers record the version they were written for. */
#define MLA_LAUNCHER_ABI_VERSION 11

/* C++ sees a fixed underlying type, so that any int a C caller passes
 * (mla_status_name(42)) is a value of the type, not undefined behaviour. */
#ifdef __cplusplus
typedef enum mla_status : int {
#else
typedef enum mla_status {
#endif
  MLA_SUCCESS = 0,
  MLA_ERROR_INVALID_ARGUMENT = 1, /* null pointer, zero/negative size */
  MLA_ERROR_MISALIGNED = 2,       /* a pointer below its required alignment */
  MLA_ERROR_WORKSPACE_TOO_SMALL = 3,
  MLA_ERROR_NO_CODE_FOR_CHIP = 4, /* the header holds no code for the chip */
  MLA_ERROR_NO_BACKEND = 5,       /* HIP / CUDA backend not linked in */
  MLA_ERROR_NO_DEVICE = 6,        /* no such device (or no driver) */
  MLA_ERROR_CHIP_MISMATCH = 7,    /* the device is another chip */
  MLA_ERROR_INVALID_SPEC = 8,     /* descriptor this launcher cannot run */
  MLA_ERROR_DRIVER = 9            /* the HIP / CUDA driver refused */
} mla_status;

/* "MLA_SUCCESS", "MLA_ERROR_MISALIGNED", ... */
const char *mla_status_name(mla_status status);
/* Why the calling thread's latest failing call failed ("" if none). */
const char *mla_last_error(void);

/* ---- Descriptors, written by mla-compile --emit=header ----------------- */

typedef enum mla_arg_kind {
  MLA_ARG_MEMREF =
      0, /* memref descriptor: 2 pointers, offset, sizes, strides */
  MLA_ARG_I64 = 1,
  MLA_ARG_F32 = 2,
  /* ABI 10: a TMA tensor map over the named buffer (kv), 128 bytes by value
     (64-byte aligned), built by the launcher per call; shape = the box
     {rows, columns}, swizzled over a box row (columns x element bytes =
     128 or 64). Rank 3 (same ABI; a launcher before it refuses the spec):
     {rows, columns, boxes}, a 3-D map whose one copy takes `boxes` such
     boxes along a row, one after another in shared memory. The kernel's
     last parameter; CUDA backends only. */
  MLA_ARG_TENSOR_MAP = 3
} mla_arg_kind;

/* Grid dimensions of a kernel, in the manifest's words. */
typedef enum mla_grid_dim {
  MLA_GRID_ONE = 0,
  MLA_GRID_BATCH = 1,
  MLA_GRID_SPLITS = 2,
  MLA_GRID_HEADS = 3,
  MLA_GRID_ROWS = 4,            /* q_seq_len x num_heads query rows */
  MLA_GRID_BATCH_ROW_GROUPS = 5 /* batch x q_seq_len x num_heads / block_m */
} mla_grid_dim;

#define MLA_MAX_RANK 4

/* Where a sequence's KV tokens are in kv (ABI 7; the spec's kv_layout). */
typedef enum mla_kv_layout {
  MLA_KV_CONTIGUOUS = 0,    /* rows kv_indptr[b] .. kv_indptr[b+1] - 1 */
  MLA_KV_TOKEN_INDICES = 1, /* rows kv_indices[kv_indptr[b] ..
                               kv_indptr[b+1] - 1] (page size 1) */
  MLA_KV_BLOCK_TABLE = 2    /* cache_seqlens[b] tokens, token t in row
                               block_table[b][t / page_size] * page_size
                               + t % page_size */
} mla_kv_layout;

typedef struct mla_arg_desc {
  const char *name; /* q, kv, kv_scale, qo_indptr, kv_indptr, num_splits,
                       partial, lse, out; paged KV (ABI 7): kv_indices,
                       cache_seqlens, block_table */
  int kind;         /* mla_arg_kind */
  int rank;
  int64_t shape[MLA_MAX_RANK]; /* -1: given at launch */
} mla_arg_desc;

typedef struct mla_kernel_desc {
  const char *name;
  int stage;                    /* 1 or 2 */
  int mask_free;                /* stage 1: no per-token masks */
  int64_t dispatch_kv_multiple; /* mask-free: lengths % (splits * this) == 0 */
  int grid[2];                  /* mla_grid_dim of x and y */
  int block_threads;
  int shared_bytes;     /* dynamic shared memory / LDS per block */
  int programs_per_cu;  /* resident programs per CU / SM */
  int dependent_launch; /* may start while the kernel before it ends
                           (CUDA programmatic dependent launch); it
                           waits for that kernel's stores itself (ABI 4) */
  int cluster_programs; /* stage 1 (ABI 9): combines up to this many splits
                           itself when they run as one thread-block
                           cluster (0: never); stage 2 is then not run */
  int num_args;
  const mla_arg_desc *args;
} mla_kernel_desc;

typedef struct mla_target_desc {
  const char *chip;          /* "gfx950", "gfx942", "sm_90" */
  const unsigned char *code; /* embedded code object, or NULL ... */
  size_t code_size;
  const char *code_file; /* ... its file name (--embed=no) */
  const char *code_dir;  /* where mla-compile wrote it */
  int compute_units;
  int num_kernels;
  const mla_kernel_desc *kernels;
} mla_target_desc;

typedef struct mla_spec_desc {
  int abi_version; /* MLA_LAUNCHER_ABI_VERSION */
  const char *name;
  int num_heads, qk_dim, v_dim, block_n, q_seq_len;
  int block_m;   /* query rows per stage-1 program (ABI 6): divides num_heads,
                    or is whole tokens dividing q_seq_len x num_heads */
  int kv_layout; /* mla_kv_layout (ABI 7) */
  int page_size; /* rows per page: 1, or a power of two with a block table */
  double softmax_scale;                    /* applied to Q.K^T (before exp) */
  const char *q_type, *kv_type, *out_type; /* MLIR names: bf16, f8E4M3FN, ... */
  int has_kv_scale;                        /* one f32 per-tensor KV scale */
  int num_split_candidates;
  const int64_t *split_candidates;
  double program_overhead, combine_launch, combine_per_partial,
      combine_per_split;
  int num_targets;
  const mla_target_desc *targets;
  int one_launch; /* ABI 11: the spec's one_launch: plans take the single
                     launch (cluster_splits) where they can unless the
                     flags say MLA_DECODE_TWO_LAUNCHES */
} mla_spec_desc;

/* ---- Running ----------------------------------------------------------- */

typedef struct mla_backend mla_backend;
typedef struct mla_context mla_context;

/* Backends: HIP (module API, gfx*) and CUDA (driver API, sm_*). Each lives
 * in its own library (MLACompiler::launcher_hip / launcher_cuda), which
 * defines MLA_WITH_HIP / MLA_WITH_CUDA for generated headers. */
const mla_backend *mla_backend_hip(void);
const mla_backend *mla_backend_cuda(void);

/* Loads the spec's code for `chip` on `device` through the first of the
 * NULL-terminated `backends` that serves the chip. */
mla_status mla_context_create(const mla_spec_desc *spec, const char *chip,
                              int device, const mla_backend *const *backends,
                              mla_context **out);
void mla_context_destroy(mla_context *ctx);

typedef struct mla_decode_args {
  const void *q;         /* [batch * q_seq_len, heads, qk_dim], 16-B aligned */
  const void *kv;        /* [kv_rows, qk_dim]; sequence b is rows
                            kv_indptr[b] .. kv_indptr[b+1]; 16-B aligned */
  const float *kv_scale; /* one float (specs with a KV scale), else NULL */
  /* (mxfp4 KV, kv_type f4E2M1FN: kv rows are qk_dim / 2 bytes of e2m1
     pairs, low nibble first; the e8m0 block scales are kv_scales, ABI 8) */
  const int32_t *qo_indptr; /* [batch + 1] */
  const int32_t *kv_indptr; /* [batch + 1] */
  void *out;       /* [batch * q_seq_len, heads, v_dim], 16-B aligned */
  void *workspace; /* mla_workspace_size() bytes, 16-B aligned */
  size_t workspace_bytes;
  int64_t batch;                 /* > 0 */
  int64_t max_kv_len;            /* >= every sequence's length (0 allowed) */
  const int32_t *kv_indptr_host; /* optional host copy of kv_indptr */
  int64_t num_splits;            /* 0: the split cost model chooses (the rule);
                                    else this count, for tuning and tests (ABI 4):
                                    1 to 65535, one of the split candidates when
                                    the spec has only a mask-free stage 1; the
                                    plan's workspace_bytes
                                    then says the workspace it needs.
                                    mla_decode_run uses its plan's count */
  /* ABI 5. */
  int64_t kv_rows; /* rows kv holds (>= 0). The kernels read no row past it
                      whatever kv_indptr holds: a sequence whose range is not
                      0 <= kv_indptr[b] <= kv_indptr[b+1] <= kv_rows gives
                      the output of a zero-length one (zeros), and one whose
                      qo_indptr[b] is not a row of q / out writes nothing */
  const int32_t *qo_indptr_host; /* optional host copy of qo_indptr */
  uint32_t flags;                /* MLA_DECODE_* bits below */
  /* ABI 7: paged KV, for specs whose kv_layout is not contiguous (NULL / 0
     otherwise). kv is then the whole cache, kv_rows rows (a block table's
     cache [num_pages, page_size, 576] is num_pages x page_size rows). No
     table content makes a kernel read outside kv: a token whose entry names
     no row of it reads as zeros (MLA_DECODE_VALIDATE refuses such a table
     instead), and a length the table cannot hold runs as zero. */
  const int32_t *kv_indices;    /* MLA_KV_TOKEN_INDICES: kv_indices_len rows of
                                   kv; kv_indptr indexes this list */
  int64_t kv_indices_len;       /* >= 0 */
  const int32_t *block_table;   /* MLA_KV_BLOCK_TABLE: [batch,
                                   block_table_cols] pages of kv (row-major) */
  int64_t block_table_cols;     /* >= 0: pages a sequence may use */
  const int32_t *cache_seqlens; /* MLA_KV_BLOCK_TABLE: [batch] lengths, in
                                   place of kv_indptr (which may be NULL) */
  const int32_t *cache_seqlens_host; /* optional host copy (the mask-free
                                        dispatch and validation read it) */
  const int32_t *page_table_host;    /* MLA_DECODE_VALIDATE with paged KV: a
                                        host copy of kv_indices or block_table */
  /* ABI 8: mxfp4 KV (spec kv_type "f4E2M1FN"; NULL / 0 otherwise): one e8m0
     byte per block of 32 values of each kv row, row r's at
     kv_scales[r * kv_scales_stride + block]. The stride is the array's own
     (quantisers pad it): at least qk_dim / 32. A sequence whose rows reach
     past kv_scales_rows runs as zero-length, as one past kv_rows does. */
  const uint8_t *kv_scales;
  int64_t kv_scales_rows;   /* >= 0: rows kv_scales holds */
  int64_t kv_scales_stride; /* bytes from one row's scales to the next's */
} mla_decode_args;

/* flags: check the indptr contents on the host before launching, and
 * refuse (MLA_ERROR_INVALID_ARGUMENT, naming the entry) what the kernels
 * would otherwise answer with zeros or no write: needs kv_indptr_host and
 * qo_indptr_host, which must be copies of the device arrays. kv_indptr
 * must rise from >= 0 to <= kv_rows with every length <= max_kv_len, and
 * qo_indptr[b + 1] - qo_indptr[b] must be q_seq_len, from >= 0 to
 * <= batch * q_seq_len. Paged KV (ABI 7) also needs page_table_host:
 * token_indices' kv_indptr ends at <= kv_indices_len and every listed
 * index is a row of kv; a block table's cache_seqlens_host (instead of
 * kv_indptr_host) holds lengths in [0, min(max_kv_len, block_table_cols x
 * page_size)] and every page a sequence uses lies wholly in kv. */
#define MLA_DECODE_VALIDATE 1u
/* flags (ABI 9), at planning: the single launch for small batches. Where
 * stage 1 combines its splits itself (cluster_programs) and the grid's
 * clusters fit on the device at once, the plan launches stage 1 alone as
 * one cluster per sequence (cluster_splits) instead of stage 1 + stage 2.
 * Without either flag the spec decides (mla_spec_desc::one_launch, from the
 * spec's `one_launch` attribute): on the H200 one launch pays for bf16 on
 * sm_90a and not for fp8 (docs/PerformanceLog.md, "one launch for bf16
 * sm_90a's small batches"). MLA_DECODE_ONE_LAUNCH asks for it whatever the spec
 * says, MLA_DECODE_TWO_LAUNCHES (ABI 11) refuses it; not both. */
#define MLA_DECODE_ONE_LAUNCH 2u
#define MLA_DECODE_TWO_LAUNCHES 4u

/* What mla_decode will launch for these arguments. */
typedef struct mla_decode_plan {
  int64_t splits;
  const char *stage1;     /* kernel name */
  const char *stage2;     /* NULL when splits == 1, or when stage 1 combines
                             its splits itself (cluster_splits) */
  size_t workspace_bytes; /* needed */
  /* What the plan was made for (since ABI 3); mla_decode_run checks them. */
  int64_t batch, max_kv_len;
  int mask_free; /* stage 1 is the mask-free kernel */
  const mla_context *context;
  /* ABI 9: the single launch for small batches. > 0: stage 1 runs each
     sequence's (row group's) splits as one thread-block cluster of this
     many programs, which combine them; stage 2 is not launched. Chosen
     by the spec's one_launch or flags MLA_DECODE_ONE_LAUNCH (never with
     MLA_DECODE_TWO_LAUNCHES) when the splits fit one cluster
     (kernel cluster_programs) and all the grid's clusters fit on the
     device at once. */
  int64_t cluster_splits;
} mla_decode_plan;

/* Workspace for a batch whose longest sequence has max_kv_len tokens. */
mla_status mla_workspace_size(const mla_context *ctx, int64_t batch,
                              int64_t max_kv_len, size_t *bytes);
/* Validates the arguments and fills `plan`; launches nothing. The workspace
 * is not needed yet: plan->workspace_bytes says how much mla_decode_run
 * will need (allocate it, then run). */
mla_status mla_plan_decode(const mla_context *ctx, const mla_decode_args *args,
                           mla_decode_plan *plan);
/* Validates, plans and launches stage 1 (and stage 2) on `stream`. */
mla_status mla_decode(mla_context *ctx, const mla_decode_args *args,
                      void *stream);
/* Launches `plan` (from mla_plan_decode on this context) for `args`, which
 * may hold other buffers and other kv_indptr contents than the planning
 * call's but must have its batch and max_kv_len. Validates the pointers and
 * the workspace; does not plan again. A mask-free plan needs lengths that
 * still divide: when args->kv_indptr_host is given it is checked. */
mla_status mla_decode_run(mla_context *ctx, const mla_decode_plan *plan,
                          const mla_decode_args *args, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* MLA_LAUNCHER_H */
