//===- Exec.cpp - operand access, memory and the wait model ---------------===//
//
// What an instruction's semantics (the *Ops.cpp files) read and write
// through: its operands per lane, global memory inside the registered
// buffers, LDS; and the wait model (Dispatch.cpp's banner describes it): a
// load's data is read at issue and reaches its registers at the s_waitcnt
// that guarantees it, and checkHazards stops an instruction that reads or
// overwrites a register still waiting for its load.
//
//===----------------------------------------------------------------------===//
#include "Machine.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace llvm;
using namespace mla::emu;

bool Exec::fail(const Twine &msg) {
  if (d.error.empty())
    d.error =
        (Twine("kernel ") + d.kernel.name + ", workgroup (" + Twine(d.wg[0]) +
         ", " + Twine(d.wg[1]) + ", " + Twine(d.wg[2]) + "), wave " +
         Twine(wave.id) + ", pc 0x" + Twine::utohexstr(cur ? cur->pc : w.pc) +
         " '" + (cur ? cur->text : std::string("?")) + "': " + msg)
            .str();
  return false;
}

uint32_t Exec::u32(const Opnd &o, unsigned lane) const {
  switch (o.file) {
  case File::S:
    return w.s[o.reg];
  case File::V:
    return w.V(o.reg, lane);
  case File::A:
    return w.A(o.reg, lane);
  case File::Imm:
    return uint32_t(o.imm);
  default:
    return 0;
  }
}

uint64_t Exec::u64(const Opnd &o, unsigned lane) const {
  switch (o.file) {
  case File::S:
    return w.s64(o.reg);
  case File::V:
    return w.V(o.reg, lane) | uint64_t(w.V(o.reg + 1, lane)) << 32;
  case File::A:
    return w.A(o.reg, lane) | uint64_t(w.A(o.reg + 1, lane)) << 32;
  case File::Imm:
    return o.imm;
  default:
    return 0;
  }
}

float Exec::f32(const Opnd &o, unsigned lane) const {
  float f = asF(u32(o, lane));
  if (o.mods & kAbs)
    f = std::fabs(f);
  if (o.mods & kNeg)
    f = -f;
  return f;
}

void Exec::setS32(const Opnd &o, uint32_t x) { w.s[o.reg] = x; }
void Exec::setS64(const Opnd &o, uint64_t x) { w.setS64(o.reg, x); }

void Exec::setV(const Opnd &o, unsigned lane, uint32_t x, unsigned dword) {
  if (o.file == File::A)
    w.A(o.reg + dword, lane) = x;
  else
    w.V(o.reg + dword, lane) = x;
}

uint32_t Exec::getV(const Opnd &o, unsigned lane, unsigned dword) const {
  return o.file == File::A ? w.A(o.reg + dword, lane)
                           : w.V(o.reg + dword, lane);
}

void Exec::setVf(const Opnd &o, unsigned lane, float f) {
  setV(o, lane, asU(f));
}

/// Where `addr` lies relative to the registered buffers, for fault messages.
static std::string nearest(const Device &dev, uint64_t addr) {
  if (const Device::Buffer *b = dev.find(addr, 1))
    return " (inside '" + b->name + "' but running past its end)";
  const Device::Buffer *below = dev.below(addr);
  if (!below)
    return "";
  return " (" + std::to_string(addr - (below->base + below->bytes)) +
         " bytes past the end of '" + below->name + "', " +
         std::to_string(below->bytes) + " bytes)";
}

bool Exec::readGlobal(uint64_t addr, void *dst, unsigned n, unsigned lane) {
  const Device::Buffer *b = d.dev.find(addr, n);
  if (!b)
    return fail("lane " + Twine(lane) + " reads " + Twine(n) + " bytes at 0x" +
                Twine::utohexstr(addr) + ", outside every registered buffer" +
                nearest(d.dev, addr));
  std::memcpy(dst, reinterpret_cast<const void *>(addr), n);
  d.counters.globalBytesRead += n;
  return true;
}

bool Exec::writeGlobal(uint64_t addr, const void *src, unsigned n,
                       unsigned lane) {
  const Device::Buffer *b = d.dev.find(addr, n);
  if (!b)
    return fail("lane " + Twine(lane) + " writes " + Twine(n) + " bytes at 0x" +
                Twine::utohexstr(addr) + ", outside every registered buffer" +
                nearest(d.dev, addr));
  if (!b->writable)
    return fail("lane " + Twine(lane) + " writes into read-only buffer '" +
                b->name + "'");
  std::memcpy(reinterpret_cast<void *>(addr), src, n);
  d.counters.globalBytesWritten += n;
  return true;
}

static std::vector<uint16_t> &pendFile(Wave &wv, File f) {
  return f == File::S ? wv.pendS : f == File::V ? wv.pendV : wv.pendA;
}

void Exec::deferLoad(Pending p) {
  if (p.count) {
    std::vector<uint16_t> &pend = pendFile(wave, p.file);
    for (unsigned r = 0; r < p.count; ++r)
      ++pend[p.reg + r];
  }
  p.inst = cur;
  wave.pending.push_back(std::move(p));
}

