//===- DecodeRunner.cpp - host launcher for the decode kernels ------------===//
#include "mla/DecodeRunner.h"
#include "HostBackend.h"
#include "mla/ChipCompiler.h"
#include "mla/MLAOps.h"
#include "mla/ManifestSpec.h"
#include "mla/SplitCostModel.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <unistd.h>

using namespace mlir;
using namespace mlir::mla;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

llvm::Expected<DecodeKernels>
mlir::mla::findDecodeKernels(ModuleOp module, llvm::StringRef spec) {
  DecodeKernels k;
  KernelOp stage1;
  for (KernelOp op : module.getOps<KernelOp>()) {
    llvm::StringRef name = op.getSymName();
    if (!name.consume_front(spec) || !name.consume_front("_"))
      continue;
    if (name == "stage1_masked") {
      k.stage1Masked = op.getSymName().str();
      stage1 = op;
    } else if (name == "stage1_mask_free") {
      k.stage1MaskFree = op.getSymName().str();
      if (!stage1)
        stage1 = op;
    } else if (name == "stage2") {
      k.stage2 = op.getSymName().str();
    }
  }
  if (!stage1)
    return makeError("no stage-1 kernel for spec '" + spec +
                     "' (run mla-expand-decode)");
  k.blockN = stage1.getBlockN().value_or(0);
  k.blockM = stage1.getBlockM().value_or(0);
  if (auto c = stage1.getSplitCandidates())
    k.splitCandidates.assign(c->begin(), c->end());
  else
    k.splitCandidates = defaultSplitCandidates();
  k.maskFreeProven = k.stage1Masked.empty();
  k.spec = spec.str();
  for (KernelOp op : module.getOps<KernelOp>())
    if (llvm::StringRef(op.getSymName()).starts_with(spec.str() + "_"))
      k.kernelManifest.push_back(describeKernel(op, /*waveSize=*/1));
  // Argument 0 is Q (total_q x heads x qk), 1 is KV (total_kv x qk); a
  // per-tensor scale follows when the KV is quantised (mla.arg_names says).
  auto qT = cast<MemRefType>(stage1.getArgumentTypes()[0]);
  auto kvT = cast<MemRefType>(stage1.getArgumentTypes()[1]);
  auto outT = cast<MemRefType>(stage1.getArgumentTypes().back());
  // ... and the LSEs (batch x splits x q_seq_len * heads) come before out.
  auto lseT = cast<MemRefType>(
      stage1.getArgumentTypes()[stage1.getArgumentTypes().size() - 2]);
  k.heads = qT.getDimSize(1);
  k.qkDim = qT.getDimSize(2);
  k.vDim = outT.getDimSize(2);
  k.qSeqLen = lseT.getDimSize(2) / k.heads;
  k.kvType = kvT.getElementType();
  auto names = module.getContext()
                   ->getLoadedDialect<MLADialect>()
                   ->getArgNamesAttrHelper()
                   .getAttr(stage1);
  auto hasArg = [&](llvm::StringRef n) {
    return names && llvm::any_of(names, [&](Attribute a) {
             return cast<StringAttr>(a).getValue() == n;
           });
  };
  k.hasKVScale = hasArg("kv_scale");
  k.mxfp4 = hasArg("kv_scales");
  if (k.mxfp4)
    k.kvType = Float4E2M1FNType::get(module.getContext());
  if (hasArg("kv_indices"))
    k.kvLayout = "token_indices";
  if (hasArg("block_table"))
    k.kvLayout = "block_table";
  stage1.walk([&](LoadOp ld) {
    if (ld.isPaged())
      k.pageSize = static_cast<int64_t>(*ld.getPageSize());
  });
  return k;
}

