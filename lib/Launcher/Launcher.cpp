//===- Launcher.cpp - contexts, planning and argument packing -------------===//
//
// The backend-independent half of the C API in mla/launcher.h. Nothing here
// touches a device: a call either fails with a status and a message before
// any backend call (the argument checks are Validate.cpp's), or hands the
// backend finished launches.
//
//===----------------------------------------------------------------------===//
#include "Backend.h"
#include "Internal.h"
#include "mla/SplitCostModel.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

using namespace mla_launcher;

namespace {

constexpr size_t kWorkspaceAlign = 256;
size_t alignUp(size_t v, size_t a) { return (v + a - 1) / a * a; }
/// Query rows of `batch` sequences: batch x q_seq_len x heads.
size_t queryRows(const mla_spec_desc &s, int64_t batch) {
  return size_t(batch) * size_t(s.q_seq_len) * size_t(s.num_heads);
}

bool isKnownArg(const char *name) {
  static const char *const known[] = {
      "q",         "kv",         "kv_scale",      "qo_indptr",
      "kv_indptr", "num_splits", "partial",       "lse",
      "out",       "kv_indices", "cache_seqlens", "block_table",
      "kv_scales"};
  for (const char *k : known)
    if (std::strcmp(k, name) == 0)
      return true;
  return false;
}

/// Number of sizes an argument takes from the launch (its dynamic dims).
int dynamicDims(const mla_arg_desc &a) {
  int n = 0;
  for (int d = 0; d < a.rank; ++d)
    n += a.shape[d] < 0;
  return n;
}

int expectedDynamicDims(const char *name) {
  if (!std::strcmp(name, "partial") || !std::strcmp(name, "lse"))
    return 2; // batch, splits
  if (!std::strcmp(name, "block_table"))
    return 2; // batch, block_table_cols
  if (!std::strcmp(name, "kv_scales"))
    return 2; // kv_scales_rows, kv_scales_stride
  if (!std::strcmp(name, "kv_scale"))
    return 0;
  return 1; // rows of q / out / kv, batch + 1 of the indptrs
}

struct Kernel {
  const mla_kernel_desc *desc;
  void *fn;
  /// [n]: clusters of n programs the device holds at once (stage 1 with
  /// cluster_programs; n = 2 .. cluster_programs), else empty.
  std::vector<int64_t> clustersAtOnce;
};

} // namespace

struct mla_context {
  const mla_spec_desc *spec;
  const mla_target_desc *target;
  const mla_backend *backend;
  void *module = nullptr;
  std::vector<Kernel> stage1Masked, stage1MaskFree, stage2;
  int64_t concurrent = 1; // programs resident at once (split model)
};

/// The KV layout whose launch arguments bind argument `name` (-1: all).
static int layoutOf(const char *name) {
  if (!std::strcmp(name, "kv_indices"))
    return MLA_KV_TOKEN_INDICES;
  if (!std::strcmp(name, "cache_seqlens") || !std::strcmp(name, "block_table"))
    return MLA_KV_BLOCK_TABLE;
  if (!std::strcmp(name, "kv_indptr"))
    return -2; // every layout but the block table
  return -1;
}

/// Bytes of a kv element a tensor map can describe (0: none: packed mxfp4).
static int kvElementBytes(const mla_spec_desc &s) {
  const char *t = s.kv_type ? s.kv_type : "";
  if (!std::strcmp(t, "bf16") || !std::strcmp(t, "f16"))
    return 2;
  return std::strncmp(t, "f8", 2) ? 0 : 1;
}

/// Bytes of one KV row as stage 1 reads it: qk_dim elements, and for mxfp4
/// (two values a byte) one e8m0 scale per 32 values.
static int64_t kvRowBytes(const mla_spec_desc &s) {
  if (hasBlockScales(s))
    return s.qk_dim / 2 + s.qk_dim / 32;
  return int64_t(s.qk_dim) * std::max(1, kvElementBytes(s));
}

/// The kernel parameters of `k`'s arguments: a memref descriptor's 2
/// pointers, offset, sizes and strides, one each for the rest.
static int paramCount(const mla_kernel_desc &k) {
  int n = 0;
  for (int i = 0; i < k.num_args; ++i)
    n += k.args[i].kind == MLA_ARG_MEMREF ? 3 + 2 * k.args[i].rank : 1;
  return n;
}

