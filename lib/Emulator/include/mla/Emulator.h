//===- mla/Emulator.h - run AMDHSA code objects on the CPU ------*- C++ -*-===//
//
// A wave64 CDNA3 / CDNA4 (gfx942 / gfx950) instruction-set emulator: loads
// the code objects mla-compile writes (ELF, kernel descriptors, AMDHSA
// metadata read through ROCm's comgr), decodes them with LLVM's AMDGPU
// MCDisassembler and executes one dispatch at a time, every wave of every
// workgroup, with semantics written from AMD's ISA reference guides. It
// shares nothing with the compiler's passes or matrix-layout descriptors:
// it is the check on them. docs/Emulator.md says what is modelled.
//
//   mla::emu::Device dev;
//   dev.registerBuffer(q, qBytes, "q");          // every buffer a kernel may
//   touch auto co = mla::emu::CodeObject::load(bytes);  //
//   Expected<unique_ptr<...>> mla::emu::Counters c; llvm::Error e =
//   dev.dispatch(**co, "kernel", {gx, gy, 1}, {256, 1, 1},
//                                dynamicLds, kernarg, kernargBytes, &c);
//
//===----------------------------------------------------------------------===//
#ifndef MLA_EMULATOR_H
#define MLA_EMULATOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mla::emu {

class Decoder;

/// One kernel argument as the AMDHSA metadata states it.
struct KernelArg {
  std::string name;
  std::string valueKind; ///< by_value, global_buffer, hidden_*, ...
  uint32_t offset = 0, size = 0;
};

/// A kernel of a code object: its descriptor (`<name>.kd`) and metadata.
struct Kernel {
  std::string name;
  uint64_t entry = 0; ///< address of the first instruction
  uint32_t groupSegmentBytes = 0, privateSegmentBytes = 0, kernargBytes = 0;
  uint32_t rsrc1 = 0, rsrc2 = 0, rsrc3 = 0;
  uint16_t codeProperties = 0;
  uint32_t wavefrontSize = 64;
  uint32_t sgprCount = 0, vgprCount = 0, agprCount = 0;
  std::vector<KernelArg> args;
};

/// A loaded code object. Instructions are decoded once, on first execution
/// of their address, and kept.
class CodeObject {
public:
  static llvm::Expected<std::unique_ptr<CodeObject>>
  load(llvm::ArrayRef<uint8_t> elf);
  /// Bare instruction bytes at address 0 as one kernel "raw" (tests).
  static llvm::Expected<std::unique_ptr<CodeObject>>
  fromCode(const std::string &chip, llvm::ArrayRef<uint8_t> code);
  ~CodeObject();

  const std::string &chip() const { return chip_; }
  const Kernel *kernel(llvm::StringRef name) const;
  const std::vector<Kernel> &kernels() const { return kernels_; }
  /// The code bytes at `address` (nullptr outside the text section).
  const uint8_t *code(uint64_t address, uint64_t *available) const;
  Decoder &decoder() const { return *decoder_; }
  /// Where the text section starts in the ELF file (for patching tests).
  uint64_t textFileOffset() const { return textFileOffset_; }
  uint64_t textAddress() const { return textAddress_; }
  /// (address, assembly text) of the instructions in [from, to).
  llvm::Expected<std::vector<std::pair<uint64_t, std::string>>>
  disassemble(uint64_t from, uint64_t to) const;

private:
  CodeObject() = default;
  std::string chip_;
  std::vector<Kernel> kernels_;
  std::vector<uint8_t> text_;
  uint64_t textAddress_ = 0, textFileOffset_ = 0;
  std::unique_ptr<Decoder> decoder_;
};

/// Executed wave-instructions by class, LDS bank conflicts and global
/// memory traffic of one dispatch (or a sum of several).
struct Counters {
  uint64_t salu = 0, valu = 0, mfma = 0, lds = 0, vmem = 0, smem = 0;
  uint64_t branch = 0;           ///< s_branch / s_cbranch_*
  uint64_t waitBarrier = 0;      ///< s_waitcnt, s_barrier, s_nop, s_endpgm, ...
  uint64_t ldsBankConflicts = 0; ///< extra LDS cycles from bank conflicts
  uint64_t globalBytesRead = 0, globalBytesWritten = 0;
  uint64_t waves = 0, workgroups = 0;
  uint64_t total() const {
    return salu + valu + mfma + lds + vmem + smem + branch + waitBarrier;
  }
  Counters &operator+=(const Counters &o);
  /// Executions per canonical opcode name (v_mfma_f32_16x16x32_bf16, ...).
  std::map<std::string, uint64_t> perOpcode;
};

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

/// What a dispatch may touch, and how strictly it is checked.
class Device {
public:
  Device();
  ~Device();
  /// Global memory a kernel may access: [ptr, ptr + bytes). Accesses
  /// outside every registered buffer fault.
  void registerBuffer(const void *ptr, size_t bytes, llvm::StringRef name,
                      bool writable = true);
  void unregisterBuffer(const void *ptr);
  void clearBuffers();

  /// Runs `kernel` over `grid` workgroups of `block` work-items with
  /// `dynamicLdsBytes` of LDS beyond the descriptor's group segment. The
  /// kernarg segment is copied. Returns an error naming kernel, pc,
  /// instruction (and lane and address) on a fault, an unknown instruction,
  /// or a read of a register whose load was not waited for.
  llvm::Error dispatch(const CodeObject &code, llvm::StringRef kernel,
                       Dim3 grid, Dim3 block, uint32_t dynamicLdsBytes,
                       const void *kernarg, size_t kernargBytes,
                       Counters *counters = nullptr);

  /// Stop with an error after this many wave-instructions per dispatch
  /// (a kernel that never ends); 0 = no limit.
  uint64_t instructionLimit = 4000000000ull;

  struct Buffer {
    uint64_t base, bytes;
    std::string name;
    bool writable;
  };
  /// The buffer holding [addr, addr + n), or nullptr.
  const Buffer *find(uint64_t addr, uint64_t n) const;
  /// The buffer with the highest base among those ending at or before
  /// `addr` (fault messages), or nullptr.
  const Buffer *below(uint64_t addr) const;

private:
  std::vector<Buffer> buffers_;
};

/// Runs raw instruction bytes as a one-workgroup kernel (the known-answer
/// tests): `setup` may write registers before the first instruction.
struct WaveState;
llvm::Error
runRaw(Device &dev, const std::string &chip, llvm::ArrayRef<uint8_t> code,
       uint32_t threads, uint32_t ldsBytes,
       const std::function<void(WaveState &, unsigned wave)> &setup,
       const std::function<void(const WaveState &, unsigned wave)> &inspect,
       Counters *counters = nullptr);

} // namespace mla::emu

#endif // MLA_EMULATOR_H
