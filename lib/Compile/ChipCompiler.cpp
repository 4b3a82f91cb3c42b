//===- ChipCompiler.cpp - one spec, one chip: code object + manifest -----===//
//
// Expands the spec (mla-to-tiles), lowers the kernels for the chip
// (mla-to-gpu), serialises the gpu.module (gpu-module-to-binary) and, for
// NVIDIA, assembles it with ptxas. Reads the resource report (ptxas -v / the
// AMDHSA metadata in the assembly) and fills the manifest (docs/Design.md).
// mla-compile writes what this returns; mla-run runs it on the emulator.
//
//===----------------------------------------------------------------------===//
#include "mla/ChipCompiler.h"
#include "mla/MLAOps.h"
#include "mla/ManifestSpec.h"
#include "mla/Pipelines.h"
#include "mla/SplitCostModel.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::mla;

/// The ROCm "toolkit" folder for gpu-module-to-binary: --rocm-toolkit, else
/// the one installed beside this executable (share/mla-compiler/rocm-toolkit,
/// the same relative place in the build tree and in an install).
std::string mlir::mla::defaultRocmToolkit() {
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  llvm::SmallString<256> p(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(p, "..", "share", "mla-compiler", "rocm-toolkit");
  return std::string(p);
}

static std::string typeName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

llvm::json::Object mlir::mla::splitCostModelManifest() {
  SplitCostParams params;
  return llvm::json::Object{{"program_overhead", params.programOverhead},
                            {"combine_launch", params.combineLaunch},
                            {"combine_per_partial", params.combinePerPartial},
                            {"combine_per_split", params.combinePerSplit}};
}

llvm::json::Object mlir::mla::describeKernel(mla::KernelOp k,
                                             int64_t waveSize) {
  llvm::json::Object o;
  o["name"] = k.getSymName().str();
  llvm::json::Array grid;
  for (Attribute a : k.getGrid())
    grid.push_back(cast<StringAttr>(a).getValue().str());
  o["grid"] = std::move(grid);
  o["block_threads"] = k.getNumWarps() * waveSize;
  o["stage"] = k.getBlockN() ? 1 : 2;
  if (auto v = k.getVariant())
    o["variant"] = v->str();
  if (auto d = k.getDispatchKvMultiple())
    o["dispatch_kv_multiple"] = static_cast<int64_t>(*d);
  auto names = k.getContext()
                   ->getLoadedDialect<MLADialect>()
                   ->getArgNamesAttrHelper()
                   .getAttr(k);
  llvm::json::Array args;
  for (auto [i, t] : llvm::enumerate(k.getArgumentTypes())) {
    llvm::json::Object a;
    if (names && i < names.size())
      a["name"] = cast<StringAttr>(names[i]).getValue().str();
    if (auto mt = dyn_cast<MemRefType>(t)) {
      // Passed as a memref descriptor: 2 pointers, offset, sizes, strides.
      a["kind"] = "memref";
      a["rank"] = mt.getRank();
      a["dtype"] = typeName(mt.getElementType());
      llvm::json::Array shape;
      for (int64_t d : mt.getShape())
        shape.push_back(ShapedType::isDynamic(d) ? llvm::json::Value(nullptr)
                                                 : llvm::json::Value(d));
      a["shape"] = std::move(shape);
    } else if (t.isIndex()) {
      a["kind"] = "i64";
    } else {
      a["kind"] = typeName(t);
    }
    args.push_back(std::move(a));
  }
  o["args"] = std::move(args);
  return o;
}

/// Lowers a clone of the spec module for `chip`, reads the resource report,
/// and fills the manifest. Writes the assembly (and, with `writeFiles`, the
/// code object and manifest) into `outDir` under `stem`.
FailureOr<ChipOutput> mlir::mla::compileForChip(MLIRContext &ctx,
                                                ModuleOp parsed,
                                                const ChipInfo &chip,
                                                const CompileOptions &opts) {
  StringRef outDir = opts.outDir, stem = opts.stem;
  Emit emit = opts.emit;
  llvm::raw_ostream &out = opts.report ? *opts.report : llvm::nulls();
  auto fail = [&](const llvm::Twine &msg) {
    llvm::errs() << "mla-compile: error: " << msg << "\n";
    return 1;
  };
  OwningOpRef<ModuleOp> module = parsed.clone();
  mla::DecodeOp spec = mla::lookupDecodeSpec(*module);
  std::string name = spec.getSymName().str();
  bool nvidia = chip.vendor == Vendor::NVIDIA;
  auto failed = [&](const llvm::Twine &msg) -> FailureOr<ChipOutput> {
    fail(msg);
    return failure();
  };

  ChipOutput result;
  result.chip = chip.name.str();
  result.nvidia = nvidia;
  llvm::json::Object &manifest = result.manifest;
  manifest["manifest_version"] = kManifestVersion;
  manifest["spec"] = name;
  manifest["chip"] = chip.name.str();
  manifest["compute_units"] = chip.facts.computeUnits;
  manifest["num_heads"] = static_cast<int64_t>(spec.getNumHeads());
  manifest["qk_dim"] = static_cast<int64_t>(spec.getQkDim());
  manifest["v_dim"] = static_cast<int64_t>(spec.getVDim());
  manifest["q_seq_len"] = static_cast<int64_t>(spec.getQSeqLen());
  manifest["q_type"] = typeName(spec.getQType());
  manifest["kv_type"] = typeName(spec.getKvType());
  manifest["out_type"] = typeName(spec.getOutType());
  manifest["kv_scale"] = spec.getKvScale().str();
  manifest["softmax_scale"] = spec.getSoftmaxScale().convertToDouble();
  manifest["block_n"] = static_cast<int64_t>(spec.getBlockN());
  manifest["block_m"] = spec.getRowsPerProgram();
  manifest["kv_layout"] = spec.getKVLayout().str();
  manifest["page_size"] = static_cast<int64_t>(spec.getPageSize());
  manifest["split_cost_model"] = splitCostModelManifest();
  manifest["one_launch"] = spec.getOneLaunch().value_or(false);
  manifest["rules"] = llvm::json::Object{
      {"splits", "fixed by the spec when split_candidates has one entry; else "
                 "the candidate minimising split_cost_model (docs/Design.md) "
                 "with compute_units x min(programs_per_cu of stage 1) "
                 "programs at once"},
      {"variant",
       "stage1 mask_free when every kv length is a multiple of "
       "num_splits * dispatch_kv_multiple (or only mask_free exists); "
       "else masked"},
      {"stage2",
       "only when num_splits > 1; stage 1 writes out directly otherwise"},
      {"shared_bytes", "dynamic shared memory per block, set on launch"},
      {"dependent_launch",
       "the kernel may be launched with programmatic stream serialization "
       "(CUDA: cudaLaunchAttributeProgrammaticStreamSerialization) right "
       "behind stage 1; it waits for stage 1's stores itself. A plain "
       "launch is also correct"},
      {"cluster_programs",
       "stage 1 combines up to this many splits itself when launched with "
       "cluster dims (1, num_splits, 1); stage 2 is then not launched. The "
       "launcher does so when the spec's one_launch or the call's flags ask "
       "(MLA_DECODE_ONE_LAUNCH; MLA_DECODE_TWO_LAUNCHES refuses), num_splits "
       "is at most this and the grid's clusters fit on the device at once"}};

  PassManager pm(&ctx);
  mla::buildTileKernelPipeline(pm);
  if (mlir::failed(pm.run(*module)))
    return failure();
  llvm::json::Array kernels;
  std::vector<int64_t> candidates;
  for (mla::KernelOp k : module->getOps<mla::KernelOp>()) {
    kernels.push_back(describeKernel(k, chip.facts.waveSize));
    // Stage 1 combines its splits itself when they run as one cluster
    // (mla.split_cluster_sync), up to the chip's and the combine's limit.
    if (chip.facts.clusterPrograms && k->walk([](mla::SplitClusterSyncOp) {
                                         return WalkResult::interrupt();
                                       }).wasInterrupted())
      kernels.back().getAsObject()->insert(
          {"cluster_programs",
           std::min(chip.facts.clusterPrograms, mla::kMaxClusterPrograms)});
    if (auto c = k.getSplitCandidates(); c && candidates.empty())
      candidates.assign(c->begin(), c->end());
  }
  manifest["split_candidates"] = llvm::json::Array(candidates);

  // Lower, read the shared-memory size of each gpu.func, then serialise.
  PassManager lower(&ctx);
  mla::buildGpuLoweringPipeline(lower, chip.name.str(), opts.tuning);
  if (mlir::failed(lower.run(*module)))
    return failure();
  std::map<std::string, int64_t> shared;
  std::set<std::string> dependent;
  std::map<std::string, ArrayRef<int64_t>> tensorMaps;
  module->walk([&](Operation *op) {
    auto *mla = op->getContext()->getLoadedDialect<MLADialect>();
    auto a = mla->getSharedBytesAttrHelper().getAttr(op);
    if (!a)
      return;
    std::string kname =
        cast<StringAttr>(op->getAttr(SymbolTable::getSymbolAttrName()))
            .getValue()
            .str();
    shared[kname] = a.getInt();
    if (mla->getDependentLaunchAttrHelper().isAttrPresent(op))
      dependent.insert(kname);
    if (auto box = mla->getKvTensorMapAttrHelper().getAttr(op))
      tensorMaps[kname] = box.asArrayRef();
  });
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
    return failed("cannot create " + outDir + ": " + ec.message());
  auto path = [&](StringRef ext) {
    llvm::SmallString<256> p(outDir);
    llvm::sys::path::append(p, stem + ext);
    return std::string(p);
  };
  auto writeFile = [&](const std::string &file, StringRef text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
    if (ec)
      return false;
    os << text;
    return true;
  };
  // gpu-module-to-binary replaces the gpu.module with its serialised object.
  auto serialise = [&](ModuleOp m, StringRef format,
                       StringRef toolkit) -> FailureOr<std::string> {
    PassManager pm(&ctx);
    GpuModuleToBinaryPassOptions toBinary;
    toBinary.compilationTarget = format.str();
    toBinary.toolkitPath = toolkit.str();
    pm.addPass(createGpuModuleToBinaryPass(toBinary));
    if (mlir::failed(pm.run(m)))
      return failure();
    std::string text;
    m.walk([&](gpu::BinaryOp bin) {
      for (Attribute o : bin.getObjects())
        text = cast<gpu::ObjectAttr>(o).getObject().str();
    });
    if (text.empty())
      return failure();
    return text;
  };

  std::map<std::string, PtxasResources> ptxas;
  std::map<std::string, AmdhsaResources> amdhsa;
  std::string arch = chip.name.str();
  std::string amdIsa;
  bool keepIsa = emit != Emit::Header;
  if (nvidia) {
    // NVPTX: PTX from LLVM, the cubin and the resource figures from ptxas.
    // The PTX and the ptxas report are written even for a header (ptxas
    // reads the one and writes the other).
    auto ptx = serialise(*module, "isa", "");
    if (mlir::failed(ptx) || !writeFile(path(".ptx"), *ptx))
      return failed("could not produce " + path(".ptx"));
    std::string report = path(".ptxas.txt");
    std::string cubin = path(".cubin");
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(report),
                                            StringRef(report)};
    std::string errMsg;
    // The redirect opens the report without truncating it: a longer one
    // from an earlier compile into this folder would leave its tail, and
    // its figures, behind this run's.
    llvm::sys::fs::remove(report);
    int rc = llvm::sys::ExecuteAndWait(
        opts.ptxas,
        {opts.ptxas, "-arch=" + arch, "-O3", "-v", path(".ptx"), "-o", cubin},
        std::nullopt, redirects, 0, 0, &errMsg);
    auto reportText = llvm::MemoryBuffer::getFile(report);
    if (rc != 0)
      return failed("ptxas (" + opts.ptxas + ") failed (" + Twine(rc) + ") " +
                    errMsg + "\n" +
                    (reportText ? (*reportText)->getBuffer() : StringRef()));
    auto cubinText = llvm::MemoryBuffer::getFile(cubin, /*IsText=*/false);
    if (!cubinText)
      return failed("ptxas wrote no " + cubin);
    result.binary = (*cubinText)->getBuffer().str();
    result.binaryExt = ".cubin";
    if (emit == Emit::Isa)
      llvm::sys::fs::remove(cubin);
    ptxas =
        parsePtxasReport(reportText ? (*reportText)->getBuffer() : StringRef());
    if (emit == Emit::Header) {
      llvm::sys::fs::remove(path(".ptx"));
      llvm::sys::fs::remove(report);
      llvm::sys::fs::remove(cubin);
    }
    out << "kernel resources (" << arch << ", ptxas -v):\n";
  } else {
    // AMDGPU: the assembly (for reading and the ISA tests) and the code
    // object, linked by the toolkit folder's ld.lld. Resource figures come
    // from the AMDHSA metadata (amdhsa.kernels) in the assembly: the record
    // the code object's note carries, read without ROCm's comgr.
    OwningOpRef<ModuleOp> copy = module->clone();
    std::string toolkit =
        opts.rocmToolkit.empty() ? defaultRocmToolkit() : opts.rocmToolkit;
    auto isa = serialise(*copy, "isa", toolkit);
    if (mlir::succeeded(isa))
      amdIsa = *isa;
    auto bin = serialise(*module, "bin", toolkit);
    if (mlir::failed(isa) || mlir::failed(bin))
      return failed("gpu-module-to-binary failed for " + chip.name +
                    " (toolkit folder: " + toolkit + ")");
    if (keepIsa && !writeFile(path(".s"), *isa))
      return failed("cannot write into " + outDir);
    result.binary = *bin;
    result.binaryExt = ".hsaco";
    amdhsa = parseAmdhsaMetadata(*isa);
    out << "kernel resources (" << arch << ", AMDHSA metadata):\n";
  }
  manifest["binary"] = stem.str() + result.binaryExt;

  for (llvm::json::Value &kv : kernels) {
    llvm::json::Object &k = *kv.getAsObject();
    std::string kname = k.getString("name")->str();
    k["shared_bytes"] = shared[kname];
    if (dependent.count(kname))
      k["dependent_launch"] = true;
    // The lowering appended a tensor map over kv (mla.kv_tensor_map): the
    // last parameter, 128 bytes that the launcher builds per call.
    if (auto it = tensorMaps.find(kname); it != tensorMaps.end())
      k.getArray("args")->push_back(
          llvm::json::Object{{"name", "kv"},
                             {"kind", "tensor_map"},
                             {"rank", int64_t(it->second.size())},
                             {"dtype", manifest.getString("kv_type")->str()},
                             {"shape", llvm::json::Array(it->second)}});
    llvm::json::Object r;
    // Only the figures the backend reported (-1: absent).
    auto put = [&](StringRef key, int64_t v) {
      if (v >= 0)
        r[key] = v;
    };
    int64_t threads = k.getInteger("block_threads").value_or(0);
    if (nvidia) {
      const PtxasResources &p = ptxas[kname];
      put("registers", p.registers);
      put("spill_store_bytes", p.spillStoreBytes);
      put("stack_bytes", p.stackBytes);
      int64_t perSm = sm90ProgramsPerSm(p.registers, threads, shared[kname]);
      r["programs_per_sm"] = perSm;
      r["programs_per_cu"] = perSm;
      out << "  " << kname << ": " << p.registers << " registers, "
          << p.spillStoreBytes << " B spilled, " << p.stackBytes << " B stack, "
          << shared[kname] << " B shared, " << threads << " threads, " << perSm
          << " programs/SM\n";
    } else {
      const AmdhsaResources &a = amdhsa[kname];
      put("vgprs", a.vgprs);
      put("agprs", a.agprs);
      put("sgprs", a.sgprs);
      put("vgpr_spills", a.vgprSpills);
      put("sgpr_spills", a.sgprSpills);
      put("scratch_bytes", a.scratchBytes);
      put("lds_static_bytes", a.ldsStaticBytes);
      int64_t wavesPerGroup =
          std::max<int64_t>(1, threads / chip.facts.waveSize);
      CdnaOccupancy occ = cdnaOccupancy(
          std::max<int64_t>(0, a.vgprs), std::max<int64_t>(0, a.agprs), threads,
          chip.facts.waveSize, shared[kname], chip.facts.sharedMemBytes);
      r["waves_per_simd"] = occ.wavesPerSimd;
      r["programs_per_cu"] = occ.programsPerCu;
      out << "  " << kname << ": " << a.vgprs << " VGPRs, " << a.agprs
          << " AGPRs, " << a.sgprs << " SGPRs, " << a.vgprSpills
          << " VGPR spills, " << shared[kname] << " B LDS, " << a.scratchBytes
          << " B scratch, " << occ.wavesPerSimd << " waves/SIMD, " << threads
          << " threads\n";
      if (shared[kname] > chip.facts.sharedMemBytes)
        return failed(kname + " needs " + Twine(shared[kname]) + " B of LDS; " +
                      chip.name + " has " + Twine(chip.facts.sharedMemBytes));
      if (k.getInteger("stage").value_or(0) == 1) {
        auto [n, mfma] = kvLoopInstructions(amdIsa, kname);
        int64_t blockN = manifest.getInteger("block_n").value_or(1);
        if (n) {
          double perToken = static_cast<double>(n) * wavesPerGroup / blockN;
          r["kv_loop_instructions"] = n;
          r["kv_loop_mfma"] = mfma;
          r["wave_instructions_per_kv_token"] = perToken;
          out << "    KV loop: " << n << " instructions (" << mfma
              << " MFMA) per " << blockN << " tokens x " << wavesPerGroup
              << " waves = " << llvm::format("%.1f", perToken)
              << " wave-instructions per KV token\n";
        }
      }
    }
    k["resources"] = std::move(r);
  }
  manifest["kernels"] = std::move(kernels);

  if (emit == Emit::All) {
    if (!nvidia && !writeFile(path(result.binaryExt), result.binary))
      return failed("cannot write " + path(result.binaryExt));
    std::error_code ec;
    llvm::raw_fd_ostream json(path(".json"), ec);
    if (ec)
      return failed("cannot write " + path(".json"));
    json << llvm::formatv("{0:2}",
                          llvm::json::Value(llvm::json::Object(manifest)))
         << "\n";
    out << "wrote " << path(result.binaryExt) << ", " << path(".json") << "\n";
  } else if (emit == Emit::Isa) {
    out << "wrote " << path(nvidia ? ".ptx" : ".s") << "\n";
  }
  return result;
}
