//===- HostRunner.h - run tile kernels on the CPU ---------------*- C++ -*-===//
//
// Compiles a module of `mla.kernel`s for the host (mla-to-host pipeline +
// LLVM ExecutionEngine) and runs kernels over their launch grid on host
// buffers. Used by the numerics tests and by `mla-run`.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_HOSTRUNNER_H
#define MLA_HOSTRUNNER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <vector>

namespace mlir {
class ExecutionEngine;
namespace mla {

/// One kernel argument: a dense row-major buffer, an index or an f32.
struct HostArg {
  enum class Kind { Buffer, Index, F32 } kind;
  void *data = nullptr;
  std::vector<int64_t> sizes;
  int64_t index = 0;
  float f32 = 0;

  static HostArg buffer(void *data, std::vector<int64_t> sizes) {
    return {Kind::Buffer, data, std::move(sizes), 0, 0};
  }
  static HostArg scalarIndex(int64_t v) {
    return {Kind::Index, nullptr, {}, v, 0};
  }
  static HostArg scalarF32(float v) { return {Kind::F32, nullptr, {}, 0, v}; }
};

class HostModule {
public:
  ~HostModule();
  /// Lowers a copy of `tiles` (tile kernels, specs already expanded) with
  /// the mla-to-host pipeline and JIT-compiles it.
  static llvm::Expected<std::unique_ptr<HostModule>> compile(ModuleOp tiles);

  /// Runs kernel `name` once per program of `grid` (up to 3 extents; missing
  /// ones are 1). Checks the arguments against the kernel's signature.
  llvm::Error launch(llvm::StringRef name, llvm::ArrayRef<int64_t> grid,
                     llvm::ArrayRef<HostArg> args);

private:
  struct KernelSig {
    std::string name;
    std::vector<Type> args;
  };
  HostModule() = default;
  std::unique_ptr<ExecutionEngine> engine;
  std::vector<KernelSig> kernels;
};

} // namespace mla
} // namespace mlir

#endif // MLA_HOSTRUNNER_H
