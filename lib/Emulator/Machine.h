//===- Machine.h - decoded instructions and the execution context -*- C++
//-*-===//
//
// Internal to lib/Emulator. An instruction is decoded once per address into
// an `Inst`: its canonical opcode name, a handler, and its operands sorted
// into definitions, sources (with their input modifiers) and trailing
// immediates, in the order of LLVM's MC operand list. Handlers execute it on
// an `Exec`, the view of one wave inside one dispatch.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_EMULATOR_MACHINE_H
#define MLA_EMULATOR_MACHINE_H

#include "mla/Emulator.h"
#include "mla/EmulatorState.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"

#include <deque>
#include <map>
#include <memory>
#include <unordered_map>

namespace llvm {
class MCContext;
class MCDisassembler;
class MCInstPrinter;
class MCInstrInfo;
class MCRegisterInfo;
class MCSubtargetInfo;
class MCAsmInfo;
class Target;
} // namespace llvm

namespace mla::emu {

enum class File : uint8_t { None, S, V, A, Imm };

/// SISrcMods bits of a VOP3 / VOP3P source modifier operand.
enum Mods : uint8_t {
  kNeg = 1,
  kAbs = 2,
  kNegHi = 2,
  kOpSel0 = 4,
  kOpSel1 = 8,
  kDstOpSel = 8
};

struct Opnd {
  File file = File::None;
  uint16_t reg = 0;  ///< first register (hardware number for S)
  uint8_t count = 1; ///< registers in the tuple
  uint8_t mods = 0;  ///< input modifiers (Mods)
  uint64_t imm =
      0; ///< File::Imm: the value's bits as the operand type takes them
  bool isReg() const {
    return file == File::S || file == File::V || file == File::A;
  }
};

enum class Class : uint8_t {
  SALU,
  VALU,
  MFMA,
  LDS,
  VMEM,
  SMEM,
  Branch,
  WaitBarrier
};

struct Exec;
struct Inst;
using Handler = bool (*)(Exec &, const Inst &);

struct OpInfo {
  Handler fn;
  Class cls;
};
/// Canonical opcode name (lower case, encoding and subtarget suffixes
/// stripped: v_add_f32, buffer_load_dwordx4_offen) -> semantics.
using OpTable = llvm::StringMap<OpInfo>;
void addScalarOps(OpTable &);
void addVectorOps(OpTable &);
void addVectorMiscOps(OpTable &);
void addPackedOps(OpTable &);
void addMemoryOps(OpTable &);
void addMatrixOps(OpTable &);
const OpTable &opTable();

enum class Enc : uint8_t { Plain, E32, E64, SDWA, DPP };

struct Inst {
  uint64_t pc = 0;
  uint32_t size = 0;
  std::string name; ///< canonical
  std::string text; ///< as the disassembler prints it (for messages)
  Enc enc = Enc::Plain;
  Class cls = Class::SALU;
  Handler fn = nullptr;
  llvm::SmallVector<Opnd, 2> defs;
  llvm::SmallVector<Opnd, 4> srcs;
  llvm::SmallVector<int64_t, 6> imms;
};

/// The MC layer for one chip, and the decoded instructions of one code
/// object by address.
class Decoder {
public:
  static llvm::Expected<std::unique_ptr<Decoder>>
  create(const std::string &chip);
  ~Decoder();
  /// The instruction at `pc` (decoded on first use).
  llvm::Expected<const Inst *> at(const CodeObject &co, uint64_t pc);
  /// Decodes one instruction from `bytes` (no cache).
  llvm::Expected<std::unique_ptr<Inst>> decode(llvm::ArrayRef<uint8_t> bytes,
                                               uint64_t pc);
  /// Strips LLVM's encoding and subtarget suffixes: V_ADD_F32_e64_vi ->
  /// v_add_f32 (and the encoding), V_MFMA_..._gfx940_vcd -> v_mfma_...
  static std::string canonicalName(llvm::StringRef mcName, Enc *enc);

private:
  Decoder() = default;
  bool parseReg(unsigned reg, Opnd &o) const;
  const llvm::Target *target_ = nullptr;
  std::unique_ptr<llvm::MCRegisterInfo> mri_;
  std::unique_ptr<llvm::MCAsmInfo> mai_;
  std::unique_ptr<llvm::MCSubtargetInfo> sti_;
  std::unique_ptr<llvm::MCInstrInfo> mii_;
  std::unique_ptr<llvm::MCContext> ctx_;
  std::unique_ptr<llvm::MCDisassembler> dis_;
  std::unique_ptr<llvm::MCInstPrinter> printer_;
  int inputModsType_ = -1;
  std::unordered_map<uint64_t, std::unique_ptr<Inst>> cache_;
};

enum class Counter : uint8_t { VM, LGKM };

/// A load whose data has not arrived in its registers yet.
struct Pending {
  Counter ctr;
  bool inOrder; ///< SMEM returns out of order; LDS and VMEM in order
  File file;
  uint16_t reg;
  uint8_t count;
  uint64_t lanes;             ///< vector: lanes that receive data
  std::vector<uint32_t> data; ///< vector: [r * 64 + lane]; scalar: [r]
  const Inst *inst;
  /// An LDS DMA load (buffer_load_* lds): its number in Dispatch::dmaOwner
  /// (0: none). Its bytes are written to LDS at issue and stay claimed
  /// until the s_waitcnt that retires it.
  uint32_t ldsDma = 0;
};

/// One wave: registers plus what the hazard model tracks.
struct Wave {
  WaveState st;
  unsigned id = 0;
  bool done = false, atBarrier = false;
  std::deque<Pending> pending;
  std::vector<uint16_t> pendS = std::vector<uint16_t>(WaveState::kSregs, 0);
  std::vector<uint16_t> pendV = std::vector<uint16_t>(WaveState::kVgprs, 0);
  std::vector<uint16_t> pendA = std::vector<uint16_t>(WaveState::kAgprs, 0);
};

/// One dispatch: memory, LDS of the current workgroup, counters.
struct Dispatch {
  Device &dev;
  const CodeObject &co;
  const Kernel &kernel;
  bool gfx950;
  std::vector<uint8_t> lds;
  Counters &counters;
  std::string error;
  uint32_t wg[3] = {0, 0, 0};
  unsigned ldsBanks = 32;
  /// LDS DMA loads not yet retired by their wave's s_waitcnt: per LDS byte
  /// the number of the load that may still be writing it (0: none), and
  /// per number the instruction, its wave and its bytes. Any LDS access to
  /// a claimed byte is an error: on the chip the data lands at some time
  /// between issue and the wait, so reading it (or, from another wave,
  /// reading what it overwrites) before then is a race.
  std::vector<uint32_t> dmaOwner;
  struct Dma {
    const Inst *inst;
    unsigned wave;
    std::vector<std::pair<uint32_t, uint32_t>> ranges; ///< [begin, end)
  };
  std::map<uint32_t, Dma> dmas;
  uint32_t nextDma = 1;
};

/// What a handler works on: the wave being executed inside its dispatch.
struct Exec {
  Dispatch &d;
  Wave &wave;
  WaveState &w;
  const Inst *cur = nullptr;
  bool branched = false; ///< the handler set pc itself
  bool endWave = false, barrier = false;

