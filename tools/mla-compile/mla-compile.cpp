//===- mla-compile.cpp - spec -> GPU binaries + manifest ------------------===//
//
//   mla-compile kernels/deepseek_r1_decode_fp8.mlir --chip=sm_90 -o DIR
//   mla-compile kernels/deepseek_r1_decode_fp8.mlir --chip=gfx950 -o DIR
//   mla-compile SPEC --chip=gfx950,sm_90 --emit=header [--embed=no] -o DIR
//
// Expands the spec (mla-to-tiles), lowers the kernels for the chip
// (mla-to-gpu), serialises the gpu.module (gpu-module-to-binary) and, for
// NVIDIA, assembles it with ptxas from the CUDA toolkit. --emit=all (the
// default) writes into DIR:
//
//   <spec>.ptx + .cubin / <spec>.s + .hsaco   the code
//   <spec>.json                 the manifest: kernels, argument layout,
//                               grid / block / shared-memory rules, split and
//                               variant rules, resources
//
// --emit=isa only the assembly; --emit=header one C header for all chips
// (HeaderEmitter.cpp, docs/Embedding.md). A resource report per kernel is
// printed: registers, spills, shared memory / LDS, occupancy, and on AMDGPU
// the KV loop's wave-instructions per KV token (from `ptxas -v` / the AMDHSA
// metadata).
//
//===----------------------------------------------------------------------===//
#include "HeaderEmitter.h"
#include "mla/ChipCompiler.h"
#include "mla/ManifestSpec.h"
#include "mla/SpecFile.h"
#include "mla/Target.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory compileCategory("mla-compile options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<spec.mlir>"),
                                      cl::Required, cl::cat(compileCategory));
static cl::opt<std::string> chipOpt("chip", cl::desc("target chip"),
                                    cl::init("sm_90"),
                                    cl::cat(compileCategory));
static cl::opt<std::string> outDir("o", cl::desc("output folder"), cl::Required,
                                   cl::cat(compileCategory));
static cl::opt<std::string> ptxasPath("ptxas",
                                      cl::desc("ptxas to assemble NVPTX with"),
                                      cl::init("/usr/local/cuda/bin/ptxas"),
                                      cl::cat(compileCategory));
