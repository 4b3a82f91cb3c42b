//===- LauncherFuzzer.cpp - random argument structs through the launcher --===//
//
// libFuzzer target (issue #16): the bytes become an mla_decode_args (NULL,
// aligned or misaligned pointers; any batch, max_kv_len, kv_rows,
// num_splits, flags and workspace size; host indptr copies, well-formed or
// not) and a call sequence (mla_workspace_size, mla_plan_decode,
// mla_decode, mla_decode_run on the plan, possibly with changed arguments)
// on a context over the gfx950 descriptors mla-compile generates and a
// recording backend: the contiguous spec, or a paged one (a block table of
// 64-row pages, a token list; ABI 7) with their tables, lengths and host
// copies. Device pointers are never dereferenced (the backend only
// records), host copies are exactly as long as the launcher may read
// (batch + 1 indptr entries, batch lengths, kv_indices_len indices, batch x
// cols table entries), so ASan sees any read past them.
//
// After every call the launcher's promises (mla/launcher.h) are checked
// against an independent oracle; a broken one traps:
//   - a refusal launches nothing and says why, under its status's name;
//   - a NULL or misaligned pointer, batch <= 0, negative max_kv_len or
//     kv_rows, unknown flags (other than VALIDATE, ONE_LAUNCH,
//     TWO_LAUNCHES), ONE_LAUNCH with TWO_LAUNCHES, or a too
//     small workspace is refused;
//   - with MLA_DECODE_VALIDATE, bad host contents (indptrs, lengths, page
//     tables) are refused and accepted ones are valid;
//   - a launch has the plan's grid (batch x splits, then batch x heads for
//     stage 2 exactly when splits > 1 and stage 1 does not combine them in
//     a cluster: cluster_splits, none on gfx950), 1 <= splits <= 65535,
//     and the kv descriptor's rows are kv_rows;
//   - a mask-free stage 1 only runs on host lengths that divide (the
//     block table's from cache_seqlens_host).
//
//===----------------------------------------------------------------------===//
#include "../unit/RecordingBackend.h"
#include "deepseek_r1_decode_fp8.h"
#include "deepseek_r1_decode_fp8_kvindices.h"
#include "deepseek_r1_decode_fp8_paged64.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

/// The input's spec: contiguous, token list or block table.
const mla_spec_desc *specs[] = {&deepseek_r1_decode_fp8_spec,
                                &deepseek_r1_decode_fp8_kvindices_spec,
                                &deepseek_r1_decode_fp8_paged64_spec};
const mla_spec_desc *specp = specs[0];
const mla_decode_args *current = nullptr; // the input's arguments, for reports

[[noreturn]] void broken(const char *what) {
  std::fprintf(stderr, "launcher promise broken: %s (last error: %s)\n", what,
               mla_last_error());
  if (const mla_decode_args *a = current) {
    std::fprintf(stderr,
                 "  q %p kv %p kv_scale %p qo_indptr %p kv_indptr %p out %p\n"
                 "  workspace %p (%zu bytes) batch %lld max_kv_len %lld "
                 "kv_rows %lld num_splits %lld flags 0x%x\n",
                 a->q, a->kv, (const void *)a->kv_scale,
                 (const void *)a->qo_indptr, (const void *)a->kv_indptr, a->out,
                 a->workspace, a->workspace_bytes, (long long)a->batch,
                 (long long)a->max_kv_len, (long long)a->kv_rows,
                 (long long)a->num_splits, a->flags);
    std::fprintf(stderr,
                 "  spec %s: kv_indices %p (%lld) block_table %p (%lld cols) "
                 "cache_seqlens %p\n",
                 specp->name, (const void *)a->kv_indices,
                 (long long)a->kv_indices_len, (const void *)a->block_table,
                 (long long)a->block_table_cols,
                 (const void *)a->cache_seqlens);
    for (auto [name, h] : {std::pair("kv_indptr_host", a->kv_indptr_host),
                           std::pair("qo_indptr_host", a->qo_indptr_host)}) {
      std::fprintf(stderr, "  %s:", name);
      for (int64_t b = 0; h && b <= a->batch && b < 16; ++b)
        std::fprintf(stderr, " %d", h[b]);
      std::fprintf(stderr, h ? "\n" : " NULL\n");
    }
  }
  std::abort();
}