/// Checks that the launcher knows how to bind every argument of `k`.
static mla_status checkKernel(const mla_spec_desc &s,
                              const mla_kernel_desc &k) {
  if (!k.name || k.num_args < 0 || (k.num_args && !k.args) ||
      k.block_threads <= 0 || k.shared_bytes < 0 ||
      (k.stage != 1 && k.stage != 2))
    return fail(MLA_ERROR_INVALID_SPEC, "kernel descriptor '%s' is malformed",
                k.name ? k.name : "(null)");
  for (int i = 0; i < k.num_args; ++i) {
    const mla_arg_desc &a = k.args[i];
    if (!a.name || !isKnownArg(a.name))
      return fail(
          MLA_ERROR_INVALID_SPEC,
          "kernel '%s' argument %d ('%s') is not one the launcher binds",
          k.name, i, a.name ? a.name : "(null)");
    int layout = layoutOf(a.name);
    if ((layout >= 0 && layout != s.kv_layout) ||
        (layout == -2 && s.kv_layout == MLA_KV_BLOCK_TABLE))
      return fail(MLA_ERROR_INVALID_SPEC,
                  "kernel '%s' argument '%s' does not belong to spec '%s''s KV "
                  "layout %d",
                  k.name, a.name, s.name, s.kv_layout);
    if (a.kind == MLA_ARG_MEMREF &&
        (a.rank < 1 || a.rank > MLA_MAX_RANK ||
         dynamicDims(a) != expectedDynamicDims(a.name)))
      return fail(MLA_ERROR_INVALID_SPEC,
                  "kernel '%s' argument '%s' has an unexpected shape", k.name,
                  a.name);
    if (a.kind == MLA_ARG_TENSOR_MAP) {
      // A box of the kv rows in the 128-byte swizzle, the last parameter.
      int elt = kvElementBytes(s);
      if (std::strcmp(a.name, "kv") || a.rank != 2 || i != k.num_args - 1 ||
          a.shape[0] < 1 || a.shape[0] > 256 || elt == 0 ||
          a.shape[1] * elt != 128 || s.qk_dim % a.shape[1] != 0)
        return fail(MLA_ERROR_INVALID_SPEC,
                    "kernel '%s' argument %d: a tensor map must be the last "
                    "argument, over kv, with a box of 1 to 256 rows of 128 "
                    "bytes that divide the row",
                    k.name, i);
      continue;
    }
    if (a.kind != MLA_ARG_MEMREF &&
        (a.kind != MLA_ARG_I64 || std::strcmp(a.name, "num_splits")))
      return fail(MLA_ERROR_INVALID_SPEC,
                  "kernel '%s' scalar argument '%s' is not num_splits : i64",
                  k.name, a.name);
  }
  for (int g : k.grid)
    if (g < MLA_GRID_ONE || g > MLA_GRID_BATCH_ROW_GROUPS)
      return fail(MLA_ERROR_INVALID_SPEC,
                  "kernel '%s' has an unknown grid dimension", k.name);
  if (k.cluster_programs < 0 || k.cluster_programs > 64 ||
      (k.cluster_programs && (k.stage != 1 || k.grid[1] != MLA_GRID_SPLITS)))
    return fail(MLA_ERROR_INVALID_SPEC,
                "kernel '%s' has cluster_programs %d (a stage-1 kernel whose "
                "grid y is the splits may have 0 to 64)",
                k.name, k.cluster_programs);
  return MLA_SUCCESS;
}

static bool readFile(const std::string &path, std::vector<unsigned char> &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  out.assign(std::istreambuf_iterator<char>(in),
             std::istreambuf_iterator<char>());
  return !out.empty();
}

