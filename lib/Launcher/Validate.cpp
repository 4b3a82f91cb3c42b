//===- Validate.cpp - the launcher's errors and argument checks -----------===//
//
// Every refusal of mla/launcher.h's calls is a status and a sentence
// (mla_last_error(), per thread). The checks on a call's arguments live
// here; Launcher.cpp calls them before it plans or launches anything.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

using namespace mla_launcher;

namespace {
thread_local std::string lastError;
} // namespace

mla_status mla_launcher::fail(mla_status s, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  lastError = std::string(mla_status_name(s)) + ": " + buf;
  return s;
}

mla_status mla_launcher::failWith(mla_status s, const std::string &msg) {
  lastError = std::string(mla_status_name(s)) + ": " + msg;
  return s;
}

void mla_launcher::clearError() { lastError.clear(); }

extern "C" const char *mla_status_name(mla_status s) {
  switch (s) {
  case MLA_SUCCESS:
    return "MLA_SUCCESS";
  case MLA_ERROR_INVALID_ARGUMENT:
    return "MLA_ERROR_INVALID_ARGUMENT";
  case MLA_ERROR_MISALIGNED:
    return "MLA_ERROR_MISALIGNED";
  case MLA_ERROR_WORKSPACE_TOO_SMALL:
    return "MLA_ERROR_WORKSPACE_TOO_SMALL";
  case MLA_ERROR_NO_CODE_FOR_CHIP:
    return "MLA_ERROR_NO_CODE_FOR_CHIP";
  case MLA_ERROR_NO_BACKEND:
    return "MLA_ERROR_NO_BACKEND";
  case MLA_ERROR_NO_DEVICE:
    return "MLA_ERROR_NO_DEVICE";
  case MLA_ERROR_CHIP_MISMATCH:
    return "MLA_ERROR_CHIP_MISMATCH";
  case MLA_ERROR_INVALID_SPEC:
    return "MLA_ERROR_INVALID_SPEC";
  case MLA_ERROR_DRIVER:
    return "MLA_ERROR_DRIVER";
  }
  return "MLA_ERROR_UNKNOWN";
}

extern "C" const char *mla_last_error(void) { return lastError.c_str(); }

mla_status mla_launcher::checkSizes(int64_t batch, int64_t maxKvLen) {
  if (batch <= 0)
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "batch is %lld; it must be positive", (long long)batch);
  if (batch > (int64_t(1) << 31) - 1)
    return fail(MLA_ERROR_INVALID_ARGUMENT, "batch %lld exceeds the grid limit",
                (long long)batch);
  if (maxKvLen < 0)
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "max_kv_len is %lld; it must not be negative",
                (long long)maxKvLen);
  if (maxKvLen > (int64_t(1) << 31) - 1)
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "max_kv_len %lld exceeds int32 indptr range",
                (long long)maxKvLen);
  return MLA_SUCCESS;
}

static bool aligned(const void *p, size_t a) {
  return reinterpret_cast<uintptr_t>(p) % a == 0;
}

/// MLA_DECODE_VALIDATE, the rule every layout shares: qo_indptr (host
/// copy) in steps of q_seq_len from >= 0 to <= batch x q_seq_len.
static mla_status validateQoIndptr(const mla_spec_desc &s,
                                   const mla_decode_args *a) {
  const int32_t *qo = a->qo_indptr_host;
  if (qo[0] < 0)
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "qo_indptr[0] is %d; it must be >= 0", qo[0]);
  for (int64_t b = 0; b < a->batch; ++b)
    if (int64_t(qo[b + 1]) - qo[b] != s.q_seq_len)
      return fail(MLA_ERROR_INVALID_ARGUMENT,
                  "qo_indptr gives sequence %lld %lld query rows (%d to %d); "
                  "spec '%s' has q_seq_len %d",
                  (long long)b, (long long)(int64_t(qo[b + 1]) - qo[b]), qo[b],
                  qo[b + 1], s.name, s.q_seq_len);
  if (int64_t(qo[a->batch]) > a->batch * s.q_seq_len)
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "qo_indptr[%lld] is %d, past q's %lld rows (batch x q_seq_len)",
                (long long)a->batch, qo[a->batch],
                (long long)(a->batch * s.q_seq_len));
  return MLA_SUCCESS;
}