void require(bool ok, const char *what) {
  if (!ok)
    broken(what);
}

/// A fake device address: NULL, 256-byte aligned, or off by 1..15 bytes
/// (bad when that breaks the argument's `align`).
const void *pointer(FuzzedDataProvider &in, uintptr_t base, uintptr_t align,
                    bool *bad) {
  switch (in.ConsumeIntegralInRange<int>(0, 9)) {
  case 0:
    *bad = true;
    return nullptr;
  case 1: {
    uintptr_t off = in.ConsumeIntegralInRange<uintptr_t>(1, 15);
    *bad = *bad || off % align != 0;
    return reinterpret_cast<const void *>(base + off);
  }
  default:
    return reinterpret_cast<const void *>(base);
  }
}

int64_t size(FuzzedDataProvider &in, int64_t small) {
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
  case 0:
    return in.ConsumeIntegral<int64_t>();
  case 1:
    return -in.ConsumeIntegralInRange<int64_t>(0, 3);
  default:
    return in.ConsumeIntegralInRange<int64_t>(0, small);
  }
}

/// A value in [-1, limit] (limit clamped to int32), mostly inside: where
/// the launcher's page-table checks draw their lines.
int32_t nearEdge(FuzzedDataProvider &in, int64_t limit) {
  limit = std::clamp<int64_t>(limit, 0, INT32_MAX - 1);
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
  case 0:
    return int32_t(limit); // the first value outside
  case 1:
    return -1;
  default:
    return int32_t(in.ConsumeIntegralInRange<int64_t>(0, limit));
  }
}

/// batch + 1 entries: prefix sums of small lengths, maybe disturbed.
std::vector<int32_t> indptr(FuzzedDataProvider &in, int64_t batch,
                            int32_t step) {
  std::vector<int32_t> v(size_t(batch) + 1);
  int64_t at = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<int32_t>(-3, 3);
  for (int64_t b = 0; b <= batch; ++b) {
    v[b] = int32_t(at);
    at += step ? step : in.ConsumeIntegralInRange<int32_t>(0, 2048);
    at = std::min<int64_t>(at, INT32_MAX);
  }
  int flips = in.ConsumeIntegralInRange<int>(0, 2);
  for (int i = 0; i < flips && batch >= 0; ++i)
    v[in.ConsumeIntegralInRange<int64_t>(0, batch)] =
        in.ConsumeIntegral<int32_t>();
  return v;
}

bool isTable() { return specp->kv_layout == MLA_KV_BLOCK_TABLE; }
bool isIndices() { return specp->kv_layout == MLA_KV_TOKEN_INDICES; }

/// Whether MLA_DECODE_VALIDATE has every host copy it reads.
bool hostCopiesPresent(const mla_decode_args &a) {
  if (isTable())
    return a.cache_seqlens_host && a.qo_indptr_host && a.page_table_host;
  return a.kv_indptr_host && a.qo_indptr_host &&
         (!isIndices() || a.page_table_host);
}

/// The oracle for MLA_DECODE_VALIDATE (mla/launcher.h's rule, written
/// again here on purpose).
bool indptrsValid(const mla_decode_args &a) {
  const mla_spec_desc &spec = *specp;
  const int32_t *qo = a.qo_indptr_host;
  if (qo[0] < 0 || qo[a.batch] > a.batch * spec.q_seq_len)
    return false;
  for (int64_t b = 0; b < a.batch; ++b)
    if (int64_t(qo[b + 1]) - qo[b] != spec.q_seq_len)
      return false;
  if (isTable()) {
    int64_t pages = a.kv_rows / spec.page_size;
    for (int64_t b = 0; b < a.batch; ++b) {
      int64_t len = a.cache_seqlens_host[b];
      if (len < 0 || len > a.max_kv_len ||
          len > a.block_table_cols * spec.page_size)
        return false;
      for (int64_t j = 0; j * spec.page_size < len; ++j) {
        int64_t e = a.page_table_host[b * a.block_table_cols + j];
        if (e < 0 || e >= pages)
          return false;
      }
    }
    return true;
  }
  const int32_t *kv = a.kv_indptr_host;
  if (kv[0] < 0)
    return false;
  for (int64_t b = 0; b < a.batch; ++b) {
    int64_t len = int64_t(kv[b + 1]) - kv[b];
    if (len < 0 || len > a.max_kv_len)
      return false;
  }
  if (!isIndices())
    return kv[a.batch] <= a.kv_rows;
  if (kv[a.batch] > a.kv_indices_len)
    return false;
  for (int64_t i = kv[0]; i < kv[a.batch]; ++i)
    if (a.page_table_host[i] < 0 || a.page_table_host[i] >= a.kv_rows)
      return false;
  return true;
}

