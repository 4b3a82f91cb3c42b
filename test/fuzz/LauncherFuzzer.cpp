//===- LauncherFuzzer.cpp - random argument structs through the launcher --===//
//
// libFuzzer target (issue #16): the bytes become an mla_decode_args (NULL,
// aligned or misaligned pointers; any batch, max_kv_len, kv_rows,
// num_splits, flags and workspace size; host indptr copies, well-formed or
// not) and a call sequence (mla_workspace_size, mla_plan_decode,
// mla_decode, mla_decode_run on the plan, possibly with changed arguments)
// on a context over the gfx950 descriptors mla-compile generates and a
// recording backend. Device pointers are never dereferenced (the backend
// only records), host copies are exactly batch + 1 entries, so ASan sees
// any read past them.
//
// After every call the launcher's promises (mla/launcher.h) are checked
// against an independent oracle; a broken one traps:
//   - a refusal launches nothing and says why, under its status's name;
//   - a NULL or misaligned pointer, batch <= 0, negative max_kv_len or
//     kv_rows, unknown flags, or a too small workspace is refused;
//   - with MLA_DECODE_VALIDATE, bad host contents are refused and accepted
//     ones are valid;
//   - a launch has the plan's grid (batch x splits, then batch x heads for
//     stage 2 exactly when splits > 1), 1 <= splits <= 65535, and the kv
//     descriptor's rows are kv_rows;
//   - a mask-free stage 1 only runs on host lengths that divide.
//
//===----------------------------------------------------------------------===//
#include "../unit/RecordingBackend.h"
#include "deepseek_r1_decode_fp8.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const mla_spec_desc &spec = deepseek_r1_decode_fp8_spec;
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

/// The oracle for MLA_DECODE_VALIDATE (mla/launcher.h's rule, written
/// again here on purpose).
bool indptrsValid(const mla_decode_args &a) {
  const int32_t *kv = a.kv_indptr_host, *qo = a.qo_indptr_host;
  if (kv[0] < 0 || qo[0] < 0)
    return false;
  for (int64_t b = 0; b < a.batch; ++b) {
    int64_t len = int64_t(kv[b + 1]) - kv[b];
    if (len < 0 || len > a.max_kv_len ||
        int64_t(qo[b + 1]) - qo[b] != spec.q_seq_len)
      return false;
  }
  return kv[a.batch] <= a.kv_rows && qo[a.batch] <= a.batch * spec.q_seq_len;
}

struct Fixture {
  mlatest::RecordingBackend backend;
  mla_context *ctx = nullptr;
  Fixture() {
    const mla_backend *backends[] = {&backend, nullptr};
    if (mla_context_create(&spec, "gfx950", 0, backends, &ctx))
      broken("the generated descriptor was refused");
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
  require(l.size() - from == (p.splits > 1 ? 2u : 1u),
          "stage 2 launched iff splits > 1");
  require(p.splits >= 1 && p.splits <= 65535, "splits out of 1..65535");
  const mlatest::Launch &s1 = l[from];
  require(s1.kernel == p.stage1, "stage 1 is not the plan's");
  require(int64_t(s1.gx) == a.batch && int64_t(s1.gy) == p.splits,
          "stage 1 grid is not batch x splits");
  // kv is stage 1's second memref (q: 3 + 2 * 3 words): dim 0 at word 12.
  require(s1.words.size() > 12 && int64_t(s1.words[12]) == a.kv_rows,
          "kv's descriptor rows are not kv_rows");
  if (p.splits > 1) {
    const mlatest::Launch &s2 = l[from + 1];
    require(s2.kernel == p.stage2, "stage 2 is not the plan's");
    require(int64_t(s2.gx) == a.batch && int(s2.gy) == spec.num_heads,
            "stage 2 grid is not batch x heads");
  }
  if (p.mask_free && a.kv_indptr_host)
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

  bool badPtr = false;
  mla_decode_args a{};
  current = &a;
  // The launcher's alignments: 16 bytes for the tiles' sources and the
  // output, 4 for the scale and the indptrs.
  a.q = pointer(in, 0x100000, 16, &badPtr);
  a.kv = pointer(in, 0x200000, 16, &badPtr);
  a.kv_scale = static_cast<const float *>(pointer(in, 0x300000, 4, &badPtr));
  a.qo_indptr = static_cast<const int32_t *>(pointer(in, 0x400000, 4, &badPtr));
  a.kv_indptr = static_cast<const int32_t *>(pointer(in, 0x500000, 4, &badPtr));
  a.out = const_cast<void *>(pointer(in, 0x600000, 16, &badPtr));
  a.batch = size(in, 300);
  a.max_kv_len = size(in, 70000);
  a.kv_rows = size(in, 1 << 20);
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
  bool badSizes = a.batch <= 0 || a.max_kv_len < 0 || a.kv_rows < 0 ||
                  a.kv_rows > INT32_MAX || (a.flags & ~MLA_DECODE_VALIDATE);
  bool badContents =
      (a.flags & MLA_DECODE_VALIDATE) && !badSizes &&
      (!a.kv_indptr_host || !a.qo_indptr_host || !indptrsValid(a));
  bool mustFail = badPtr || badSizes || badContents;

  size_t ws = 0;
  mla_status s = mla_workspace_size(f->ctx, a.batch, a.max_kv_len, &ws);
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
    s = mla_decode(f->ctx, &a, nullptr);
    checkOutcome(s, f->backend.launches.size() - before, mustFail,
                 "mla_decode");
    if (s == MLA_SUCCESS) {
      mla_decode_plan p;
      require(mla_plan_decode(f->ctx, &a, &p) == MLA_SUCCESS,
              "a decode that ran does not plan");
      require(a.workspace_bytes >= p.workspace_bytes,
              "ran with a workspace smaller than the plan's");
      checkLaunches(*f, before, p, a);
    }
    return 0;
  }
  mla_decode_plan p;
  s = mla_plan_decode(f->ctx, &a, &p);
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
    if (in.ConsumeBool())
      a.batch = size(in, 300), a.kv_indptr_host = a.qo_indptr_host = nullptr;
  }
  bool changedShape = a.batch != p.batch;
  bool runBad = a.batch <= 0 || a.kv_rows < 0 || a.kv_rows > INT32_MAX ||
                ((a.flags & MLA_DECODE_VALIDATE) &&
                 (!a.kv_indptr_host || !a.qo_indptr_host || !indptrsValid(a)));
  before = f->backend.launches.size();
  s = mla_decode_run(f->ctx, &p, &a, nullptr);
  checkOutcome(s, f->backend.launches.size() - before,
               badPtr || changedShape || runBad ||
                   (p.workspace_bytes &&
                    (!a.workspace || a.workspace_bytes < p.workspace_bytes)),
               "mla_decode_run");
  if (s == MLA_SUCCESS)
    checkLaunches(*f, before, p, a);
  return 0;
}
