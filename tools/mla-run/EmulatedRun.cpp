//===- EmulatedRun.cpp - mla-run on the AMD ISA emulator ------------------===//
//
// The spec is compiled by the same library as mla-compile (ChipCompiler),
// its manifest becomes the launcher's descriptor (ManifestSpec), and
// mla_decode runs it through the emulator backend: no launch rule is
// re-coded here. Outputs and workspace are poisoned first (0xFF bytes: NaN
// in bf16 and f32), every buffer is registered with its exact size.
//
//===----------------------------------------------------------------------===//
#include "EmulatedRun.h"

#include "mla/ChipCompiler.h"
#include "mla/Emulator.h"
#include "mla/ManifestSpec.h"
#include "mla/launcher_emulator.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"

#include <cstring>

#include <map>

using namespace mlir;
using namespace mlir::mla;
namespace emu = ::mla::emu;

namespace {
struct Observed {
  std::vector<std::pair<std::string, emu::Counters>> dispatches;
};
void observe(void *user, const char *kernel, const emu::Counters &c) {
  static_cast<Observed *>(user)->dispatches.emplace_back(kernel, c);
}

/// Storage for a buffer with 16-byte alignment.
struct Buffer {
  std::vector<uint64_t> words;
  size_t bytes = 0;
  void *data() { return words.data(); }
  void alloc(size_t n, uint8_t fill) {
    bytes = n;
    words.assign((n + 7) / 8 + 2, 0);
    std::memset(words.data(), fill, words.size() * 8);
  }
};

void printCounters(llvm::raw_ostream &os, const emu::Counters &c) {
  os << "    wave-instructions " << c.total() << ": SALU " << c.salu
     << ", VALU " << c.valu << ", MFMA " << c.mfma << ", LDS " << c.lds
     << ", VMEM " << c.vmem << ", SMEM " << c.smem << ", branch " << c.branch
     << ", wait/barrier " << c.waitBarrier << "\n"
     << "    LDS bank-conflict cycles " << c.ldsBankConflicts
     << ", global bytes read " << c.globalBytesRead << ", written "
     << c.globalBytesWritten << ", workgroups " << c.workgroups << ", waves "
     << c.waves << "\n";
}
} // namespace

