//===- Launcher.cpp - planning, argument packing and launching -----------===//
//
// The backend-independent calls of the C API in mla/launcher.h on a created
// context (Context.cpp loads it): workspace size, plan, decode, run. Nothing
// here touches a device: a call either fails with a status and a message
// before any backend call (the argument checks are Validate.cpp's), or hands
// the backend finished launches.
//
//===----------------------------------------------------------------------===//
#include "Context.h"
#include "Internal.h"
#include "mla/SplitCostModel.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

using namespace mla_launcher;

namespace {

constexpr size_t kWorkspaceAlign = 256;
size_t alignUp(size_t v, size_t a) { return (v + a - 1) / a * a; }
/// Query rows of `batch` sequences: batch x q_seq_len x heads.
size_t queryRows(const mla_spec_desc &s, int64_t batch) {
  return size_t(batch) * size_t(s.q_seq_len) * size_t(s.num_heads);
}

} // namespace

/// Bytes of one KV row as stage 1 reads it: qk_dim elements, and for mxfp4
/// (two values a byte) one e8m0 scale per 32 values.
static int64_t kvRowBytes(const mla_spec_desc &s) {
  if (hasBlockScales(s))
    return s.qk_dim / 2 + s.qk_dim / 32;
  return int64_t(s.qk_dim) * std::max(1, kvElementBytes(s));
}

static int64_t chooseSplits(const mla_context &ctx, int64_t batch,
                            int64_t maxKvLen) {
  const mla_spec_desc &s = *ctx.spec;
  mlir::mla::SplitProblem p;
  p.batch = batch;
  p.groups = rowGroups(s);
  p.kvLen = maxKvLen;
  p.blockN = s.block_n;
  p.kvRowBytes = kvRowBytes(s);
  p.blockM = s.block_m;
  p.computeUnits = ctx.concurrent;
  p.candidates =
      llvm::ArrayRef<int64_t>(s.split_candidates, s.num_split_candidates);
  mlir::mla::SplitCostParams params;
  params.programOverhead = s.program_overhead;
  params.combineLaunch = s.combine_launch;
  params.combinePerPartial = s.combine_per_partial;
  params.combinePerSplit = s.combine_per_split;
  return mlir::mla::chooseSplits(p, params);
}

/// Bytes of the partial outputs in the workspace (the LSEs follow them).
static size_t partialBytes(const mla_spec_desc &s, int64_t batch,
                           int64_t splits) {
  return alignUp(queryRows(s, batch) * size_t(splits) * size_t(s.v_dim) *
                     sizeof(float),
                 kWorkspaceAlign);
}

static size_t workspaceBytes(const mla_spec_desc &s, int64_t batch,
                             int64_t splits) {
  if (splits <= 1)
    return 0; // one split: stage 1 writes the output directly
  return partialBytes(s, batch, splits) +
         alignUp(queryRows(s, batch) * size_t(splits) * sizeof(float),
                 kWorkspaceAlign);
}

extern "C" mla_status mla_workspace_size(const mla_context *ctx, int64_t batch,
                                         int64_t maxKvLen, size_t *bytes) {
  if (!ctx || !bytes)
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "context and bytes must not be NULL");
  if (mla_status s = checkSizes(batch, maxKvLen))
    return s;
  *bytes =
      workspaceBytes(*ctx->spec, batch, chooseSplits(*ctx, batch, maxKvLen));
  return MLA_SUCCESS;
}

/// The size of grid dimension `g` (mla_grid_dim) for a launch.
static int64_t gridDim(const mla_spec_desc &s, int g, int64_t batch,
                       int64_t splits) {
  switch (g) {
  case MLA_GRID_BATCH:
    return batch;
  case MLA_GRID_SPLITS:
    return splits;
  case MLA_GRID_HEADS:
    return s.num_heads;
  case MLA_GRID_ROWS:
    return int64_t(s.q_seq_len) * s.num_heads;
  case MLA_GRID_BATCH_ROW_GROUPS:
    return batch * rowGroups(s);
  default:
    return 1;
  }
}

