//===- mla/ManifestSpec.h - a manifest as the launcher's descriptor -*- C++
//-*-===//
//
// The C launcher takes an mla_spec_desc; generated headers spell it out as
// C initialisers (mla-compile --emit=header). This builds the same
// descriptor in memory from a manifest and a code object, for programs that
// compile and run in one process (mla-run on the emulator).
//
//===----------------------------------------------------------------------===//
#ifndef MLA_MANIFESTSPEC_H
#define MLA_MANIFESTSPEC_H

#include "mla/launcher.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace mlir::mla {

/// The manifest format's version (docs/Manifest.md): mla-compile writes it
/// as "manifest_version"; every reader refuses another. Bump it when a key
/// changes meaning or a reader would misread a new manifest.
constexpr int kManifestVersion = 3;

class ManifestSpec {
public:
  /// Reads a manifest as mla-compile writes it (docs/Design.md) with the
  /// code object `code` for its chip.
  static llvm::Expected<std::unique_ptr<ManifestSpec>>
  read(const llvm::json::Object &manifest, std::string code);
  const mla_spec_desc *desc() const { return &spec_; }

private:
  ManifestSpec() = default;
  const char *keep(llvm::StringRef s);
  std::deque<std::string> strings_;
  std::string code_;
  std::vector<int64_t> candidates_;
  std::deque<std::vector<mla_arg_desc>> args_;
  std::vector<mla_kernel_desc> kernels_;
  mla_target_desc target_{};
  mla_spec_desc spec_{};
};

} // namespace mlir::mla

#endif // MLA_MANIFESTSPEC_H
