//===- mla-run.cpp - run a decode spec on the CPU -------------------------===//
//
//   mla-run kernels/deepseek_r1_decode_fp8.mlir --batch=4 --kv-len=1024
//   mla-run spec.mlir --kv-lens=1,17,1000 --splits=7 --seed=5
//
// Expands the spec (mla-to-tiles), compiles its kernels for the host
// (mla-to-host + JIT), runs them on fresh random inputs under the launch
// rules, and prints the relative error against a float64 reference.
// Exits 1 when the error exceeds --tolerance or the output holds a NaN.
//
//===----------------------------------------------------------------------===//
#include "EmulatedRun.h"
#include "mla/DecodeRunner.h"
#include "mla/MLAOps.h"
#include "mla/Pipelines.h"
#include "mla/SpecFile.h"
#include "mla/Target.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory runCategory("mla-run options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<spec.mlir>"),
                                      cl::Required, cl::cat(runCategory));
static cl::opt<std::string>
    specName("spec", cl::desc("mla.decode to run (default: the first)"),
             cl::cat(runCategory));
static cl::opt<int64_t> batchOpt("batch", cl::desc("sequences"), cl::init(4),
                                 cl::cat(runCategory));
static cl::opt<int64_t> kvLenOpt("kv-len",
                                 cl::desc("KV length of every sequence"),
                                 cl::init(1024), cl::cat(runCategory));
static cl::list<int64_t>
    kvLens("kv-lens", cl::CommaSeparated,
           cl::desc("per-sequence KV lengths (overrides --batch/--kv-len)"),
           cl::cat(runCategory));
static cl::opt<std::string> splitsOpt("splits", cl::desc("auto or a count"),
                                      cl::init("auto"), cl::cat(runCategory));
static cl::opt<std::string>
    chipOpt("chip",
            cl::desc("gfx950 / gfx942: compile for that chip and run the code "
                     "object on the ISA "
                     "emulator; sm_90 / host: run on the CPU with that chip's "
                     "split rule; not "
                     "given: on the CPU with gfx950's split rule"),
            cl::init("gfx950"), cl::cat(runCategory));
static cl::opt<int64_t>
    patchOffset("patch-offset",
                cl::desc("test hook: overwrite this byte of the code object"),
                cl::init(-1), cl::Hidden, cl::cat(runCategory));
static cl::opt<bool> mutateLayout(
    "test-mutate-mfma-layout",
    cl::desc(
        "test hook: compile with a deliberately wrong MFMA B-operand layout"),
    cl::init(false), cl::Hidden, cl::cat(runCategory));
static cl::opt<unsigned> patchByte("patch-byte",
                                   cl::desc("the byte for --patch-offset"),
                                   cl::init(0), cl::Hidden,
                                   cl::cat(runCategory));
static cl::opt<uint64_t> seedOpt("seed",
                                 cl::desc("input seed (default: fresh)"),
                                 cl::init(0), cl::cat(runCategory));
static cl::opt<double>
    tolerance("tolerance",
              cl::desc("largest accepted relative Frobenius error"),
              cl::init(2e-2), cl::cat(runCategory));