void Exec::ldsBankCycles(const uint32_t *addr, uint64_t lanes,
                         unsigned bytesPerLane) {
  unsigned banks = d.ldsBanks;
  unsigned dwords = std::max(1u, bytesPerLane / 4);
  unsigned perPhase = std::max(1u, banks / dwords);
  for (unsigned first = 0; first < 64; first += perPhase) {
    // distinct dword addresses per bank in this phase
    SmallVector<SmallVector<uint32_t, 4>, 64> seen(banks);
    unsigned worst = 0;
    for (unsigned l = first; l < first + perPhase && l < 64; ++l) {
      if (!(lanes >> l & 1))
        continue;
      for (unsigned j = 0; j < dwords; ++j) {
        uint32_t dw = addr[l] / 4 + j;
        auto &s = seen[dw % banks];
        if (std::find(s.begin(), s.end(), dw) == s.end())
          s.push_back(dw);
        worst = std::max<unsigned>(worst, s.size());
      }
    }
    if (worst > 1)
      d.counters.ldsBankConflicts += worst - 1;
  }
}

bool Exec::ldsDmaFree(uint64_t addr, unsigned n, unsigned lane) {
  if (d.dmas.empty())
    return true;
  for (uint64_t a = addr; a < addr + n && a < d.dmaOwner.size(); ++a)
    if (uint32_t id = d.dmaOwner[a]) {
      const Dispatch::Dma &m = d.dmas.at(id);
      return fail("lane " + Twine(lane) + " accesses LDS byte " + Twine(a) +
                  " while the LDS DMA load of pc 0x" +
                  Twine::utohexstr(m.inst->pc) + " ('" + m.inst->text +
                  "') of wave " + Twine(m.wave) +
                  " may still be writing it (no s_waitcnt vmcnt of that "
                  "wave has retired the load)");
    }
  return true;
}

/// Releases the LDS bytes of a retired LDS DMA load.
static void retireDma(Dispatch &d, uint32_t id) {
  auto it = d.dmas.find(id);
  if (it == d.dmas.end())
    return;
  for (auto [b, e] : it->second.ranges)
    for (uint32_t a = b; a < e; ++a)
      if (d.dmaOwner[a] == id)
        d.dmaOwner[a] = 0;
  d.dmas.erase(it);
}

/// Moves the data of every load that `s_waitcnt` guarantees into registers
/// (and releases the LDS bytes of the LDS DMA loads among them).
static void completeLoads(Dispatch &d, Wave &wv, Counter ctr,
                          unsigned allowed) {
  std::deque<Pending> keep;
  // in-order ops of this counter younger than each op
  unsigned youngerInOrder = 0;
  std::vector<bool> done(wv.pending.size(), false);
  for (size_t i = wv.pending.size(); i-- > 0;) {
    Pending &p = wv.pending[i];
    if (p.ctr != ctr)
      continue;
    done[i] = p.inOrder ? youngerInOrder + 1 > allowed : allowed == 0;
    if (p.inOrder)
      ++youngerInOrder;
  }
  for (size_t i = 0; i < wv.pending.size(); ++i) {
    Pending &p = wv.pending[i];
    if (!done[i]) {
      keep.push_back(std::move(p));
      continue;
    }
    if (p.ldsDma)
      retireDma(d, p.ldsDma);
    std::vector<uint16_t> &pend = pendFile(wv, p.file);
    for (unsigned r = 0; r < p.count; ++r) {
      --pend[p.reg + r];
      if (p.file == File::S) {
        wv.st.s[p.reg + r] = p.data[r];
        continue;
      }
      for (unsigned l = 0; l < 64; ++l)
        if (p.lanes >> l & 1) {
          uint32_t x = p.data[r * 64 + l];
          if (p.file == File::V)
            wv.st.V(p.reg + r, l) = x;
          else
            wv.st.A(p.reg + r, l) = x;
        }
    }
  }
  wv.pending = std::move(keep);
}

void mla::emu::waitcnt(Exec &x, unsigned vm, unsigned lgkm) {
  completeLoads(x.d, x.wave, Counter::VM, vm);
  completeLoads(x.d, x.wave, Counter::LGKM, lgkm);
}

static std::string regName(const Opnd &o) {
  char c = o.file == File::S ? 's' : o.file == File::V ? 'v' : 'a';
  if (o.count == 1)
    return std::string(1, c) + std::to_string(o.reg);
  return std::string(1, c) + "[" + std::to_string(o.reg) + ":" +
         std::to_string(o.reg + o.count - 1) + "]";
}

/// A register operand that is still waiting for a load.
static const Pending *pendingFor(Wave &wv, const Opnd &o) {
  if (!o.isReg())
    return nullptr;
  std::vector<uint16_t> &pend = pendFile(wv, o.file);
  bool any = false;
  for (unsigned r = 0; r < o.count && o.reg + r < pend.size(); ++r)
    any |= pend[o.reg + r] != 0;
  if (!any)
    return nullptr;
  for (const Pending &p : wv.pending)
    if (p.file == o.file && p.count && p.reg < o.reg + o.count &&
        o.reg < p.reg + p.count)
      return &p;
  return nullptr;
}

bool mla::emu::checkHazards(Exec &x, const Inst &in) {
  bool isLoad =
      in.cls == Class::LDS || in.cls == Class::VMEM || in.cls == Class::SMEM;
  for (const Opnd &o : in.srcs)
    if (const Pending *p = pendingFor(x.wave, o))
      return x.fail("reads " + regName(o) +
                    " before an s_waitcnt lets the load of pc 0x" +
                    Twine::utohexstr(p->inst->pc) + " ('" + p->inst->text +
                    "') arrive");
  if (!isLoad)
    for (const Opnd &o : in.defs)
      if (const Pending *p = pendingFor(x.wave, o))
        return x.fail("writes " + regName(o) + " while the load of pc 0x" +
                      Twine::utohexstr(p->inst->pc) + " ('" + p->inst->text +
                      "') into it is outstanding");
  return true;
}