/// mla_plan_decode, also handing back the kernels it chose.
static mla_status planDecode(const mla_context *ctx, const mla_decode_args *a,
                             mla_decode_plan *plan, const Kernel **stage1Out,
                             const Kernel **stage2Out) {
  if (!ctx || !a || !plan)
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "context, arguments and plan must not be NULL");
  if (mla_status st = validateArgs(*ctx->spec, a))
    return st;
  const mla_spec_desc &s = *ctx->spec;
  int64_t splits = a->num_splits;
  bool candidate =
      std::find(s.split_candidates, s.split_candidates + s.num_split_candidates,
                splits) != s.split_candidates + s.num_split_candidates;
  if (splits == 0)
    splits = chooseSplits(*ctx, a->batch, a->max_kv_len);
  else if (splits < 0 || splits > 65535)
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "num_splits is %lld; it must be 0 (the cost model chooses) or "
                "1 to 65535",
                (long long)splits);
  else if (ctx->stage1Masked.empty() && !candidate)
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "num_splits is %lld, which is not one of spec '%s''s split "
                "candidates (its "
                "only stage 1 is mask-free, proven for those counts)",
                (long long)splits, s.name);
  else if (splits > 1 && ctx->stage2.empty())
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "num_splits is %lld, but spec '%s' has no stage-2 kernel (it "
                "fixed splits = 1)",
                (long long)splits, s.name);
  size_t need = workspaceBytes(s, a->batch, splits);

  // The mask-free stage 1 needs every length to be a multiple of
  // splits * dispatch_kv_multiple; the launcher only believes a host copy.
  const Kernel *stage1 = nullptr;
  if (!ctx->stage1MaskFree.empty()) {
    const Kernel &mf = ctx->stage1MaskFree.front();
    int64_t multiple =
        splits * std::max<int64_t>(1, mf.desc->dispatch_kv_multiple);
    bool divides = false;
    if (mla_status st = hostLengthsDivide(s, a, multiple, &divides))
      return st;
    if (divides || ctx->stage1Masked.empty())
      stage1 = &mf;
    if (!divides && ctx->stage1Masked.empty() && lengthsHost(s, a))
      return fail(MLA_ERROR_INVALID_ARGUMENT,
                  "spec '%s' has only a mask-free stage 1, and a length is not "
                  "a multiple of %lld",
                  s.name, (long long)multiple);
  }
  if (!stage1)
    stage1 = &ctx->stage1Masked.front();
  plan->splits = splits;
  // The single launch for small batches, by the spec's one_launch or asked
  // for by the flags: each sequence's (row group's) splits one cluster that
  // combines them, where they fit one cluster and all the grid's clusters
  // fit on the device at once.
  plan->cluster_splits = 0;
  bool oneLaunch = (a->flags & MLA_DECODE_ONE_LAUNCH) ||
                   (s.one_launch && !(a->flags & MLA_DECODE_TWO_LAUNCHES));
  if (splits > 1 && oneLaunch &&
      splits < int64_t(stage1->clustersAtOnce.size()) &&
      gridDim(s, stage1->desc->grid[0], a->batch, splits) <=
          stage1->clustersAtOnce[splits])
    plan->cluster_splits = splits;
  const Kernel *stage2 =
      splits > 1 && !plan->cluster_splits ? &ctx->stage2.front() : nullptr;
  plan->stage1 = stage1->desc->name;
  plan->stage2 = stage2 ? stage2->desc->name : nullptr;
  *stage1Out = stage1;
  *stage2Out = stage2;
  plan->workspace_bytes = need;
  plan->batch = a->batch;
  plan->max_kv_len = a->max_kv_len;
  plan->mask_free = stage1->desc->mask_free;
  plan->context = ctx;
  clearError();
  return MLA_SUCCESS;
}

namespace {
/// Packs kernel arguments the way the lowered kernels take them: every
/// memref as (allocated ptr, aligned ptr, offset, sizes..., strides...),
/// all 8-byte fields.
struct ArgPacker {
  std::vector<unsigned char> bytes;
  ArgPacker() { bytes.reserve(512); }
  /// A 128-byte, 64-byte aligned parameter (a tensor map); its bytes.
  unsigned char *put128() {
    size_t at = alignUp(bytes.size(), 64);
    bytes.resize(at + 128);
    std::memset(bytes.data() + at, 0, 128);
    return bytes.data() + at;
  }
  void put64(uint64_t v) {
    size_t at = alignUp(bytes.size(), 8);
    bytes.resize(at + 8);
    std::memcpy(bytes.data() + at, &v, 8);
  }
  void memref(const void *p, const int64_t *sizes, int rank) {
    put64(reinterpret_cast<uintptr_t>(p));
    put64(reinterpret_cast<uintptr_t>(p));
    put64(0);
    for (int d = 0; d < rank; ++d)
      put64(uint64_t(sizes[d]));
    int64_t stride = 1;
    int64_t strides[MLA_MAX_RANK];
    for (int d = rank - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= sizes[d];
    }
    for (int d = 0; d < rank; ++d)
      put64(uint64_t(strides[d]));
  }
};
} // namespace