static cl::opt<int>
    qScaleLog2("q-scale-log2",
               cl::desc("multiply the random Q by 2^K and divide the spec's "
                        "softmax scale by it (the same scores): how the "
                        "kernels cope with Q's magnitude"),
               cl::init(0), cl::cat(runCategory));

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "mla-run: error: " << msg << "\n";
  return 2;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // --stats (the emulator's counters) is taken before LLVM's parser, which
  // owns a -stats of its own.
  bool statsOpt = false;
  std::vector<const char *> args;
  for (int i = 0; i < argc; ++i) {
    llvm::StringRef a = argv[i];
    if (i && (a == "--stats" || a == "-stats"))
      statsOpt = true;
    else
      args.push_back(argv[i]);
  }
  cl::HideUnrelatedOptions(runCategory);
  cl::ParseCommandLineOptions(int(args.size()), args.data(),
                              "run an MLA decode spec on the CPU or, with "
                              "--chip=gfx950 / gfx942, compiled for that "
                              "chip on the AMD ISA emulator\n\n  --stats  with "
                              "an AMD --chip: print the emulator's "
                              "counters per dispatch\n");

  mla::setMatrixLayoutMutationForTesting(mutateLayout);
  const mla::ChipInfo *chip = mla::lookupChip(chipOpt);
  bool emulate = chip && chipOpt.getNumOccurrences() &&
                 StringRef(chipOpt).starts_with("gfx");
  if (!chip)
    return fail("unknown chip '" + chipOpt +
                "' (known: " + mla::knownChipNames() + ")");
  int64_t splits = 0;
  if (emulate && splitsOpt != "auto")
    return fail("--splits applies to the CPU run; on the emulator the C "
                "launcher chooses");
  if (splitsOpt != "auto" &&
      (llvm::StringRef(splitsOpt).getAsInteger(10, splits) || splits < 1))
    return fail("--splits must be 'auto' or a positive count, got '" +
                splitsOpt + "'");
  std::vector<int64_t> lengths(kvLens.begin(), kvLens.end());
  if (lengths.empty()) {
    if (batchOpt < 1 || kvLenOpt < 0)
      return fail("--batch must be positive and --kv-len non-negative");
    lengths.assign(batchOpt, kvLenOpt);
  }
  uint64_t seed =
      seedOpt
          ? seedOpt
          : static_cast<uint64_t>(
                std::chrono::steady_clock::now().time_since_epoch().count());

  auto file = mla::SpecFile::open(inputFile, specName, "mla-run");
  if (!file)
    return 2;
  MLIRContext &ctx = file->context();
  ModuleOp module = file->module();
  mla::DecodeOp spec = file->spec();
  std::string name = spec.getSymName().str();
  if (qScaleLog2)
    spec.setSoftmaxScale(llvm::APFloat(std::ldexp(
        spec.getSoftmaxScale().convertToFloat(), -qScaleLog2.getValue())));
  double smScale = spec.getSoftmaxScale().convertToDouble();

  // The emulated run compiles the spec itself, as mla-compile does.
  OwningOpRef<ModuleOp> source = module.clone();
  PassManager pm(&ctx);
  mla::buildTileKernelPipeline(pm);
  if (failed(pm.run(module)))
    return 2;
  auto kernels = mla::findDecodeKernels(module, name);
  if (!kernels)
    return fail(llvm::toString(kernels.takeError()));
  std::unique_ptr<mla::HostModule> host;
  if (!emulate) {
    auto compiled = mla::HostModule::compile(module);
    if (!compiled)
      return fail(llvm::toString(compiled.takeError()));
    host = std::move(*compiled);
  }
  auto inputs = mla::makeRandomDecode(*kernels, lengths, smScale, seed);
  if (!inputs)
    return fail(llvm::toString(inputs.takeError()));
  if (qScaleLog2)
    if (llvm::Error e = mla::scaleQueries(*inputs, qScaleLog2))
      return fail("--q-scale-log2: " + llvm::toString(std::move(e)));

  auto t0 = std::chrono::steady_clock::now();
  llvm::Expected<mla::DecodeRun> run = mla::DecodeRun();
  if (emulate) {
    mla::EmulatedOptions eopts;
    eopts.stats = statsOpt;
    eopts.patchOffset = patchOffset;
    eopts.patchByte = uint8_t(patchByte);
    if (failed(mla::runOnEmulator(ctx, *source, *chip, *kernels, *inputs, eopts,
                                  *run, llvm::outs())))
      return 2;
  } else {
    run = mla::runDecode(*host, *kernels, inputs->inputs, splits,
                         chip->facts.computeUnits);
  }
  if (!run)
    return fail(llvm::toString(run.takeError()));
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  double err = mla::errorAgainstReference(*inputs, *run);

  llvm::outs() << "spec      " << name << " (KV " << kernels->kvType << ")\n";
  llvm::outs() << "batch     " << lengths.size() << ", kv lengths ";
  if (llvm::all_equal(lengths))
    llvm::outs() << lengths.front() << " each";
  else
    llvm::interleaveComma(lengths, llvm::outs());
  llvm::outs() << "\nsplits    " << run->splits
               << (splits ? " (given)"
                          : " (auto, " + chip->name.str() + " with " +
                                std::to_string(chip->facts.computeUnits) +
                                " CUs, the C launcher's rule)")
               << "\nstage 1   @" << run->stage1 << "\nstage 2   "
               << (run->ranStage2 ? "@" + kernels->stage2
                                  : std::string("skipped (one split)"))
               << "\nseed      " << seed << "\ncpu time  "
               << llvm::format("%.3f", secs) << " s\n";
  llvm::outs() << "rel. Frobenius error vs float64 reference: "
               << llvm::format("%.3e", err) << " (tolerance "
               << llvm::format("%.1e", tolerance.getValue()) << ")\n";
  if (!(err <= tolerance)) {
    llvm::outs() << "FAILED\n";
    return 1;
  }
  llvm::outs() << "OK\n";
  return 0;
}