llvm::Expected<DecodeRun> mlir::mla::runDecode(HostModule &host,
                                               const DecodeKernels &k,
                                               const DecodeInputs &in,
                                               int64_t splits,
                                               int64_t computeUnits) {
  // What the C launcher cannot check: the host buffers against the indptr
  // arrays (it sees pointers only).
  int64_t batch = in.batch;
  if (batch < 1)
    return makeError("batch must be positive, got " + llvm::Twine(batch));
  bool table = k.kvLayout == "block_table";
  bool indices = k.kvLayout == "token_indices";
  if (static_cast<int64_t>(in.qoIndptr.size()) != batch + 1 ||
      (!table && static_cast<int64_t>(in.kvIndptr.size()) != batch + 1))
    return makeError("qo_indptr and kv_indptr need batch + 1 entries");
  if (table &&
      (static_cast<int64_t>(in.cacheSeqlens.size()) != batch ||
       static_cast<int64_t>(in.blockTable.size()) != batch * in.blockTableCols))
    return makeError("a block table needs batch cache_seqlens and batch x "
                     "block_table_cols entries");
  int64_t maxLen = 0;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t len =
        table ? in.cacheSeqlens[b] : in.kvIndptr[b + 1] - in.kvIndptr[b];
    if (len < 0 || in.qoIndptr[b + 1] - in.qoIndptr[b] != k.qSeqLen)
      return makeError(
          "sequence " + llvm::Twine(b) +
          ": lengths must not be negative and every sequence has " +
          llvm::Twine(k.qSeqLen) + " query token(s)");
    maxLen = std::max(maxLen, len);
  }
  int64_t totalQ = in.qoIndptr[batch];
  int64_t totalKV = in.kvRows >= 0 ? in.kvRows : in.kvIndptr[batch];
  int64_t rowBytes =
      k.mxfp4 ? k.qkDim / 2 : k.qkDim * (k.kvType.getIntOrFloatBitWidth() / 8);
  if (static_cast<int64_t>(in.q.size()) != totalQ * k.heads * k.qkDim ||
      static_cast<int64_t>(in.kv.size()) != totalKV * rowBytes)
    return makeError("q or kv buffer size does not match the indptr arrays");
  if (k.mxfp4 &&
      (in.kvScalesStride < k.qkDim / 32 ||
       static_cast<int64_t>(in.kvScales.size()) != totalKV * in.kvScalesStride))
    return makeError("kv_scales needs kv rows x a stride of at least qk_dim / "
                     "32 bytes");
  if (indices && static_cast<int64_t>(in.kvIndices.size()) < in.kvIndptr[batch])
    return makeError("kv_indptr runs past kv_indices");
  if (splits < 0)
    return makeError("splits must be positive (0 = auto)");

  // The rules are the C launcher's (lib/Launcher): the kernels' manifest
  // entries, read back by the C++ manifest reader into its descriptor, and a
  // backend that runs the host-compiled kernels.
  llvm::json::Object manifest;
  manifest["manifest_version"] = kManifestVersion;
  manifest["spec"] = k.spec;
  manifest["chip"] = "host";
  manifest["compute_units"] = computeUnits;
  manifest["num_heads"] = k.heads;
  manifest["qk_dim"] = k.qkDim;
  manifest["v_dim"] = k.vDim;
  manifest["block_n"] = k.blockN;
  manifest["q_seq_len"] = k.qSeqLen;
  manifest["block_m"] = k.blockM;
  manifest["kv_layout"] = k.kvLayout;
  manifest["page_size"] = k.pageSize;
  manifest["kv_scale"] = k.hasKVScale ? "per_tensor"
                         : k.mxfp4    ? "block32_e8m0"
                                      : "none";
  if (k.mxfp4)
    manifest["kv_type"] = "f4E2M1FN";
  manifest["split_candidates"] = llvm::json::Array(k.splitCandidates);
  manifest["kernels"] = llvm::json::Array(k.kernelManifest);
  manifest["split_cost_model"] = splitCostModelManifest();
  auto spec = ManifestSpec::read(manifest, "");
  if (!spec)
    return spec.takeError();
  const mla_spec_desc &desc = *(*spec)->desc();
  std::unique_ptr<mla_backend> backend = makeHostBackend(host, desc.targets[0]);
  const mla_backend *backends[] = {backend.get(), nullptr};
  mla_context *ctx = nullptr;
  if (mla_context_create(&desc, "host", 0, backends, &ctx))
    return makeError(mla_last_error());
  auto destroy = llvm::scope_exit([&] { mla_context_destroy(ctx); });

  DecodeRun run;
  run.out.assign(totalQ * k.heads * k.vDim, 0x7FC0); // bf16 NaN
  std::vector<int32_t> qo = in.qoIndptr, kvp = in.kvIndptr;
  std::vector<uint16_t> q = in.q;
  // 16-byte aligned and never NULL, even with no KV tokens.
  std::vector<uint64_t> kv((in.kv.size() + 15) / 8 + 2);
  if (!in.kv.empty())
    std::memcpy(kv.data(), in.kv.data(), in.kv.size());
  float scale = in.kvScale;
  mla_decode_args a{};
  a.q = q.data();
  a.kv = kv.data();
  a.kv_scale = k.hasKVScale ? &scale : nullptr;
  std::vector<uint8_t> kvScales = in.kvScales;
  kvScales.push_back(0); // never NULL, even with no KV rows
  if (k.mxfp4) {
    a.kv_scales = kvScales.data();
    a.kv_scales_rows = totalKV;
    a.kv_scales_stride = in.kvScalesStride;
  }
  a.qo_indptr = qo.data();
  a.kv_indptr = kvp.data();
  a.out = run.out.data();
  a.batch = batch;
  a.max_kv_len = maxLen;
  a.kv_indptr_host = in.kvIndptr.data(); // the host has the lengths
  a.kv_rows = totalKV;
  a.num_splits = splits;
  std::vector<int32_t> kvIndices = in.kvIndices, blockTable = in.blockTable,
                       seqlens = in.cacheSeqlens;
  if (indices) {
    a.kv_indices = kvIndices.data();
    a.kv_indices_len = kvIndices.size();
    a.page_table_host = in.kvIndices.data();
  }
  if (table) {
    a.kv_indptr = a.kv_indptr_host = nullptr;
    a.block_table = blockTable.data();
    a.block_table_cols = in.blockTableCols;
    a.cache_seqlens = seqlens.data();
    a.cache_seqlens_host = in.cacheSeqlens.data();
    a.page_table_host = in.blockTable.data();
  }
  mla_decode_plan plan;
  if (mla_plan_decode(ctx, &a, &plan))
    return makeError(mla_last_error());
  // Partials and LSEs poisoned, so anything left unwritten shows.
  std::vector<float> workspace(plan.workspace_bytes / sizeof(float) + 1,
                               std::numeric_limits<float>::quiet_NaN());
  a.workspace = workspace.data();
  a.workspace_bytes = workspace.size() * sizeof(float);
  if (mla_decode_run(ctx, &plan, &a, nullptr))
    return makeError(mla_last_error());
  run.splits = plan.splits;
  run.stage1 = plan.stage1;
  run.ranStage2 = plan.stage2 != nullptr;
  return run;
}

