//===- HostRunner.cpp - run tile kernels on the CPU -----------------------===//
#include "mla/HostRunner.h"
#include "mla/MLAOps.h"
#include "mla/Pipelines.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"

using namespace mlir;
using namespace mlir::mla;

HostModule::~HostModule() = default;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

llvm::Expected<std::unique_ptr<HostModule>>
HostModule::compile(ModuleOp tiles) {
  MLIRContext *ctx = tiles.getContext();
  std::unique_ptr<HostModule> host(new HostModule());
  for (KernelOp k : tiles.getOps<KernelOp>())
    host->kernels.push_back(
        {k.getSymName().str(), std::vector<Type>(k.getArgumentTypes().begin(),
                                                 k.getArgumentTypes().end())});
  if (host->kernels.empty())
    return makeError("the module has no mla.kernel (expand the spec first)");

  OwningOpRef<ModuleOp> copy = tiles.clone();
  PassManager pm(ctx);
  buildHostLoweringPipeline(pm);
  if (failed(pm.run(*copy)))
    return makeError("the mla-to-host pipeline failed (see diagnostics)");

  static bool nativeInit = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)nativeInit;
  registerBuiltinDialectTranslation(*ctx);
  registerLLVMDialectTranslation(*ctx);

  ExecutionEngineOptions opts;
  auto transformer = makeOptimizingTransformer(/*optLevel=*/2, /*sizeLevel=*/0,
                                               /*targetMachine=*/nullptr);
  opts.transformer = transformer;
  auto engine = ExecutionEngine::create(*copy, opts);
  if (!engine)
    return engine.takeError();
  host->engine = std::move(*engine);
  return std::move(host);
}

llvm::Error HostModule::launch(llvm::StringRef name,
                               llvm::ArrayRef<int64_t> grid,
                               llvm::ArrayRef<HostArg> args) {
  auto it = llvm::find_if(kernels,
                          [&](const KernelSig &k) { return k.name == name; });
  if (it == kernels.end())
    return makeError("no kernel named '" + name + "'");
  if (args.size() != it->args.size())
    return makeError("kernel '" + name + "' takes " +
                     llvm::Twine(it->args.size()) + " arguments, got " +
                     llvm::Twine(args.size()));
  if (grid.empty() || grid.size() > 3)
    return makeError("a grid has 1 to 3 extents");
  for (int64_t g : grid)
    if (g < 0)
      return makeError("grid extents must be non-negative");

  // Memref descriptors {allocated, aligned, offset, sizes[r], strides[r]}
  // live in `descs`; `slots` holds what each packed argument points to.
  std::vector<std::vector<int64_t>> descs;
  descs.reserve(args.size());
  std::vector<int64_t> slots(3 + args.size());
  std::vector<void *> packed(3 + args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    Type t = it->args[i];
    const HostArg &a = args[i];
    void *slot = &slots[3 + i];
    if (auto mt = dyn_cast<MemRefType>(t)) {
      if (a.kind != HostArg::Kind::Buffer)
        return makeError("argument #" + llvm::Twine(i) + " must be a buffer");
      int64_t elements = 1;
      for (int64_t s : a.sizes)
        elements *= s;
      if (!a.data && elements != 0)
        return makeError("argument #" + llvm::Twine(i) + " is a null buffer");
      if (static_cast<int64_t>(a.sizes.size()) != mt.getRank())
        return makeError("argument #" + llvm::Twine(i) + " must have rank " +
                         llvm::Twine(mt.getRank()));
      std::vector<int64_t> d(3 + 2 * a.sizes.size());
      d[0] = d[1] = reinterpret_cast<int64_t>(a.data);
      d[2] = 0;
      int64_t stride = 1;
      for (int64_t r = mt.getRank() - 1; r >= 0; --r) {
        int64_t dim = mt.getDimSize(r);
        if (a.sizes[r] < 0 ||
            (!ShapedType::isDynamic(dim) && dim != a.sizes[r]))
          return makeError("argument #" + llvm::Twine(i) + " dimension " +
                           llvm::Twine(r) + " must be " + llvm::Twine(dim));
        d[3 + r] = a.sizes[r];
        d[3 + mt.getRank() + r] = stride;
        stride *= a.sizes[r];
      }
      descs.push_back(std::move(d));
      slots[3 + i] = reinterpret_cast<int64_t>(descs.back().data());
    } else if (t.isIndex()) {
      if (a.kind != HostArg::Kind::Index)
        return makeError("argument #" + llvm::Twine(i) + " must be an index");
      slots[3 + i] = a.index;
    } else if (t.isF32()) {
      if (a.kind != HostArg::Kind::F32)
        return makeError("argument #" + llvm::Twine(i) + " must be an f32");
      std::memcpy(slot, &a.f32, sizeof(float));
    } else {
      return makeError("unsupported kernel argument type");
    }
    packed[3 + i] = slot;
  }
  for (int i = 0; i < 3; ++i)
    packed[i] = &slots[i];

  std::string fn = ("_mlir_ciface_" + name).str();
  auto entry = engine->lookupPacked(fn);
  if (!entry)
    return entry.takeError();
  int64_t ext[3] = {1, 1, 1};
  for (size_t i = 0; i < grid.size(); ++i)
    ext[i] = grid[i];
  for (int64_t z = 0; z < ext[2]; ++z)
    for (int64_t y = 0; y < ext[1]; ++y)
      for (int64_t x = 0; x < ext[0]; ++x) {
        slots[0] = x;
        slots[1] = y;
        slots[2] = z;
        (*entry)(packed.data());
      }
  return llvm::Error::success();
}