static mla_status launchKernel(mla_context &ctx, const Kernel &k,
                               const mla_decode_args &a, int64_t splits,
                               int64_t clusterSplits, void *stream) {
  const mla_spec_desc &s = *ctx.spec;
  void *partial = splits > 1 ? a.workspace : a.out; // unused with one split
  void *lse = splits > 1 ? static_cast<char *>(a.workspace) +
                               partialBytes(s, a.batch, splits)
                         : a.out;
  int64_t rows = a.batch * s.q_seq_len;
  ArgPacker pack;
  for (int i = 0; i < k.desc->num_args; ++i) {
    const mla_arg_desc &d = k.desc->args[i];
    std::string n = d.name;
    if (d.kind == MLA_ARG_I64) { // num_splits (checked at create)
      pack.put64(uint64_t(splits));
      continue;
    }
    if (d.kind == MLA_ARG_TENSOR_MAP) { // over kv (checked at create)
      unsigned char *map = pack.put128();
      // No rows: no program copies a tile (stage 1 clamps its ranges to
      // the cache's rows), and a map of none cannot be built.
      if (a.kv_rows == 0)
        continue;
      std::string msg;
      if (mla_status st = ctx.backend->tensorMap(
              a.kv, a.kv_rows, s.qk_dim, kvElementBytes(s), int(d.shape[0]),
              int(d.shape[1]), d.rank == 3 ? int(d.shape[2]) : 0, map, msg))
        return failWith(st, "kv's tensor map for " + std::string(k.desc->name) +
                                ": " + msg);
      continue;
    }
    // The launch-time sizes, in order of the dynamic dims.
    int64_t dyn[2] = {0, 0};
    const void *p = nullptr;
    if (n == "q")
      p = a.q, dyn[0] = rows;
    else if (n == "out")
      p = a.out, dyn[0] = rows;
    else if (n == "kv") // the kernels read no row from kv_rows on
      p = a.kv, dyn[0] = a.kv_rows;
    else if (n == "kv_scale")
      p = a.kv_scale;
    else if (n == "kv_scales") // its stride is the memref's row length
      p = a.kv_scales, dyn[0] = a.kv_scales_rows, dyn[1] = a.kv_scales_stride;
    else if (n == "qo_indptr")
      p = a.qo_indptr, dyn[0] = a.batch + 1;
    else if (n == "kv_indptr")
      p = a.kv_indptr, dyn[0] = a.batch + 1;
    else if (n == "kv_indices")
      p = a.kv_indices, dyn[0] = a.kv_indices_len;
    else if (n == "cache_seqlens")
      p = a.cache_seqlens, dyn[0] = a.batch;
    else if (n == "block_table")
      p = a.block_table, dyn[0] = a.batch, dyn[1] = a.block_table_cols;
    else if (n == "partial")
      p = partial, dyn[0] = a.batch, dyn[1] = splits;
    else if (n == "lse")
      p = lse, dyn[0] = a.batch, dyn[1] = splits;
    int64_t sizes[MLA_MAX_RANK];
    int next = 0;
    for (int dim = 0; dim < d.rank; ++dim)
      sizes[dim] = d.shape[dim] >= 0 ? d.shape[dim] : dyn[next++];
    pack.memref(p, sizes, d.rank);
  }
  auto dim = [&](int g) { return gridDim(s, g, a.batch, splits); };
  std::string msg;
  unsigned gx = unsigned(dim(k.desc->grid[0])),
           gy = unsigned(dim(k.desc->grid[1]));
  mla_status st =
      clusterSplits
          ? ctx.backend->launchClustered(
                ctx.module, k.fn, gx, gy, unsigned(clusterSplits),
                unsigned(k.desc->block_threads), unsigned(k.desc->shared_bytes),
                stream, pack.bytes.data(), pack.bytes.size(), msg)
          : ctx.backend->launch(
                ctx.module, k.fn, gx, gy, unsigned(k.desc->block_threads),
                unsigned(k.desc->shared_bytes), k.desc->dependent_launch != 0,
                stream, pack.bytes.data(), pack.bytes.size(), msg);
  if (st)
    return failWith(st, "launching " + std::string(k.desc->name) + ": " + msg);
  return MLA_SUCCESS;
}