extern "C" mla_status mla_context_create(const mla_spec_desc *spec,
                                         const char *chip, int device,
                                         const mla_backend *const *backends,
                                         mla_context **out) {
  if (!out)
    return fail(MLA_ERROR_INVALID_ARGUMENT, "the context out-pointer is NULL");
  *out = nullptr;
  if (!spec || !chip)
    return fail(MLA_ERROR_INVALID_ARGUMENT, "spec and chip must not be NULL");
  if (spec->abi_version != MLA_LAUNCHER_ABI_VERSION)
    return fail(
        MLA_ERROR_INVALID_SPEC,
        "spec '%s' was generated for launcher ABI %d; this launcher is ABI %d "
        "(regenerate the header with this mla-compile)",
        spec->name ? spec->name : "?", spec->abi_version,
        MLA_LAUNCHER_ABI_VERSION);
  if (device < 0)
    return fail(MLA_ERROR_INVALID_ARGUMENT, "device index %d is negative",
                device);
  if (spec->num_heads <= 0 || spec->v_dim <= 0 || spec->block_n <= 0 ||
      spec->q_seq_len <= 0 || spec->q_seq_len > 64 || spec->block_m <= 0 ||
      (spec->num_heads % spec->block_m != 0 &&
       (spec->block_m % spec->num_heads != 0 ||
        int64_t(spec->q_seq_len) * spec->num_heads % spec->block_m != 0)) ||
      spec->num_split_candidates <= 0 || !spec->split_candidates ||
      spec->kv_layout < MLA_KV_CONTIGUOUS ||
      spec->kv_layout > MLA_KV_BLOCK_TABLE || spec->page_size < 1 ||
      spec->page_size > 4096 || (spec->page_size & (spec->page_size - 1)) ||
      (spec->page_size > 1 && spec->kv_layout != MLA_KV_BLOCK_TABLE))
    return fail(MLA_ERROR_INVALID_SPEC, "spec '%s' is malformed", spec->name);
  for (int i = 0; i < spec->num_split_candidates; ++i)
    if (spec->split_candidates[i] < 1 || spec->split_candidates[i] > 65535)
      return fail(MLA_ERROR_INVALID_SPEC, "spec '%s' has split candidate %lld",
                  spec->name, (long long)spec->split_candidates[i]);
  if (spec->one_launch != 0 && spec->one_launch != 1)
    return fail(MLA_ERROR_INVALID_SPEC,
                "spec '%s' has one_launch %d (0 or 1 expected)", spec->name,
                spec->one_launch);

  const mla_target_desc *target = nullptr;
  std::string have;
  for (int i = 0; i < spec->num_targets; ++i) {
    have += (i ? ", " : "") + std::string(spec->targets[i].chip);
    if (!std::strcmp(spec->targets[i].chip, chip))
      target = &spec->targets[i];
  }
  if (!target)
    return fail(MLA_ERROR_NO_CODE_FOR_CHIP,
                "spec '%s' has no code for '%s' (it has: %s)", spec->name, chip,
                have.empty() ? "none" : have.c_str());

  const mla_backend *backend = nullptr;
  for (const mla_backend *const *b = backends; b && *b; ++b)
    if ((*b)->serves(chip)) {
      backend = *b;
      break;
    }
  if (!backend)
    return fail(
        MLA_ERROR_NO_BACKEND,
        "no backend for '%s' was linked in (link MLACompiler::launcher_%s)",
        chip, std::strncmp(chip, "sm_", 3) ? "hip" : "cuda");

  auto ctx = std::make_unique<mla_context>();
  ctx->spec = spec;
  ctx->target = target;
  ctx->backend = backend;
  int perCu = 0;
  for (int i = 0; i < target->num_kernels; ++i) {
    const mla_kernel_desc &k = target->kernels[i];
    if (mla_status s = checkKernel(*spec, k))
      return s;
    for (int a = 0; a < k.num_args; ++a)
      if (k.args[a].kind == MLA_ARG_TENSOR_MAP && !backend->hasTensorMaps())
        return fail(MLA_ERROR_INVALID_SPEC,
                    "kernel '%s' takes a tensor map, which the %s backend "
                    "does not build",
                    k.name, backend->name());
    Kernel entry{&k, nullptr};
    if (k.stage == 2) {
      ctx->stage2.push_back(entry);
      continue;
    }
    (k.mask_free ? ctx->stage1MaskFree : ctx->stage1Masked).push_back(entry);
    perCu = perCu ? std::min(perCu, k.programs_per_cu) : k.programs_per_cu;
  }
  if (ctx->stage1Masked.size() + ctx->stage1MaskFree.size() == 0)
    return fail(MLA_ERROR_INVALID_SPEC,
                "spec '%s' has no stage-1 kernel for '%s'", spec->name, chip);
  for (int i = 0; i < spec->num_split_candidates; ++i)
    if (spec->split_candidates[i] > 1 && ctx->stage2.empty())
      return fail(MLA_ERROR_INVALID_SPEC,
                  "spec '%s' may split but has no stage-2 kernel", spec->name);
  ctx->concurrent =
      std::max<int64_t>(1, int64_t(target->compute_units) * std::max(1, perCu));

  // The code: embedded, or the file beside the header ($MLA_CODE_DIR first).
  std::vector<unsigned char> file;
  const void *code = target->code;
  size_t size = target->code_size;
  if (!code) {
    std::string tried;
    const char *dirs[] = {std::getenv("MLA_CODE_DIR"), target->code_dir};
    for (const char *dir : dirs) {
      if (!dir || !target->code_file)
        continue;
      std::string path = std::string(dir) + "/" + target->code_file;
      tried += (tried.empty() ? "" : ", ") + path;
      if (readFile(path, file))
        break;
    }
    if (file.empty())
      return fail(MLA_ERROR_NO_CODE_FOR_CHIP,
                  "the code object for '%s' could not be read (tried: %s)",
                  chip, tried.empty() ? "no path" : tried.c_str());
    code = file.data();
    size = file.size();
  }
  std::string msg;
  if (mla_status s = backend->load(device, chip, code, size, &ctx->module, msg))
    return failWith(s, msg);
  for (auto *list : {&ctx->stage1Masked, &ctx->stage1MaskFree, &ctx->stage2})
    for (Kernel &k : *list) {
      if (mla_status s =
              backend->function(ctx->module, k.desc->name, k.desc->shared_bytes,
                                paramCount(*k.desc), &k.fn, msg)) {
        backend->unload(ctx->module);
        return failWith(s, msg);
      }
      // Asked once here, so that planning stays a host-only computation.
      if (k.desc->cluster_programs > 1) {
        k.clustersAtOnce.assign(k.desc->cluster_programs + 1, 0);
        for (int n = 2; n <= k.desc->cluster_programs; ++n)
          k.clustersAtOnce[n] = backend->clustersAtOnce(
              ctx->module, k.fn, unsigned(n), unsigned(k.desc->block_threads),
              unsigned(k.desc->shared_bytes));
      }
    }
  *out = ctx.release();
  return MLA_SUCCESS;
}

extern "C" void mla_context_destroy(mla_context *ctx) {
  if (!ctx)
    return;
  if (ctx->module)
    ctx->backend->unload(ctx->module);
  delete ctx;
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
              int(d.shape[1]), map, msg))
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
