//===- Context.cpp - mla_context_create: checking and loading a spec
//-------===//
//
// The first half of the C API in mla/launcher.h: a spec descriptor is
// checked (every argument one the launcher binds, every grid word and
// cluster size known), its code found (embedded or beside the header) and
// loaded through the first backend that serves the chip, and its kernels
// resolved. Planning and launching are Launcher.cpp's.
//
//===----------------------------------------------------------------------===//
#include "Context.h"
#include "Internal.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

using namespace mla_launcher;

static bool isKnownArg(const char *name) {
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
static int dynamicDims(const mla_arg_desc &a) {
  int n = 0;
  for (int d = 0; d < a.rank; ++d)
    n += a.shape[d] < 0;
  return n;
}

static int expectedDynamicDims(const char *name) {
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
      // A box of the kv rows in the 128-byte swizzle (16-bit tiles) or the
      // 64-byte one (fp8 tiles), the last parameter; rank 3: that many
      // such boxes along a row at once (at most the row's).
      int elt = kvElementBytes(s);
      if (std::strcmp(a.name, "kv") || (a.rank != 2 && a.rank != 3) ||
          i != k.num_args - 1 || a.shape[0] < 1 || a.shape[0] > 256 ||
          elt == 0 || (a.shape[1] * elt != 128 && a.shape[1] * elt != 64) ||
          s.qk_dim % a.shape[1] != 0 ||
          (a.rank == 3 && (a.shape[2] < 1 || a.shape[2] > 256 ||
                           a.shape[2] * a.shape[1] > s.qk_dim)))
        return fail(MLA_ERROR_INVALID_SPEC,
                    "kernel '%s' argument %d: a tensor map must be the last "
                    "argument, over kv, with a box of 1 to 256 rows of 128 "
                    "or 64 bytes that divide the row (rank 3: and 1 to 256 "
                    "such boxes, at most a row's)",
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
    Kernel entry{&k, nullptr, {}};
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