/// MLA_DECODE_VALIDATE for a block table: lengths from cache_seqlens_host,
/// every page a sequence uses wholly inside kv.
static mla_status validateBlockTable(const mla_spec_desc &s,
                                     const mla_decode_args *a) {
  const int32_t *len = a->cache_seqlens_host, *table = a->page_table_host;
  int64_t capacity = a->block_table_cols * int64_t(s.page_size);
  int64_t pages = a->kv_rows / s.page_size;
  for (int64_t b = 0; b < a->batch; ++b) {
    if (len[b] < 0 || len[b] > a->max_kv_len || len[b] > capacity)
      return fail(MLA_ERROR_INVALID_ARGUMENT,
                  "cache_seqlens[%lld] is %d; it must be in [0, %lld] "
                  "(max_kv_len %lld, block_table_cols x page_size %lld)",
                  (long long)b, len[b],
                  (long long)std::min<int64_t>(a->max_kv_len, capacity),
                  (long long)a->max_kv_len, (long long)capacity);
    int64_t used = (int64_t(len[b]) + s.page_size - 1) / s.page_size;
    for (int64_t j = 0; j < used; ++j) {
      int32_t e = table[b * a->block_table_cols + j];
      if (e < 0 || e >= pages)
        return fail(MLA_ERROR_INVALID_ARGUMENT,
                    "block_table[%lld][%lld] is %d, not a page of kv (%lld "
                    "pages of %d rows)",
                    (long long)b, (long long)j, e, (long long)pages,
                    s.page_size);
    }
  }
  return MLA_SUCCESS;
}

/// MLA_DECODE_VALIDATE for kv_indptr: rising from >= 0, every length <=
/// max_kv_len, ending inside kv (contiguous) or inside kv_indices, whose
/// listed rows must be rows of kv (token list).
static mla_status validateKvIndptr(const mla_spec_desc &s,
                                   const mla_decode_args *a) {
  const int32_t *kv = a->kv_indptr_host;
  bool indices = s.kv_layout == MLA_KV_TOKEN_INDICES;
  if (kv[0] < 0)
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "kv_indptr[0] is %d; it must be >= 0", kv[0]);
  for (int64_t b = 0; b < a->batch; ++b) {
    int64_t len = int64_t(kv[b + 1]) - kv[b];
    if (len < 0)
      return fail(MLA_ERROR_INVALID_ARGUMENT,
                  "kv_indptr decreases at sequence %lld (%d then %d)",
                  (long long)b, kv[b], kv[b + 1]);
    if (len > a->max_kv_len)
      return fail(MLA_ERROR_INVALID_ARGUMENT,
                  "kv_indptr gives sequence %lld length %lld; max_kv_len is "
                  "%lld",
                  (long long)b, (long long)len, (long long)a->max_kv_len);
  }
  int64_t kvEnd = indices ? a->kv_indices_len : a->kv_rows;
  if (kv[a->batch] > kvEnd)
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "kv_indptr[%lld] is %d, past %s = %lld", (long long)a->batch,
                kv[a->batch], indices ? "kv_indices_len" : "kv_rows",
                (long long)kvEnd);
  if (indices)
    for (int64_t i = kv[0]; i < kv[a->batch]; ++i)
      if (a->page_table_host[i] < 0 || a->page_table_host[i] >= a->kv_rows)
        return fail(MLA_ERROR_INVALID_ARGUMENT,
                    "kv_indices[%lld] is %d, not a row of kv (kv_rows = %lld)",
                    (long long)i, a->page_table_host[i], (long long)a->kv_rows);
  return MLA_SUCCESS;
}