static cl::opt<bool> wgmmaSmemA(
    "wgmma-smem-a",
    cl::desc("sm_90a, fp8 KV with 16-bit Q and P: S^T reads the converted KV "
             "tile from shared memory instead of taking it as wgmma's "
             "register A (the earlier path, for comparison: docs/Design.md)"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<bool> wgmmaRegisterV(
    "wgmma-register-v",
    cl::desc("sm_90a, fp8 KV with 16-bit Q and P: O^T takes V as wgmma's "
             "register A (ldmatrix.trans of its bytes) instead of reading a "
             "converted 16-bit copy from shared memory (opt-in, slower on "
             "the H100, for comparison: docs/Design.md)"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<bool> pageEntriesAhead(
    "page-entries-ahead",
    cl::desc("sm_90a, paged fp8 KV in pages of whole tiles: each tile's page "
             "entry is loaded one tile before its bytes instead of with them "
             "(faster on the H100, slower on the H200, for comparison: "
             "docs/Design.md, Paged KV)"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<bool> kvTileFirst(
    "kv-tile-first",
    cl::desc("sm_90a: the KV loop's first tile goes out before Q's copy "
             "instead of after Q's loads (the earlier order, for comparison: "
             "docs/Design.md)"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<int64_t> kvEvictFirstTiles(
    "kv-evict-first-tiles",
    cl::desc("sm_90a, the KV tile's reads (fp8 loads into registers a tile "
             "ahead, tensor-map copies; not paged, not mxfp4) carry an L2 "
             "evict-first hint in programs of at most this many KV tiles "
             "(-1: the chip's bound, 16 on sm_90a; 0: no hint; for "
             "comparison: docs/Design.md)"),
    cl::init(-1), cl::cat(compileCategory));
static cl::opt<bool> e4m3DoubleBuffer(
    "e4m3-double-buffer",
    cl::desc("sm_90a, a KV tile read as e4m3 (fp8 Q and P) and sent by "
             "tensor-map copies: two buffers, V^T transposed into V's own "
             "atoms so that two programs still fit an SM (for comparison: "
             "docs/Design.md)"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<std::string> rocmToolkit(
    "rocm-toolkit",
    cl::desc("folder whose llvm/bin/ld.lld links AMDGPU code objects "
             "(default: <bin>/../share/mla-compiler/rocm-toolkit)"),
    cl::init(""), cl::cat(compileCategory));
static cl::opt<std::string> emitOpt(
    "emit",
    cl::desc("all: code object + assembly + manifest (default); isa: the "
             "assembly (.s / .ptx) only; header: one C header for all "
             "--chip values (comma-separated), see docs/Embedding.md"),
    cl::init("all"), cl::cat(compileCategory));
static cl::opt<std::string> embedOpt(
    "embed",
    cl::desc("with --emit=header: yes embeds the code objects as byte arrays, "
             "no writes them beside the header"),
    cl::init("yes"), cl::cat(compileCategory));
static cl::opt<std::string>
    headerNameOpt("header-name",
                  cl::desc("file name of the header (default <spec>.h)"),
                  cl::init(""), cl::cat(compileCategory));

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "mla-compile: error: " << msg << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(compileCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "compile an MLA decode spec for GPUs\n");

  using mla::Emit;
  Emit emit = emitOpt == "all"      ? Emit::All
              : emitOpt == "isa"    ? Emit::Isa
              : emitOpt == "header" ? Emit::Header
                                    : static_cast<Emit>(-1);
  if (static_cast<int>(emit) < 0)
    return fail("--emit must be all, isa or header (got '" + emitOpt + "')");
  if (embedOpt != "yes" && embedOpt != "no")
    return fail("--embed must be yes or no (got '" + embedOpt + "')");
  SmallVector<StringRef> chipNames;
  StringRef(chipOpt).split(chipNames, ',', -1, /*KeepEmpty=*/false);
  if (chipNames.empty())
    return fail("--chip names no chip");
  if (chipNames.size() > 1 && emit != Emit::Header)
    return fail("several chips (" + chipOpt +
                ") need --emit=header; "
                "otherwise compile one chip per call");
  std::vector<const mla::ChipInfo *> chips;
  for (StringRef c : chipNames) {
    const mla::ChipInfo *chip = mla::lookupChip(c);
    if (!chip)
      return fail("unknown chip '" + c + "' (known: " + mla::knownChipNames() +
                  ")");
    if (chip->vendor == mla::Vendor::Host)
      return fail("'" + c + "' is not a GPU chip");
    if (llvm::any_of(chips, [&](const mla::ChipInfo *o) { return o == chip; }))
      return fail("chip '" + c + "' is named twice");
    chips.push_back(chip);
  }

  auto file = mla::SpecFile::open(inputFile, /*name=*/"", "mla-compile");
  if (!file)
    return 1;
  std::string name = file->spec().getSymName().str();

  std::vector<mla::ChipOutput> outputs;
  for (const mla::ChipInfo *chip : chips) {
    // One chip keeps the plain file names (python/mla_torch.py reads
    // <spec>.json); a header's files carry the chip in their names.
    std::string stem =
        emit == Emit::Header ? name + "." + chip->name.str() : name;
    mla::CompileOptions opts;
    opts.outDir = outDir;
    opts.stem = stem;
    opts.emit = emit;
    opts.ptxas = ptxasPath;
    opts.rocmToolkit = rocmToolkit;
    opts.tuning = {.wgmmaSmemA = wgmmaSmemA,
                   .wgmmaRegisterV = wgmmaRegisterV,
                   .pageEntriesAhead = pageEntriesAhead,
                   .kvTileFirst = kvTileFirst,
                   .kvEvictFirstTiles = kvEvictFirstTiles,
                   .e4m3DoubleBuffer = e4m3DoubleBuffer};
    opts.report = &llvm::outs();
    auto out = mla::compileForChip(file->context(), file->module(), *chip,
                                  opts);
    if (failed(out))
      return 1;
    outputs.push_back(std::move(*out));
  }
  if (emit != Emit::Header)
    return 0;

  llvm::SmallString<256> dir(outDir.getValue());
  llvm::sys::fs::make_absolute(dir);
  bool embed = embedOpt == "yes";
  std::vector<mla_compile::HeaderTarget> targets;
  std::vector<std::unique_ptr<mla::ManifestSpec>> descs;
  for (mla::ChipOutput &o : outputs) {
    auto desc = mla::ManifestSpec::read(o.manifest, o.binary);
    if (!desc)
      return fail("the manifest for " + o.chip +
                  " does not read back: " + llvm::toString(desc.takeError()));
    descs.push_back(std::move(*desc));
    mla_compile::HeaderTarget t{o.chip, descs.back()->desc(), o.binary, ""};
    if (!embed) {
      t.codeFile = name + "." + o.chip + o.binaryExt;
      llvm::SmallString<256> p(dir);
      llvm::sys::path::append(p, t.codeFile);
      std::error_code ec;
      llvm::raw_fd_ostream os(p, ec);
      if (ec)
        return fail("cannot write " + p);
      os << o.binary;
    }
    targets.push_back(std::move(t));
  }
  std::string headerName =
      headerNameOpt.empty() ? name + ".h" : headerNameOpt.getValue();
  llvm::SmallString<256> header(dir);
  llvm::sys::path::append(header, headerName);
  std::error_code ec;
  llvm::raw_fd_ostream os(header, ec);
  if (ec)
    return fail("cannot write " + header);
  mla_compile::emitLauncherHeader(os, name, inputFile, dir, targets, embed);
  llvm::outs() << "wrote " << header << " (" << outputs.size() << " chip"
               << (outputs.size() > 1 ? "s" : "") << ", code "
               << (embed ? "embedded" : "beside it") << ")\n";
  return 0;
}
