//===- SpecFile.h - a spec file parsed for a tool ---------------*- C++ -*-===//
#ifndef MLA_SPECFILE_H
#define MLA_SPECFILE_H

#include "mla/MLAOps.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>

namespace mlir {
class SourceMgrDiagnosticHandler;
namespace mla {

/// A spec file as the tools (mla-compile, mla-run) open it: a context with
/// every dialect the pipelines need (registerCompilerDialects), diagnostics
/// that point at the file's lines without the lowered op printed after
/// them, the parsed module and its `mla.decode`.
class SpecFile {
public:
  /// Parses `path` and finds the `mla.decode` named `name` (the first one
  /// where `name` is empty). On failure returns null after printing the
  /// parser's diagnostic, or "`tool`: error: no mla.decode ..." on stderr.
  static std::unique_ptr<SpecFile> open(StringRef path, StringRef name,
                                        StringRef tool);
  ~SpecFile();

  MLIRContext &context() { return ctx; }
  ModuleOp module() { return *parsed; }
  DecodeOp spec() { return decode; }

private:
  SpecFile();
  MLIRContext ctx;
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<SourceMgrDiagnosticHandler> diagnostics;
  OwningOpRef<ModuleOp> parsed;
  DecodeOp decode;
};

} // namespace mla
} // namespace mlir

#endif // MLA_SPECFILE_H
