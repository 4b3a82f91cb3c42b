//===- Decoder.cpp - AMDGPU instructions through LLVM's MC layer ----------===//
//
// The AMDGPU MCDisassembler of the libLLVM the project links decodes the
// bytes; MCInstrInfo names the opcode and MCRegisterInfo the registers. No
// encoding table is written here. Operands are sorted by what the MC operand
// descriptors say: the first NumDefs are definitions; an operand of the
// input-modifier type belongs to the source after it; an operand with a
// register class is a source (register or constant); the rest are
// immediates (offsets, clamp, cbsz, dpp_ctrl, ...) in order.
//
//===----------------------------------------------------------------------===//
#include "Machine.h"

#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCDisassembler/MCDisassembler.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstPrinter.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

using namespace llvm;
using namespace mla::emu;

static Error err(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

const OpTable &mla::emu::opTable() {
  static OpTable table = [] {
    OpTable t;
    addScalarOps(t);
    addVectorOps(t);
    addVectorMiscOps(t);
    addPackedOps(t);
    addMemoryOps(t);
    addMatrixOps(t);
    return t;
  }();
  return table;
}

Expected<std::unique_ptr<Decoder>> Decoder::create(const std::string &chip) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUDisassembler();
  });
  std::unique_ptr<Decoder> d(new Decoder);
  Triple triple("amdgcn-amd-amdhsa");
  std::string msg;
  d->target_ = TargetRegistry::lookupTarget(triple, msg);
  if (!d->target_)
    return err("the AMDGPU target is not in this libLLVM: " + msg);
  d->mri_.reset(d->target_->createMCRegInfo(triple));
  MCTargetOptions opts;
  d->mai_.reset(d->target_->createMCAsmInfo(*d->mri_, triple, opts));
  d->sti_.reset(d->target_->createMCSubtargetInfo(triple, chip, ""));
  if (!d->sti_ || d->sti_->getCPU() != chip)
    return err("LLVM does not know the chip '" + chip + "'");
  d->mii_.reset(d->target_->createMCInstrInfo());
  d->ctx_ = std::make_unique<MCContext>(triple, d->mai_.get(), d->mri_.get(),
                                        d->sti_.get());
  d->dis_.reset(d->target_->createMCDisassembler(*d->sti_, *d->ctx_));
  d->printer_.reset(
      d->target_->createMCInstPrinter(triple, 0, *d->mai_, *d->mii_, *d->mri_));
  if (!d->dis_ || !d->printer_)
    return err("no AMDGPU disassembler in this libLLVM");
  // The operand type of VOP3 input modifiers, read off an instruction that
  // has them (V_ADD_F32_e64: vdst, src0_modifiers, src0, ...).
  for (unsigned op = 0; op < d->mii_->getNumOpcodes(); ++op)
    if (d->mii_->getName(op) == "V_ADD_F32_e64_vi") {
      d->inputModsType_ = d->mii_->get(op).operands()[1].OperandType;
      break;
    }
  if (d->inputModsType_ < 0)
    return err("V_ADD_F32_e64_vi not found in MCInstrInfo (LLVM version?)");
  return d;
}

Decoder::~Decoder() = default;

std::string Decoder::canonicalName(StringRef mc, Enc *enc) {
  std::string s = mc.lower();
  StringRef n(s);
  static const char *const subtarget[] = {
      "_vi",  "_gfx9", "_gfx90a", "_gfx940", "_gfx950",
      "_vcd", "_acd",  "_opsel",  "_si",     "_ci"};
  Enc e = Enc::Plain;
  for (bool changed = true; changed;) {
    changed = false;
    for (const char *suf : subtarget)
      if (n.consume_back(suf))
        changed = true;
    if (n.consume_back("_e32"))
      e = Enc::E32, changed = true;
    else if (n.consume_back("_e64"))
      e = Enc::E64, changed = true;
    else if (n.consume_back("_sdwa"))
      e = Enc::SDWA, changed = true;
    else if (n.consume_back("_dpp"))
      e = Enc::DPP, changed = true;
  }
  // f8f6f4 MFMAs are split by operand formats (_f8_f8, _f4_f4, ...): one
  // semantics reads cbsz / blgp.
  size_t f = n.find("_f8f6f4");
  if (f != StringRef::npos)
    n = n.take_front(f + 7);
  if (enc)
    *enc = e;
  return n.str();
}