/// Moves r.inputs' back-to-back KV rows into a paged cache (DecodeInputs):
/// shuffled rows (token_indices) or shuffled pages (block_table), with a
/// few spare ones; rows no token uses hold `nanRow`, table entries no token
/// uses name no row of the cache.
static void scatterIntoPages(const DecodeKernels &k, RandomDecode &r,
                             const std::vector<uint8_t> &nanRow,
                             std::mt19937_64 &rng) {
  DecodeInputs &in = r.inputs;
  const std::vector<int32_t> &indptr = r.problem.kvIndptr;
  int64_t batch = in.batch, rowBytes = nanRow.size();
  int64_t page = k.kvLayout == "block_table" ? k.pageSize : 1;
  // Pages of each sequence, and the cache's (3 spare).
  std::vector<int64_t> pagesOf(batch);
  int64_t pages = 3, maxPages = 0;
  for (int64_t b = 0; b < batch; ++b) {
    pagesOf[b] = (indptr[b + 1] - indptr[b] + page - 1) / page;
    pages += pagesOf[b];
    maxPages = std::max(maxPages, pagesOf[b]);
  }
  std::vector<int32_t> perm(pages);
  for (int64_t i = 0; i < pages; ++i)
    perm[i] = static_cast<int32_t>(i);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<uint8_t> cache(pages * page * rowBytes);
  for (int64_t row = 0; row < pages * page; ++row)
    std::memcpy(&cache[row * rowBytes], nanRow.data(), rowBytes);
  int64_t next = 0; // the next page of perm
  if (k.kvLayout == "block_table") {
    in.blockTableCols = maxPages + 1; // a spare column, never used
    in.blockTable.assign(batch * in.blockTableCols,
                         static_cast<int32_t>(pages + 1000));
    in.cacheSeqlens.clear();
  } else {
    in.kvIndices.assign(indptr[batch] + 5, static_cast<int32_t>(-7));
  }
  for (int64_t b = 0; b < batch; ++b) {
    int64_t len = indptr[b + 1] - indptr[b];
    if (k.kvLayout == "block_table")
      in.cacheSeqlens.push_back(static_cast<int32_t>(len));
    for (int64_t j = 0; j < pagesOf[b]; ++j) {
      int32_t p = perm[next++];
      if (k.kvLayout == "block_table")
        in.blockTable[b * in.blockTableCols + j] = p;
      else
        in.kvIndices[indptr[b] + j] = p;
      for (int64_t t = j * page; t < std::min((j + 1) * page, len); ++t)
        std::memcpy(&cache[(int64_t(p) * page + t % page) * rowBytes],
                    &in.kv[(indptr[b] + t) * rowBytes], rowBytes);
    }
  }
  in.kv = std::move(cache);
  in.kvRows = pages * page;
}