LogicalResult mlir::mla::runOnEmulator(MLIRContext &ctx, ModuleOp parsed,
                                       const ChipInfo &chip,
                                       const DecodeKernels &k,
                                       const RandomDecode &r,
                                       const EmulatedOptions &opts,
                                       DecodeRun &run, llvm::raw_ostream &os) {
  auto error = [&](const llvm::Twine &msg) {
    llvm::errs() << "mla-run: error: " << msg << "\n";
    return failure();
  };
  std::string report;
  llvm::raw_string_ostream reportOs(report);
  CompileOptions copts;
  copts.emit = Emit::Header; // nothing written
  copts.report = &reportOs;
  llvm::SmallString<128> tmp;
  if (llvm::sys::fs::createUniqueDirectory("mla-run", tmp))
    return error("cannot create a temporary folder");
  copts.outDir = tmp.str().str();
  copts.stem = "spec";
  FailureOr<ChipOutput> out = compileForChip(ctx, parsed, chip, copts);
  llvm::sys::fs::remove_directories(tmp);
  if (failed(out))
    return failure();
  if (opts.patchOffset >= 0) {
    if (size_t(opts.patchOffset) >= out->binary.size())
      return error("--patch-offset beyond the code object");
    out->binary[opts.patchOffset] = char(opts.patchByte);
  }
  auto spec = ManifestSpec::read(out->manifest, out->binary);
  if (!spec)
    return error(llvm::toString(spec.takeError()));

  const DecodeInputs &in = r.inputs;
  int64_t batch = in.batch, maxLen = 0;
  for (int64_t b = 0; b < batch; ++b)
    maxLen = std::max<int64_t>(maxLen, in.kvIndptr[b + 1] - in.kvIndptr[b]);
  int64_t rows = in.qoIndptr[batch];
  emu::Device dev;
  Observed seen;
  const mla_backend *backend = mla_backend_emulator(&dev, observe, &seen);
  const mla_backend *backends[] = {backend, nullptr};
  mla_context *mctx = nullptr;
  llvm::scope_exit cleanup([&] {
    mla_context_destroy(mctx);
    mla_backend_emulator_destroy(backend);
  });
  if (mla_context_create(spec->get()->desc(), chip.name.str().c_str(), 0,
                         backends, &mctx))
    return error(mla_last_error());

  Buffer q, kv, scale, qo, kvp, outBuf, ws, indices, table, seqlens, scales;
  q.alloc(in.q.size() * 2, 0);
  std::memcpy(q.data(), in.q.data(), q.bytes);
  kv.alloc(std::max<size_t>(in.kv.size(), 1), 0);
  std::memcpy(kv.data(), in.kv.data(), in.kv.size());
  kv.bytes = in.kv.size();
  scale.alloc(4, 0);
  std::memcpy(scale.data(), &in.kvScale, 4);
  // mxfp4's e8m0 block scales, registered at their exact size.
  scales.alloc(std::max<size_t>(in.kvScales.size(), 1), 0);
  std::memcpy(scales.data(), in.kvScales.data(), in.kvScales.size());
  scales.bytes = in.kvScales.size();
  qo.alloc(in.qoIndptr.size() * 4, 0);
  std::memcpy(qo.data(), in.qoIndptr.data(), qo.bytes);
  kvp.alloc(in.kvIndptr.size() * 4, 0);
  std::memcpy(kvp.data(), in.kvIndptr.data(), kvp.bytes);
  outBuf.alloc(size_t(rows) * k.heads * k.vDim * 2, 0xFF);
  size_t wsBytes = 0;
  if (mla_workspace_size(mctx, batch, maxLen, &wsBytes))
    return error(mla_last_error());
  ws.alloc(wsBytes, 0xFF);
  dev.registerBuffer(q.data(), q.bytes, "q", false);
  if (kv.bytes)
    dev.registerBuffer(kv.data(), kv.bytes, "kv", false);
  dev.registerBuffer(scale.data(), 4, "kv_scale", false);
  if (scales.bytes)
    dev.registerBuffer(scales.data(), scales.bytes, "kv_scales", false);
  dev.registerBuffer(qo.data(), qo.bytes, "qo_indptr", false);
  dev.registerBuffer(kvp.data(), kvp.bytes, "kv_indptr", false);
  dev.registerBuffer(outBuf.data(), outBuf.bytes, "out");
  // Paged KV: the page table and lengths, registered at their exact sizes.
  auto put = [&](Buffer &buf, const std::vector<int32_t> &v, const char *name) {
    buf.alloc(std::max<size_t>(v.size() * 4, 4), 0);
    std::memcpy(buf.data(), v.data(), v.size() * 4);
    if (!v.empty())
      dev.registerBuffer(buf.data(), v.size() * 4, name, false);
    return static_cast<const int32_t *>(buf.data());
  };
  if (wsBytes)
    dev.registerBuffer(ws.data(), wsBytes, "workspace");

  mla_decode_args a{};
  a.q = q.data();
  a.kv = kv.data();
  a.kv_scale = static_cast<const float *>(scale.data());
  a.qo_indptr = static_cast<const int32_t *>(qo.data());
  a.kv_indptr = static_cast<const int32_t *>(kvp.data());
  a.out = outBuf.data();
  a.workspace = wsBytes ? ws.data() : nullptr;
  a.workspace_bytes = wsBytes;
  a.batch = batch;
  a.max_kv_len = maxLen;
  a.kv_indptr_host = in.kvIndptr.data();
  a.kv_rows = in.kvRows >= 0 ? in.kvRows : in.kvIndptr[batch]; // rows of kv
  if (k.mxfp4) {
    a.kv_scales = static_cast<const uint8_t *>(scales.data());
    a.kv_scales_rows = a.kv_rows;
    a.kv_scales_stride = in.kvScalesStride;
  }
  if (k.kvLayout == "token_indices") {
    a.kv_indices = put(indices, in.kvIndices, "kv_indices");
    a.kv_indices_len = in.kvIndices.size();
  } else if (k.kvLayout == "block_table") {
    a.kv_indptr = a.kv_indptr_host = nullptr;
    a.block_table = put(table, in.blockTable, "block_table");
    a.block_table_cols = in.blockTableCols;
    a.cache_seqlens = put(seqlens, in.cacheSeqlens, "cache_seqlens");
    a.cache_seqlens_host = in.cacheSeqlens.data();
  }
  mla_decode_plan plan;
  if (mla_plan_decode(mctx, &a, &plan))
    return error(mla_last_error());
  if (mla_decode(mctx, &a, nullptr))
    return error(mla_last_error());

  run.splits = plan.splits;
  run.stage1 = plan.stage1;
  run.ranStage2 = plan.stage2 != nullptr;
  run.out.resize(size_t(rows) * k.heads * k.vDim);
  std::memcpy(run.out.data(), outBuf.data(), run.out.size() * 2);

  os << "emulated  " << chip.name << " (" << out->binary.size()
     << "-byte code object), " << seen.dispatches.size()
     << " dispatches through the C launcher\n";
  if (opts.stats) {
    int64_t tokens = in.kvIndptr[batch];
    const llvm::json::Array *ks = out->manifest.getArray("kernels");
    for (auto &[name, c] : seen.dispatches) {
      os << "  " << name << "\n";
      printCounters(os, c);
      bool stage1 = name == plan.stage1;
      if (!stage1 || !tokens)
        continue;
      double staticFigure = 0;
      for (const llvm::json::Value &kv : *ks) {
        const llvm::json::Object &ko = *kv.getAsObject();
        if (ko.getString("name").value_or("") != name)
          continue;
        if (const llvm::json::Object *res = ko.getObject("resources"))
          staticFigure =
              res->getNumber("wave_instructions_per_kv_token").value_or(0);
      }
      os << "    executed wave-instructions per KV token: "
         << llvm::format("%.1f", double(c.total()) / tokens) << " (" << tokens
         << " tokens, prologue and epilogue included); static KV loop: "
         << llvm::format("%.1f", staticFigure) << "\n"
         << "    LDS bank-conflict cycles per KV token: "
         << llvm::format("%.2f", double(c.ldsBankConflicts) / tokens) << "\n";
    }
  }
  return success();
}