struct Fixture {
  mlatest::RecordingBackend backend;
  mla_context *ctx[3] = {nullptr, nullptr, nullptr};
  Fixture() {
    const mla_backend *backends[] = {&backend, nullptr};
    for (int i = 0; i < 3; ++i)
      if (mla_context_create(specs[i], "gfx950", 0, backends, &ctx[i]))
        broken("a generated descriptor was refused");
  }
};

/// Checks a call's outcome; `launched` is how many launches it added.
void checkOutcome(mla_status s, size_t launched, bool mustFail,
                  const char *call) {
  if (s != MLA_SUCCESS) {
    require(launched == 0, "a refused call launched");
    std::string err = mla_last_error();
    require(!err.empty(), "a refusal without a message");
    require(err.rfind(mla_status_name(s), 0) == 0,
            "the message does not start with the status name");
    return;
  }
  if (mustFail) {
    std::fprintf(stderr, "%s accepted invalid arguments\n", call);
    broken("invalid arguments accepted");
  }
}

void checkLaunches(const Fixture &f, size_t from, const mla_decode_plan &p,
                   const mla_decode_args &a) {
  const auto &l = f.backend.launches;
  bool stage2 = p.splits > 1 && !p.cluster_splits;
  require(l.size() - from == (stage2 ? 2u : 1u),
          "stage 2 launched iff splits > 1 and stage 1 does not combine");
  require(l[from].clusterY == unsigned(p.cluster_splits) &&
              (!p.cluster_splits || p.cluster_splits == p.splits),
          "a cluster launch that is not the plan's cluster_splits");
  require(p.splits >= 1 && p.splits <= 65535, "splits out of 1..65535");
  const mlatest::Launch &s1 = l[from];
  require(s1.kernel == p.stage1, "stage 1 is not the plan's");
  require(int64_t(s1.gx) == a.batch && int64_t(s1.gy) == p.splits,
          "stage 1 grid is not batch x splits");
  // kv is stage 1's second memref (q: 3 + 2 * 3 words): dim 0 at word 12.
  require(s1.words.size() > 12 && int64_t(s1.words[12]) == a.kv_rows,
          "kv's descriptor rows are not kv_rows");
  if (stage2) {
    const mlatest::Launch &s2 = l[from + 1];
    require(s2.kernel == p.stage2, "stage 2 is not the plan's");
    require(int64_t(s2.gx) == a.batch && int(s2.gy) == specp->num_heads,
            "stage 2 grid is not batch x heads");
  }
  if (p.mask_free && isTable() && a.cache_seqlens_host)
    for (int64_t b = 0; b < a.batch; ++b)
      require(a.cache_seqlens_host[b] % (p.splits * 64) == 0,
              "mask-free stage 1 on lengths that do not divide");
  if (p.mask_free && !isTable() && a.kv_indptr_host)
    for (int64_t b = 0; b < a.batch; ++b)
      require((int64_t(a.kv_indptr_host[b + 1]) - a.kv_indptr_host[b]) %
                      (p.splits * 64) ==
                  0,
              "mask-free stage 1 on lengths that do not divide");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  static Fixture *f = new Fixture();
  FuzzedDataProvider in(data, n);
  f->backend.launches.clear();
  int which = in.ConsumeIntegralInRange<int>(0, 2);
  specp = specs[which];
  mla_context *ctx = f->ctx[which];
  const mla_spec_desc &spec = *specp;

  bool badPtr = false;
  mla_decode_args a{};
  current = &a;
  // The launcher's alignments: 16 bytes for the tiles' sources and the
  // output, 4 for the scale and the indptrs.
  a.q = pointer(in, 0x100000, 16, &badPtr);
  a.kv = pointer(in, 0x200000, 16, &badPtr);
  a.kv_scale = static_cast<const float *>(pointer(in, 0x300000, 4, &badPtr));
  a.qo_indptr = static_cast<const int32_t *>(pointer(in, 0x400000, 4, &badPtr));
  // The block table's lengths replace kv_indptr: any value is fine there.
  bool ignored = false;
  a.kv_indptr = static_cast<const int32_t *>(
      pointer(in, 0x500000, 4, isTable() ? &ignored : &badPtr));
  a.out = const_cast<void *>(pointer(in, 0x600000, 16, &badPtr));
  a.batch = size(in, 300);
  a.max_kv_len = size(in, 70000);
  a.kv_rows = size(in, 1 << 20);
  if (isTable() && in.ConsumeBool()) // a few whole pages
    a.kv_rows = 64 * in.ConsumeIntegralInRange<int64_t>(0, 64);
  a.num_splits = in.ConsumeBool()
                     ? 0
                     : in.PickValueInArray<int64_t>(
                           {1, 2, 3, 4, 8, 16, 32, 64, 65535, 65536, -1});
  a.flags = in.ConsumeBool()   ? 0
            : in.ConsumeBool() ? MLA_DECODE_VALIDATE
                               : in.ConsumeIntegral<uint32_t>();
  // Host copies only for batches whose copies are cheap to hold.
  std::vector<int32_t> kvHost, qoHost;
  if (a.batch >= 0 && a.batch <= 4096) {
    if (in.ConsumeBool()) {
      int32_t step = in.ConsumeBool()
                         ? 0
                         : 64 * in.ConsumeIntegralInRange<int32_t>(0, 128);
      kvHost = indptr(in, a.batch, step);
      a.kv_indptr_host = kvHost.data();
    }
    if (in.ConsumeBool()) {
      qoHost = indptr(in, a.batch, spec.q_seq_len);
      a.qo_indptr_host = qoHost.data();
    }
  }
  // Paged KV: the layout's table and lengths (and host copies of them).
  std::vector<int32_t> tableHost, lensHost;
  if (isIndices()) {
    a.kv_indices =
        static_cast<const int32_t *>(pointer(in, 0x800000, 4, &badPtr));
    a.kv_indices_len = size(in, 1 << 14);
    if (a.kv_indices_len >= 0 && a.kv_indices_len <= (1 << 14) &&
        in.ConsumeBool()) {
      tableHost.resize(size_t(a.kv_indices_len));
      for (int32_t &e : tableHost)
        e = in.ConsumeBool() ? nearEdge(in, a.kv_rows)
                             : in.ConsumeIntegral<int32_t>();
      a.page_table_host = tableHost.data();
    }
  } else if (isTable()) {
    a.block_table =
        static_cast<const int32_t *>(pointer(in, 0x800000, 4, &badPtr));
    a.cache_seqlens =
        static_cast<const int32_t *>(pointer(in, 0x900000, 4, &badPtr));
    a.block_table_cols = size(in, 200);
    if (a.batch > 0 && a.batch <= 4096 && in.ConsumeBool()) {
      lensHost.resize(size_t(a.batch));
      for (int32_t &l : lensHost)
        l = in.ConsumeBool()
                ? nearEdge(in, std::clamp<int64_t>(a.block_table_cols, 0,
                                                   INT32_MAX) *
                                       spec.page_size +
                                   1)
                : in.ConsumeIntegral<int32_t>();
      a.cache_seqlens_host = lensHost.data();
    }
    if (a.batch > 0 && a.batch <= 4096 && a.block_table_cols >= 0 &&
        a.block_table_cols <= 4096 &&
        a.batch * a.block_table_cols <= (1 << 14) && in.ConsumeBool()) {
      tableHost.resize(size_t(a.batch * a.block_table_cols));
      for (int32_t &e : tableHost)
        e = in.ConsumeBool() ? nearEdge(in, a.kv_rows / spec.page_size)
                             : in.ConsumeIntegral<int32_t>();
      a.page_table_host = tableHost.data();
    }
  }
  bool badSizes =
      a.batch <= 0 || a.max_kv_len < 0 || a.kv_rows < 0 ||
      a.kv_rows > INT32_MAX ||
      (a.flags & ~(MLA_DECODE_VALIDATE | MLA_DECODE_ONE_LAUNCH |
                   MLA_DECODE_TWO_LAUNCHES)) ||
      ((a.flags & MLA_DECODE_ONE_LAUNCH) &&
       (a.flags & MLA_DECODE_TWO_LAUNCHES)) ||
      (isIndices() && (a.kv_indices_len < 0 || a.kv_indices_len > INT32_MAX)) ||
      (isTable() &&
       (a.block_table_cols < 0 || a.block_table_cols > INT32_MAX ||
        (a.batch > 0 && a.block_table_cols > INT64_MAX / a.batch)));
  bool badContents = (a.flags & MLA_DECODE_VALIDATE) && !badSizes &&
                     (!hostCopiesPresent(a) || !indptrsValid(a));
  bool mustFail = badPtr || badSizes || badContents;

  size_t ws = 0;
  mla_status s = mla_workspace_size(ctx, a.batch, a.max_kv_len, &ws);
  require(s == MLA_SUCCESS ||
              (a.batch <= 0 || a.max_kv_len < 0 || a.batch >= (1ll << 31) ||
               a.max_kv_len >= (1ll << 31)),
          "mla_workspace_size refused valid sizes");
  a.workspace_bytes = in.ConsumeBool() ? ws : size_t(size(in, 1 << 30));
  a.workspace = in.ConsumeIntegralInRange<int>(0, 9)
                    ? reinterpret_cast<void *>(0x7000000)
                    : nullptr;

  int call = in.ConsumeIntegralInRange<int>(0, 2);
  size_t before = f->backend.launches.size();
  if (call == 0) {
    s = mla_decode(ctx, &a, nullptr);
    checkOutcome(s, f->backend.launches.size() - before, mustFail,
                 "mla_decode");
    if (s == MLA_SUCCESS) {
      mla_decode_plan p;
      require(mla_plan_decode(ctx, &a, &p) == MLA_SUCCESS,
              "a decode that ran does not plan");
      require(a.workspace_bytes >= p.workspace_bytes,
              "ran with a workspace smaller than the plan's");
      checkLaunches(*f, before, p, a);
    }
    return 0;
  }
  mla_decode_plan p;
  s = mla_plan_decode(ctx, &a, &p);
  checkOutcome(s, f->backend.launches.size() - before, mustFail,
               "mla_plan_decode");
  if (s != MLA_SUCCESS)
    return 0;
  require(p.batch == a.batch && p.max_kv_len == a.max_kv_len,
          "the plan does not record its batch / max_kv_len");
  if (call == 2) {
    // Run the plan on changed arguments: new host copies, kv_rows, flags.
    a.kv_rows = size(in, 1 << 20);
    if (a.kv_indptr_host && in.ConsumeBool())
      kvHost = indptr(in, a.batch, 0), a.kv_indptr_host = kvHost.data();
    if (in.ConsumeBool())
      a.flags ^= MLA_DECODE_VALIDATE;
    if (in.ConsumeBool()) {
      // Host copies sized by the batch go with it.
      a.batch = size(in, 300), a.kv_indptr_host = a.qo_indptr_host = nullptr;
      a.cache_seqlens_host = nullptr;
      if (isTable())
        a.page_table_host = nullptr;
    }
  }
  bool changedShape = a.batch != p.batch;
  bool runBad =
      a.batch <= 0 || a.kv_rows < 0 || a.kv_rows > INT32_MAX ||
      (isTable() && a.batch > 0 && a.block_table_cols > INT64_MAX / a.batch) ||
      ((a.flags & MLA_DECODE_VALIDATE) &&
       (!hostCopiesPresent(a) || !indptrsValid(a)));
  before = f->backend.launches.size();
  s = mla_decode_run(ctx, &p, &a, nullptr);
  checkOutcome(s, f->backend.launches.size() - before,
               badPtr || changedShape || runBad ||
                   (p.workspace_bytes &&
                    (!a.workspace || a.workspace_bytes < p.workspace_bytes)),
               "mla_decode_run");
  if (s == MLA_SUCCESS)
    checkLaunches(*f, before, p, a);
  return 0;
}
