//===- DecodeRunner.cpp - host launcher for the decode kernels ------------===//
#include "mla/DecodeRunner.h"
#include "mla/MLAOps.h"
#include "mla/SplitCostModel.h"

#include <algorithm>
#include <random>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::mla;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

llvm::Expected<DecodeKernels> mlir::mla::findDecodeKernels(ModuleOp module,
                                                           llvm::StringRef spec) {
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
  if (auto c = stage1.getSplitCandidates())
    k.splitCandidates.assign(c->begin(), c->end());
  else
    k.splitCandidates = defaultSplitCandidates();
  k.maskFreeProven = k.stage1Masked.empty();
  // Argument 0 is Q (total_q x heads x qk), 1 is KV (total_kv x qk); a
  // per-tensor scale follows when the KV is quantised (mla.arg_names says).
  auto qT = cast<MemRefType>(stage1.getArgumentTypes()[0]);
  auto kvT = cast<MemRefType>(stage1.getArgumentTypes()[1]);
  auto outT = cast<MemRefType>(stage1.getArgumentTypes().back());
  k.heads = qT.getDimSize(1);
  k.qkDim = qT.getDimSize(2);
  k.vDim = outT.getDimSize(2);
  k.kvType = kvT.getElementType();
  auto names = stage1->getAttrOfType<ArrayAttr>("mla.arg_names");
  k.hasKVScale = names && llvm::any_of(names, [](Attribute a) {
    return cast<StringAttr>(a).getValue() == "kv_scale";
  });
  return k;
}

