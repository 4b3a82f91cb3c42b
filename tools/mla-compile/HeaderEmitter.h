//===- HeaderEmitter.h - the C header of mla-compile --emit=header -*- C++
//-*-===//
#ifndef MLA_COMPILE_HEADEREMITTER_H
#define MLA_COMPILE_HEADEREMITTER_H

#include "mla/launcher.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mla_compile {

/// One chip's part of a header: its manifest as the launcher's descriptor
/// (ManifestSpec::read; one target) and its code object.
struct HeaderTarget {
  std::string chip;
  const mla_spec_desc *spec;
  llvm::StringRef code;
  std::string codeFile; ///< set: the code lies beside the header (--embed=no)
};

/// Writes a C99 / C++ header that describes the spec's kernels for every
/// target in the launcher's descriptor structs (mla/launcher.h), embeds or
/// names their code objects, and defines `<spec>_create(chip, device, &ctx)`.
void emitLauncherHeader(llvm::raw_ostream &os, llvm::StringRef spec,
                        llvm::StringRef source, llvm::StringRef codeDir,
                        llvm::ArrayRef<HeaderTarget> targets, bool embed);

} // namespace mla_compile

#endif // MLA_COMPILE_HEADEREMITTER_H