/// MLA_DECODE_VALIDATE: the host copies' contents, entry by entry, against
/// what the kernels would otherwise guard (mla/launcher.h).
static mla_status validateIndptrs(const mla_spec_desc &s,
                                  const mla_decode_args *a) {
  bool table = s.kv_layout == MLA_KV_BLOCK_TABLE;
  bool indices = s.kv_layout == MLA_KV_TOKEN_INDICES;
  const char *missing = !a->qo_indptr_host                ? "qo_indptr_host"
                        : table && !a->cache_seqlens_host ? "cache_seqlens_host"
                        : !table && !a->kv_indptr_host    ? "kv_indptr_host"
                        : (table || indices) && !a->page_table_host
                            ? "page_table_host"
                            : nullptr;
  if (missing)
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "flags has MLA_DECODE_VALIDATE but %s is NULL; validation "
                "reads host copies of qo_indptr and of %s",
                missing,
                table     ? "cache_seqlens and block_table"
                : indices ? "kv_indptr and kv_indices"
                          : "kv_indptr");
  if (mla_status st = table ? validateBlockTable(s, a) : validateKvIndptr(s, a))
    return st;
  return validateQoIndptr(s, a);
}

/// The checks on a call's buffers and sizes, shared by planning and running.
mla_status mla_launcher::validateArgs(const mla_spec_desc &s,
                                      const mla_decode_args *a) {
  // Pointers the spec's layout does not use stand in as &s (non-NULL,
  // aligned): they are not checked.
  bool table = s.kv_layout == MLA_KV_BLOCK_TABLE;
  bool indices = s.kv_layout == MLA_KV_TOKEN_INDICES;
  bool mxfp4 = hasBlockScales(s);
  auto used = [&](bool use, const void *p) { return use ? p : &s; };
  struct {
    const char *name;
    const void *ptr;
    size_t align;
  } ptrs[] = {{"q", a->q, 16},
              {"kv", a->kv, 16},
              {"kv_scale", used(s.has_kv_scale, a->kv_scale), 4},
              {"kv_scales", used(mxfp4, a->kv_scales), 1},
              {"qo_indptr", a->qo_indptr, 4},
              {"kv_indptr", used(!table, a->kv_indptr), 4},
              {"kv_indices", used(indices, a->kv_indices), 4},
              {"block_table", used(table, a->block_table), 4},
              {"cache_seqlens", used(table, a->cache_seqlens), 4},
              {"out", a->out, 16}};
  for (auto &p : ptrs)
    if (!p.ptr)
      return fail(MLA_ERROR_INVALID_ARGUMENT, "%s is NULL", p.name);
  if (mla_status st = checkSizes(a->batch, a->max_kv_len))
    return st;
  // Stage 1 runs batch x (q_seq_len x heads / block_m) programs along x.
  int64_t groups = rowGroups(s);
  if (a->batch > ((int64_t(1) << 31) - 1) / groups)
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "batch %lld x %lld row groups per sequence exceeds the grid "
                "limit",
                (long long)a->batch, (long long)groups);
  for (auto &p : ptrs)
    if (!aligned(p.ptr, p.align))
      return fail(MLA_ERROR_MISALIGNED, "%s (%p) is not %zu-byte aligned",
                  p.name, p.ptr, p.align);
  if (a->kv_rows < 0)
    return fail(
        MLA_ERROR_INVALID_ARGUMENT,
        "kv_rows is %lld; it must be the number of rows kv holds (>= 0)",
        (long long)a->kv_rows);
  // int32 indptrs address no row past INT32_MAX, and the descriptor's
  // strides (kv_rows x qk_dim) must fit in 64 bits (found by
  // mla-fuzz-launcher).
  if (a->kv_rows > INT32_MAX)
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "kv_rows %lld exceeds the int32 indptr range",
                (long long)a->kv_rows);
  if (indices && (a->kv_indices_len < 0 || a->kv_indices_len > INT32_MAX))
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "kv_indices_len is %lld; it must be in [0, INT32_MAX]",
                (long long)a->kv_indices_len);
  if (table && (a->block_table_cols < 0 || a->block_table_cols > INT32_MAX ||
                a->block_table_cols > INT64_MAX / a->batch))
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "block_table_cols is %lld; it must be in [0, INT32_MAX] with "
                "batch x block_table_cols entries addressable",
                (long long)a->block_table_cols);
  if (mxfp4 && (a->kv_scales_rows < 0 || a->kv_scales_rows > INT32_MAX))
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "kv_scales_rows is %lld; it must be the number of rows "
                "kv_scales holds, in [0, INT32_MAX]",
                (long long)a->kv_scales_rows);
  if (mxfp4 &&
      (a->kv_scales_stride < s.qk_dim / 32 || a->kv_scales_stride > INT32_MAX))
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "kv_scales_stride is %lld; a row holds %d e8m0 scales (qk_dim "
                "%d / 32), so it must be in [%d, INT32_MAX]",
                (long long)a->kv_scales_stride, s.qk_dim / 32, s.qk_dim,
                s.qk_dim / 32);
  if (a->flags &
      ~(MLA_DECODE_VALIDATE | MLA_DECODE_ONE_LAUNCH | MLA_DECODE_TWO_LAUNCHES))
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "flags is 0x%x; only MLA_DECODE_VALIDATE (0x1), "
                "MLA_DECODE_ONE_LAUNCH (0x2) and MLA_DECODE_TWO_LAUNCHES "
                "(0x4) are defined",
                a->flags);
  if ((a->flags & MLA_DECODE_ONE_LAUNCH) &&
      (a->flags & MLA_DECODE_TWO_LAUNCHES))
    return fail(MLA_ERROR_INVALID_ARGUMENT,
                "flags is 0x%x; MLA_DECODE_ONE_LAUNCH and "
                "MLA_DECODE_TWO_LAUNCHES contradict each other",
                a->flags);
  if (a->flags & MLA_DECODE_VALIDATE) {
    if (mxfp4 && a->kv_scales_rows < a->kv_rows)
      return fail(MLA_ERROR_INVALID_ARGUMENT,
                  "kv_scales_rows (%lld) is less than kv_rows (%lld): every "
                  "kv row needs its scales",
                  (long long)a->kv_scales_rows, (long long)a->kv_rows);
    return validateIndptrs(s, a);
  }
  return MLA_SUCCESS;
}

