//===- SpecFile.cpp - a spec file parsed for a tool -----------------------===//
#include "mla/SpecFile.h"
#include "mla/Pipelines.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static DialectRegistry compilerDialects() {
  DialectRegistry registry;
  mla::registerCompilerDialects(registry);
  return registry;
}

mla::SpecFile::SpecFile() : ctx(compilerDialects()) {
  // A diagnostic points at the spec line; the lowered op it fired on,
  // printed in generic form, would bury it.
  ctx.printOpOnDiagnostic(false);
  diagnostics = std::make_unique<SourceMgrDiagnosticHandler>(sourceMgr, &ctx);
}

mla::SpecFile::~SpecFile() = default;

std::unique_ptr<mla::SpecFile>
mla::SpecFile::open(StringRef path, StringRef name, StringRef tool) {
  std::unique_ptr<SpecFile> f(new SpecFile());
  f->parsed = parseSourceFile<ModuleOp>(path, f->sourceMgr, &f->ctx);
  if (!f->parsed)
    return nullptr;
  f->decode = lookupDecodeSpec(*f->parsed, name);
  if (!f->decode) {
    llvm::errs() << tool << ": error: no mla.decode "
                 << (name.empty() ? "in " + path.str()
                                  : "named '" + name.str() + "' in " +
                                        path.str())
                 << "\n";
    return nullptr;
  }
  return f;
}
