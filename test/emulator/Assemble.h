//===- Assemble.h - instruction bytes for the emulator's tests -*- C++ -*-===//
//
// Assembles AMDGPU assembly with llvm-mc (LLVM 22's, the build's
// MLA_LLVM_MC) and returns the .text bytes, so the known-answer tests state
// their programs in the ISA's own syntax.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_TEST_EMULATOR_ASSEMBLE_H
#define MLA_TEST_EMULATOR_ASSEMBLE_H

#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

inline std::vector<uint8_t>
assemble(const std::string &chip, const std::string &text, std::string *error) {
  llvm::SmallString<128> src, obj;
  llvm::sys::fs::createTemporaryFile("emu", "s", src);
  llvm::sys::fs::createTemporaryFile("emu", "o", obj);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(src, ec);
    os << ".text\n" << text << "\ns_endpgm\n";
  }
  std::string mc = MLA_LLVM_MC;
  std::string cpu = "-mcpu=" + chip, out = obj.str().str();
  llvm::SmallString<128> errFile;
  llvm::sys::fs::createTemporaryFile("emu", "err", errFile);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, std::nullopt,
                                                llvm::StringRef(errFile)};
  int rc = llvm::sys::ExecuteAndWait(mc,
                                     {mc, "-triple=amdgcn-amd-amdhsa", cpu,
                                      "-filetype=obj", src.str(), "-o", out},
                                     std::nullopt, redirects);
  std::vector<uint8_t> bytes;
  if (rc != 0) {
    auto msg = llvm::MemoryBuffer::getFile(errFile);
    *error = "llvm-mc failed: " +
             (msg ? (*msg)->getBuffer().str() : std::string("?"));
  } else {
    auto buf = llvm::MemoryBuffer::getFile(out);
    auto file =
        llvm::object::ObjectFile::createObjectFile((*buf)->getMemBufferRef());
    if (!file) {
      *error = llvm::toString(file.takeError());
    } else {
      for (const llvm::object::SectionRef &s : (*file)->sections())
        if (s.isText()) {
          llvm::StringRef d = llvm::cantFail(s.getContents());
          bytes.assign(d.begin(), d.end());
        }
    }
  }
  llvm::sys::fs::remove(src);
  llvm::sys::fs::remove(obj);
  llvm::sys::fs::remove(errFile);
  return bytes;
}

#endif