extern "C" mla_status mla_plan_decode(const mla_context *ctx,
                                      const mla_decode_args *a,
                                      mla_decode_plan *plan) {
  const Kernel *stage1, *stage2;
  return planDecode(ctx, a, plan, &stage1, &stage2);
}

static mla_status launchPlan(mla_context &ctx, const Kernel &stage1,
                             const Kernel *stage2, const mla_decode_args &a,
                             int64_t splits, int64_t clusterSplits,
                             void *stream) {
  if (mla_status s =
          launchKernel(ctx, stage1, a, splits, clusterSplits, stream))
    return s;
  if (stage2)
    if (mla_status s = launchKernel(ctx, *stage2, a, splits, 0, stream))
      return s;
  return MLA_SUCCESS;
}

extern "C" mla_status mla_decode(mla_context *ctx, const mla_decode_args *a,
                                 void *stream) {
  mla_decode_plan plan;
  const Kernel *stage1, *stage2;
  if (mla_status s = planDecode(ctx, a, &plan, &stage1, &stage2))
    return s;
  if (mla_status s = checkWorkspace(a, plan.splits, plan.workspace_bytes))
    return s;
  return launchPlan(*ctx, *stage1, stage2, *a, plan.splits, plan.cluster_splits,
                    stream);
}

/// The context's kernel whose descriptor name is `name` (a plan's kernels
/// are the context's own strings).
static const Kernel *kernelNamed(const mla_context &ctx, const char *name) {
  for (auto *list : {&ctx.stage1Masked, &ctx.stage1MaskFree, &ctx.stage2})
    for (const Kernel &k : *list)
      if (k.desc->name == name)
        return &k;
  return nullptr;
}

extern "C" mla_status mla_decode_run(mla_context *ctx,
                                     const mla_decode_plan *plan,
                                     const mla_decode_args *a, void *stream) {
  if (!ctx || !plan || !a)
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "context, plan and arguments must not be NULL");
  if (plan->context != ctx)
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "the plan was made for another context");
  if (mla_status st = validateArgs(*ctx->spec, a))
    return st;
  if (a->batch != plan->batch || a->max_kv_len != plan->max_kv_len)
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "the plan was made for batch %lld, max_kv_len %lld; these "
                "arguments have "
                "batch %lld, max_kv_len %lld (plan again)",
                (long long)plan->batch, (long long)plan->max_kv_len,
                (long long)a->batch, (long long)a->max_kv_len);
  const Kernel *stage1 = kernelNamed(*ctx, plan->stage1);
  const Kernel *stage2 =
      plan->stage2 ? kernelNamed(*ctx, plan->stage2) : nullptr;
  if (!stage1 || (plan->stage2 && !stage2) ||
      (plan->splits > 1 && !plan->cluster_splits) != (stage2 != nullptr))
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "the plan does not name this context's kernels");
  if (plan->cluster_splits &&
      (plan->cluster_splits != plan->splits ||
       plan->cluster_splits >= int64_t(stage1->clustersAtOnce.size())))
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "the plan's cluster_splits %lld is not a cluster its stage 1 "
                "'%s' combines (plan again)",
                (long long)plan->cluster_splits, stage1->desc->name);
  if (mla_status st = checkWorkspace(a, plan->splits, plan->workspace_bytes))
    return st;
  if (plan->mask_free && !ctx->stage1Masked.empty()) {
    int64_t multiple =
        plan->splits * std::max<int64_t>(1, stage1->desc->dispatch_kv_multiple);
    bool divides = false;
    if (mla_status st = hostLengthsDivide(*ctx->spec, a, multiple, &divides))
      return st;
    if (lengthsHost(*ctx->spec, a) && !divides)
      return fail(MLA_ERROR_INVALID_ARGUMENT,
                  "the plan's mask-free stage 1 needs every length to be a "
                  "multiple of %lld; "
                  "%s has one that is not (plan again)",
                  (long long)multiple,
                  ctx->spec->kv_layout == MLA_KV_BLOCK_TABLE
                      ? "cache_seqlens_host"
                      : "kv_indptr_host");
  }
  clearError();
  return launchPlan(*ctx, *stage1, stage2, *a, plan->splits,
                    plan->cluster_splits, stream);
}