llvm::Expected<DecodeRun> mlir::mla::runDecode(HostModule &host,
                                               const DecodeKernels &k,
                                               const DecodeInputs &in,
                                               int64_t splits,
                                               int64_t computeUnits) {
  int64_t batch = in.batch;
  if (batch < 1)
    return makeError("batch must be positive, got " + llvm::Twine(batch));
  if (static_cast<int64_t>(in.qoIndptr.size()) != batch + 1 ||
      static_cast<int64_t>(in.kvIndptr.size()) != batch + 1)
    return makeError("qo_indptr and kv_indptr need batch + 1 entries");
  int64_t maxLen = 0;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t len = in.kvIndptr[b + 1] - in.kvIndptr[b];
    if (len < 0 || in.qoIndptr[b + 1] - in.qoIndptr[b] != 1)
      return makeError("sequence " + llvm::Twine(b) +
                       ": kv_indptr must not decrease and every sequence has "
                       "one query row");
    maxLen = std::max(maxLen, len);
  }
  int64_t totalQ = in.qoIndptr[batch], totalKV = in.kvIndptr[batch];
  int64_t eltBytes = k.kvType.getIntOrFloatBitWidth() / 8;
  if (static_cast<int64_t>(in.q.size()) != totalQ * k.heads * k.qkDim ||
      static_cast<int64_t>(in.kv.size()) != totalKV * k.qkDim * eltBytes)
    return makeError("q or kv buffer size does not match the indptr arrays");

  if (splits < 0)
    return makeError("splits must be positive (0 = auto)");
  if (splits == 0)
    splits = chooseSplits({batch, maxLen, k.blockN, computeUnits,
                           k.splitCandidates});

  // Mask-free dispatch: every length a multiple of splits * block_n.
  bool exact = llvm::all_of(llvm::seq<int64_t>(0, batch), [&](int64_t b) {
    return (in.kvIndptr[b + 1] - in.kvIndptr[b]) % (splits * k.blockN) == 0;
  });
  DecodeRun run;
  run.splits = splits;
  if (exact && !k.stage1MaskFree.empty())
    run.stage1 = k.stage1MaskFree;
  else if (!k.stage1Masked.empty())
    run.stage1 = k.stage1Masked;
  else
    return makeError("the spec's facts promise every kv length is a multiple "
                     "of splits x block_n (" +
                     llvm::Twine(splits * k.blockN) +
                     "), but these lengths are not");

  float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> partial(batch * splits * k.heads * k.vDim, nan);
  std::vector<float> lse(batch * splits * k.heads, nan);
  run.out.assign(totalQ * k.heads * k.vDim, 0x7FC0); // bf16 NaN
  std::vector<int32_t> qo = in.qoIndptr, kvp = in.kvIndptr;
  std::vector<uint16_t> q = in.q;
  std::vector<uint8_t> kv = in.kv;
  float scale = in.kvScale;

  std::vector<HostArg> args{
      HostArg::buffer(q.data(), {totalQ, k.heads, k.qkDim}),
      HostArg::buffer(kv.data(), {totalKV, k.qkDim})};
  if (k.hasKVScale)
    args.push_back(HostArg::buffer(&scale, {1}));
  args.push_back(HostArg::buffer(qo.data(), {batch + 1}));
  args.push_back(HostArg::buffer(kvp.data(), {batch + 1}));
  args.push_back(HostArg::scalarIndex(splits));
  args.push_back(HostArg::buffer(partial.data(), {batch, splits, k.heads, k.vDim}));
  args.push_back(HostArg::buffer(lse.data(), {batch, splits, k.heads}));
  args.push_back(HostArg::buffer(run.out.data(), {totalQ, k.heads, k.vDim}));
  if (llvm::Error e = host.launch(run.stage1, {batch, splits}, args))
    return std::move(e);
  if (splits == 1)
    return run;
  if (k.stage2.empty())
    return makeError("several splits but the spec fixed splits = 1 (no stage 2)");
  std::vector<HostArg> args2{
      HostArg::buffer(partial.data(), {batch, splits, k.heads, k.vDim}),
      HostArg::buffer(lse.data(), {batch, splits, k.heads}),
      HostArg::scalarIndex(splits),
      HostArg::buffer(qo.data(), {batch + 1}),
      HostArg::buffer(run.out.data(), {totalQ, k.heads, k.vDim})};
  if (llvm::Error e = host.launch(k.stage2, {batch, k.heads}, args2))
    return std::move(e);
  run.ranStage2 = true;
  return run;
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

  mla_ref::DecodeProblem &p = r.problem;
  p.batch = batch;
  p.heads = k.heads;
  p.qkDim = k.qkDim;
  p.vDim = k.vDim;
  p.softmaxScale = softmaxScale;
  p.qoIndptr.push_back(0);
  p.kvIndptr.push_back(0);
  for (int64_t len : lengths) {
    if (len < 0)
      return makeError("kv lengths must be non-negative");
    p.qoIndptr.push_back(p.qoIndptr.back() + 1);
    p.kvIndptr.push_back(p.kvIndptr.back() + static_cast<int32_t>(len));
  }
  DecodeInputs &in = r.inputs;
  in.batch = batch;
  in.qoIndptr = p.qoIndptr;
  in.kvIndptr = p.kvIndptr;

  int64_t nq = batch * k.heads * k.qkDim;
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
  if (k.kvType.isBF16()) {
    in.kv.resize(nkv * 2);
    for (int64_t i = 0; i < nkv; ++i) {
      uint16_t bits = mla_ref::floatToBf16(static_cast<float>(raw[i]));
      std::memcpy(&in.kv[2 * i], &bits, 2);
      r.kv[i] = mla_ref::bf16ToFloat(bits);
    }
    return r;
  }
  mla_ref::Fp8Format fmt;
  if (isa<Float8E4M3FNType>(k.kvType))
    fmt = mla_ref::Fp8Format::E4M3FN;
  else if (isa<Float8E4M3FNUZType>(k.kvType))
    fmt = mla_ref::Fp8Format::E4M3FNUZ;
  else
    return makeError("unsupported KV element type");
  float scale = static_cast<float>(std::max(amax, 1e-12) / mla_ref::fp8Max(fmt));
  in.kvScale = scale;
  in.kv.resize(nkv);
  for (int64_t i = 0; i < nkv; ++i) {
    in.kv[i] = mla_ref::encodeFp8(raw[i] / scale, fmt);
    r.kv[i] = mla_ref::decodeFp8(in.kv[i], fmt) * static_cast<double>(scale);
  }
  return r;
}

double mlir::mla::errorAgainstReference(const RandomDecode &r,
                                        const DecodeRun &run) {
  std::vector<double> expected =
      mla_ref::referenceDecode(r.problem, r.q, r.kv);
  std::vector<double> got(run.out.size());
  for (size_t i = 0; i < got.size(); ++i)
    got[i] = mla_ref::bf16ToFloat(run.out[i]);
  return mla_ref::relativeFrobeniusError(got, expected);
}