llvm::Expected<RandomDecode>
mlir::mla::makeRandomDecode(const DecodeKernels &k,
                            llvm::ArrayRef<int64_t> lengths,
                            double softmaxScale, uint64_t seed) {
  RandomDecode r;
  int64_t batch = lengths.size();
  if (batch < 1)
    return makeError("need at least one sequence");
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);

  // Lengths the int32 indptrs can hold, and a problem the host's memory
  // can: the inputs, their float64 copies and the reference take about
  // 20 bytes per KV element and 12 per Q element (mla-run with a huge
  // --batch x --kv-len must get a sentence, not an out-of-memory abort).
  int64_t total = 0;
  for (int64_t len : lengths) {
    if (len < 0)
      return makeError("kv lengths must be non-negative");
    total += std::min<int64_t>(len, int64_t(1) << 40);
    if (total > std::numeric_limits<int32_t>::max())
      return makeError("the KV lengths add up to more than 2^31 - 1 tokens, "
                       "past the int32 kv_indptr range");
  }
  double need = 20.0 * double(total) * k.qkDim +
                12.0 * double(batch) * k.qSeqLen * k.heads * k.qkDim;
  double have = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  if (have > 0 && need > have / 2)
    return makeError(llvm::formatv(
        "batch {0} with {1} KV tokens needs about {2:F1} GiB of host memory "
        "for the inputs and the float64 reference; this host has {3:F1} GiB "
        "(use smaller --batch / --kv-len / --kv-lens)",
        batch, total, need / double(1ull << 30), have / double(1ull << 30)));

  mla_ref::DecodeProblem &p = r.problem;
  p.batch = batch;
  p.heads = k.heads;
  p.qkDim = k.qkDim;
  p.vDim = k.vDim;
  p.softmaxScale = softmaxScale;
  p.qoIndptr.push_back(0);
  p.kvIndptr.push_back(0);
  for (int64_t len : lengths) {
    p.qoIndptr.push_back(p.qoIndptr.back() + static_cast<int32_t>(k.qSeqLen));
    p.kvIndptr.push_back(p.kvIndptr.back() + static_cast<int32_t>(len));
  }
  DecodeInputs &in = r.inputs;
  in.batch = batch;
  in.qoIndptr = p.qoIndptr;
  in.kvIndptr = p.kvIndptr;

  int64_t nq = batch * k.qSeqLen * k.heads * k.qkDim;
  in.q.resize(nq);
  r.q.resize(nq);
  for (int64_t i = 0; i < nq; ++i) {
    in.q[i] = mla_ref::floatToBf16(static_cast<float>(normal(rng)));
    r.q[i] = mla_ref::bf16ToFloat(in.q[i]);
  }

  int64_t nkv = static_cast<int64_t>(p.kvIndptr.back()) * k.qkDim;
  std::vector<double> raw(nkv);
  double amax = 0;
  for (double &x : raw) {
    x = normal(rng);
    amax = std::max(amax, std::fabs(x));
  }
  r.kv.resize(nkv);
  // One row's bytes that read as NaN (the poison of unused cache rows).
  std::vector<uint8_t> nanRow;
  if (k.mxfp4) {
    // A padded scale stride (as the task's quantiser pads), never assumed
    // to be qk_dim / 32. Rows are paged as data and scales together.
    int64_t rows = p.kvIndptr.back(), dataBytes = k.qkDim / 2;
    in.kvScalesStride = k.qkDim / 32 + 6;
    mla_ref::quantizeMxfp4(raw, rows, k.qkDim, in.kvScalesStride, in.kv,
                           in.kvScales);
    std::vector<double> deq = mla_ref::dequantizeMxfp4(
        in.kv.data(), in.kvScales.data(), rows, k.qkDim, in.kvScalesStride);
    r.kv = std::move(deq);
    if (k.kvLayout != "contiguous") {
      int64_t rowBytes = dataBytes + in.kvScalesStride;
      std::vector<uint8_t> joined(rows * rowBytes);
      for (int64_t i = 0; i < rows; ++i) {
        std::memcpy(&joined[i * rowBytes], &in.kv[i * dataBytes], dataBytes);
        std::memcpy(&joined[i * rowBytes + dataBytes],
                    &in.kvScales[i * in.kvScalesStride], in.kvScalesStride);
      }
      in.kv = std::move(joined);
      // NaN rows: scale 0xFF.
      nanRow.assign(rowBytes, 0xFF);
      scatterIntoPages(k, r, nanRow, rng);
      int64_t cacheRows = in.kvRows;
      std::vector<uint8_t> data(cacheRows * dataBytes),
          scales(cacheRows * in.kvScalesStride);
      for (int64_t i = 0; i < cacheRows; ++i) {
        std::memcpy(&data[i * dataBytes], &in.kv[i * rowBytes], dataBytes);
        std::memcpy(&scales[i * in.kvScalesStride],
                    &in.kv[i * rowBytes + dataBytes], in.kvScalesStride);
      }
      in.kv = std::move(data);
      in.kvScales = std::move(scales);
    }
    return r;
  }
  if (k.kvType.isBF16()) {
    in.kv.resize(nkv * 2);
    for (int64_t i = 0; i < nkv; ++i) {
      uint16_t bits = mla_ref::floatToBf16(static_cast<float>(raw[i]));
      std::memcpy(&in.kv[2 * i], &bits, 2);
      r.kv[i] = mla_ref::bf16ToFloat(bits);
    }
    for (int64_t c = 0; c < k.qkDim; ++c)
      nanRow.insert(nanRow.end(), {0xC0, 0x7F});
  } else {
    mla_ref::Fp8Format fmt;
    if (isa<Float8E4M3FNType>(k.kvType))
      fmt = mla_ref::Fp8Format::E4M3FN;
    else if (isa<Float8E4M3FNUZType>(k.kvType))
      fmt = mla_ref::Fp8Format::E4M3FNUZ;
    else
      return makeError("unsupported KV element type");
    float scale =
        static_cast<float>(std::max(amax, 1e-12) / mla_ref::fp8Max(fmt));
    in.kvScale = scale;
    in.kv.resize(nkv);
    for (int64_t i = 0; i < nkv; ++i) {
      in.kv[i] = mla_ref::encodeFp8(raw[i] / scale, fmt);
      r.kv[i] = mla_ref::decodeFp8(in.kv[i], fmt) * static_cast<double>(scale);
    }
    nanRow.assign(k.qkDim, fmt == mla_ref::Fp8Format::E4M3FN ? 0x7F : 0x80);
  }
  if (k.kvLayout != "contiguous")
    scatterIntoPages(k, r, nanRow, rng);
  return r;
}

llvm::Error mlir::mla::scaleQueries(RandomDecode &r, int log2Factor) {
  for (size_t i = 0; i < r.q.size(); ++i) {
    float f = std::ldexp(mla_ref::bf16ToFloat(r.inputs.q[i]), log2Factor);
    if (f != 0 && !std::isnormal(f))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "Q times 2^%d leaves bf16's normal range (entry %zu)", log2Factor, i);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    r.inputs.q[i] = uint16_t(bits >> 16); // exact: f is a bf16 value
    r.q[i] = std::ldexp(r.q[i], log2Factor);
  }
  return llvm::Error::success();
}

double mlir::mla::errorAgainstReference(const RandomDecode &r,
                                        const DecodeRun &run) {
  std::vector<double> expected = mla_ref::referenceDecode(r.problem, r.q, r.kv);
  std::vector<double> got(run.out.size());
  for (size_t i = 0; i < got.size(); ++i)
    got[i] = mla_ref::bf16ToFloat(run.out[i]);
  return mla_ref::relativeFrobeniusError(got, expected);
}