  bool fail(const llvm::Twine &msg);
  /// Lane `lane` of a 32-bit source (SGPR, VGPR, AGPR or constant).
  uint32_t u32(const Opnd &o, unsigned lane) const;
  uint64_t u64(const Opnd &o, unsigned lane) const;
  /// f32 source with VOP3 abs / neg applied.
  float f32(const Opnd &o, unsigned lane) const;
  /// Scalar operand value (lane-independent).
  uint32_t s32(const Opnd &o) const { return u32(o, 0); }
  uint64_t s64(const Opnd &o) const { return u64(o, 0); }
  void setS32(const Opnd &o, uint32_t x);
  void setS64(const Opnd &o, uint64_t x);
  /// Writes lane `lane` of vector register `o` (+ `dword`).
  void setV(const Opnd &o, unsigned lane, uint32_t x, unsigned dword = 0);
  uint32_t getV(const Opnd &o, unsigned lane, unsigned dword = 0) const;
  void setVf(const Opnd &o, unsigned lane, float f);
  uint64_t exec() const { return w.exec(); }
  /// Global memory (fault outside registered buffers).
  bool readGlobal(uint64_t addr, void *dst, unsigned n, unsigned lane);
  bool writeGlobal(uint64_t addr, const void *src, unsigned n, unsigned lane);
  /// A load's data arrives when the wave's s_waitcnt allows it.
  void deferLoad(Pending p);
  /// Fails where lane `lane`'s LDS access [addr, addr + n) touches bytes
  /// an LDS DMA load has claimed (Dispatch::dmaOwner).
  bool ldsDmaFree(uint64_t addr, unsigned n, unsigned lane);
  /// Counts bank conflicts of one LDS access of `bytesPerLane` per lane.
  void ldsBankCycles(const uint32_t *addr, uint64_t lanes,
                     unsigned bytesPerLane);
};

float asF(uint32_t b);
/// s_waitcnt: lets the loads through that vmcnt <= vm / lgkmcnt <= lgkm
/// guarantee.
void waitcnt(Exec &x, unsigned vm, unsigned lgkm);
/// Before an instruction issues: fails the dispatch (naming both
/// instructions) where it reads, or (a non-load) overwrites, a register
/// still waiting for a load. Exec.cpp.
bool checkHazards(Exec &x, const Inst &in);
uint32_t asU(float f);

} // namespace mla::emu

#endif // MLA_EMULATOR_MACHINE_H