/// The workspace check for `need` bytes.
mla_status mla_launcher::checkWorkspace(const mla_decode_args *a,
                                        int64_t splits, size_t need) {
  if (need) {
    if (!a->workspace)
      return fail(MLA_ERROR_INVALID_ARGUMENT,
                  "workspace is NULL; %zu bytes are needed", need);
    if (!aligned(a->workspace, 16))
      return fail(MLA_ERROR_MISALIGNED, "workspace (%p) is not 16-byte aligned",
                  a->workspace);
    if (a->workspace_bytes < need)
      return fail(
          MLA_ERROR_WORKSPACE_TOO_SMALL,
          "workspace has %zu bytes; batch %lld with %lld splits needs %zu",
          a->workspace_bytes, (long long)a->batch, (long long)splits, need);
  }
  return MLA_SUCCESS;
}

/// Whether every length in the host copy divides `multiple` (false without
/// one); an inconsistent host copy is an error.
const int32_t *mla_launcher::lengthsHost(const mla_spec_desc &s,
                                         const mla_decode_args *a) {
  return s.kv_layout == MLA_KV_BLOCK_TABLE ? a->cache_seqlens_host
                                           : a->kv_indptr_host;
}

mla_status mla_launcher::hostLengthsDivide(const mla_spec_desc &s,
                                           const mla_decode_args *a,
                                           int64_t multiple, bool *divides) {
  *divides = false;
  const int32_t *h = lengthsHost(s, a);
  if (!h)
    return MLA_SUCCESS;
  bool table = s.kv_layout == MLA_KV_BLOCK_TABLE;
  *divides = true;
  for (int64_t b = 0; b < a->batch; ++b) {
    int64_t len = table ? int64_t(h[b]) : int64_t(h[b + 1]) - int64_t(h[b]);
    if (len < 0 || len > a->max_kv_len)
      return fail(MLA_ERROR_INVALID_ARGUMENT,
                  "%s gives sequence %lld length %lld, outside [0, "
                  "max_kv_len = %lld]",
                  table ? "cache_seqlens_host" : "kv_indptr_host", (long long)b,
                  (long long)len, (long long)a->max_kv_len);
    *divides = *divides && len % multiple == 0;
  }
  return MLA_SUCCESS;
}