bool Decoder::parseReg(unsigned reg, Opnd &o) const {
  StringRef name = mri_->getName(reg);
  SmallVector<StringRef, 8> parts;
  name.split(parts, '_');
  auto one = [&](StringRef p, File &f, unsigned &idx) -> bool {
    if (p.consume_front("VGPR")) {
      f = File::V;
      return !p.getAsInteger(10, idx);
    }
    if (p.consume_front("AGPR")) {
      f = File::A;
      return !p.getAsInteger(10, idx);
    }
    if (p.consume_front("SGPR")) {
      f = File::S;
      return !p.getAsInteger(10, idx);
    }
    return false;
  };
  File f;
  unsigned idx;
  if (one(parts[0], f, idx)) {
    o.file = f;
    o.reg = idx;
    o.count = parts.size();
    return true;
  }
  static const struct {
    const char *name;
    uint16_t reg;
    uint8_t count;
  } special[] = {{"VCC", WaveState::kVcc, 2},
                 {"VCC_LO", WaveState::kVcc, 1},
                 {"VCC_HI", WaveState::kVcc + 1, 1},
                 {"EXEC", WaveState::kExec, 2},
                 {"EXEC_LO", WaveState::kExec, 1},
                 {"EXEC_HI", WaveState::kExec + 1, 1},
                 {"M0", WaveState::kM0, 1},
                 {"FLAT_SCR", WaveState::kFlatScr, 2},
                 {"FLAT_SCR_LO", WaveState::kFlatScr, 1},
                 {"FLAT_SCR_HI", WaveState::kFlatScr + 1, 1},
                 {"XNACK_MASK", WaveState::kXnack, 2}};
  // Registers whose meaning differs by generation carry a suffix
  // (M0_gfxpre11).
  name.consume_back("_gfxpre11");
  for (auto &s : special)
    if (name == s.name) {
      o.file = File::S;
      o.reg = s.reg;
      o.count = s.count;
      return true;
    }
  return false;
}

Expected<std::unique_ptr<Inst>> Decoder::decode(ArrayRef<uint8_t> bytes,
                                                uint64_t pc) {
  MCInst mi;
  uint64_t size = 0;
  if (bytes.size() < 4 || dis_->getInstruction(mi, size, bytes, pc, nulls()) !=
                              MCDisassembler::Success)
    return err("no valid instruction at pc 0x" + Twine::utohexstr(pc));
  auto in = std::make_unique<Inst>();
  in->pc = pc;
  in->size = size;
  StringRef mcName = mii_->getName(mi.getOpcode());
  in->name = canonicalName(mcName, &in->enc);
  raw_string_ostream os(in->text);
  printer_->printInst(&mi, pc, "", *sti_, os);
  in->text = StringRef(in->text).trim().str();
  for (char &c : in->text)
    if (c == '\t')
      c = ' ';
  const OpTable &table = opTable();
  auto it = table.find(in->name);
  if (it == table.end())
    return err("unsupported instruction '" + in->text + "' (" + mcName +
               ") at pc 0x" + Twine::utohexstr(pc) +
               ": the emulator has no semantics for " + in->name);
  in->fn = it->second.fn;
  in->cls = it->second.cls;

  const MCInstrDesc &desc = mii_->get(mi.getOpcode());
  uint8_t pendingMods = 0;
  bool havePendingMods = false;
  for (unsigned i = 0; i < mi.getNumOperands(); ++i) {
    const MCOperand &mo = mi.getOperand(i);
    int type = i < desc.getNumOperands() ? desc.operands()[i].OperandType : -1;
    int rc = i < desc.getNumOperands() ? desc.operands()[i].RegClass : -1;
    Opnd o;
    if (mo.isReg()) {
      if (!parseReg(mo.getReg(), o))
        return err("unsupported register " +
                   StringRef(mri_->getName(mo.getReg())) + " in '" + in->text +
                   "' at pc 0x" + Twine::utohexstr(pc));
    } else if (mo.isImm()) {
      o.file = File::Imm;
      o.imm = uint64_t(mo.getImm());
    } else {
      return err("unexpected operand kind in '" + in->text + "'");
    }
    if (i < desc.getNumDefs()) {
      in->defs.push_back(o);
      continue;
    }
    if (type == inputModsType_ && mo.isImm()) {
      pendingMods = uint8_t(mo.getImm());
      havePendingMods = true;
      continue;
    }
    if (rc >= 0 || mo.isReg()) {
      o.mods = havePendingMods ? pendingMods : 0;
      havePendingMods = false;
      in->srcs.push_back(o);
      continue;
    }
    in->imms.push_back(mo.getImm());
  }
  return in;
}

Expected<const Inst *> Decoder::at(const CodeObject &co, uint64_t pc) {
  auto it = cache_.find(pc);
  if (it != cache_.end())
    return it->second.get();
  uint64_t avail = 0;
  const uint8_t *p = co.code(pc, &avail);
  if (!p)
    return err("pc 0x" + Twine::utohexstr(pc) +
               " is outside the code object's text");
  auto in = decode(ArrayRef<uint8_t>(p, std::min<uint64_t>(avail, 16)), pc);
  if (!in)
    return in.takeError();
  const Inst *raw = in->get();
  cache_[pc] = std::move(*in);
  return raw;
}
