//===- Dispatch.cpp - workgroups, waves, barriers and the wait model ------===//
//
// A dispatch runs its workgroups one after another; inside a workgroup each
// wave runs until it reaches s_barrier or s_endpgm, and a barrier releases
// when every wave that has not ended has reached it. Initial registers follow
// AMDGPUUsage ("Initial Kernel Execution State"): user SGPRs in the order the
// descriptor enables them, then workgroup ids, and the packed work-item ids
// in v0 (gfx90a and later).
//
// The wait model: a load's data is read at issue but reaches its registers
// only when an s_waitcnt guarantees it (vmcnt: vector memory, in order, with
// stores counted too; lgkmcnt: LDS in order, scalar loads out of order). An
// instruction that reads or overwrites a register still waiting for its
// load stops the dispatch with an error naming both instructions.
//
//===----------------------------------------------------------------------===//
#include "Machine.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace llvm;
using namespace mla::emu;

static Error err(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

float mla::emu::asF(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint32_t mla::emu::asU(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

Counters &Counters::operator+=(const Counters &o) {
  salu += o.salu, valu += o.valu, mfma += o.mfma, lds += o.lds, vmem += o.vmem;
  smem += o.smem, branch += o.branch, waitBarrier += o.waitBarrier;
  ldsBankConflicts += o.ldsBankConflicts;
  globalBytesRead += o.globalBytesRead,
      globalBytesWritten += o.globalBytesWritten;
  waves += o.waves, workgroups += o.workgroups;
  for (auto &[k, v] : o.perOpcode)
    perOpcode[k] += v;
  return *this;
}

//===----------------------------------------------------------------------===//
// Device: the registered buffers
//===----------------------------------------------------------------------===//

Device::Device() = default;
Device::~Device() = default;

void Device::registerBuffer(const void *ptr, size_t bytes, StringRef name,
                            bool writable) {
  unregisterBuffer(ptr);
  buffers_.push_back(
      {reinterpret_cast<uint64_t>(ptr), bytes, name.str(), writable});
  std::sort(buffers_.begin(), buffers_.end(),
            [](const Buffer &a, const Buffer &b) { return a.base < b.base; });
}

void Device::unregisterBuffer(const void *ptr) {
  uint64_t p = reinterpret_cast<uint64_t>(ptr);
  buffers_.erase(std::remove_if(buffers_.begin(), buffers_.end(),
                                [&](const Buffer &b) { return b.base == p; }),
                 buffers_.end());
}

void Device::clearBuffers() { buffers_.clear(); }

const Device::Buffer *Device::below(uint64_t addr) const {
  const Buffer *best = nullptr;
  for (const Buffer &b : buffers_)
    if (b.base + b.bytes <= addr)
      best = &b; // sorted by base: the last one that ends at or before addr
  return best;
}

const Device::Buffer *Device::find(uint64_t addr, uint64_t n) const {
  auto it =
      std::upper_bound(buffers_.begin(), buffers_.end(), addr,
                       [](uint64_t a, const Buffer &b) { return a < b.base; });
  if (it == buffers_.begin())
    return nullptr;
  --it;
  if (addr + n > it->base + it->bytes || addr + n < addr)
    return nullptr;
  return &*it;
}

//===----------------------------------------------------------------------===//
// Exec: operand access, memory, the wait model
//===----------------------------------------------------------------------===//

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

static bool checkHazards(Exec &x, const Inst &in) {
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

//===----------------------------------------------------------------------===//
// The dispatch
//===----------------------------------------------------------------------===//

namespace {
/// hsa_kernel_dispatch_packet_t, for kernels that read the dispatch pointer.
struct DispatchPacket {
  uint16_t header, setup, wgX, wgY, wgZ, reserved0;
  uint32_t gridX, gridY, gridZ, privateSegment, groupSegment;
  uint64_t kernelObject, kernarg, reserved2, completion;
};
static_assert(sizeof(DispatchPacket) == 64, "AQL packet is 64 bytes");
} // namespace

/// MLA_EMU_TRACE=<lane>: every executed instruction with the values its
/// definitions hold afterwards in that lane (stderr).
static int traceLane() {
  static int lane = [] {
    const char *e = std::getenv("MLA_EMU_TRACE");
    return e ? std::atoi(e) & 63 : -1;
  }();
  return lane;
}

static void trace(Exec &x, const Inst &in) {
  int lane = traceLane();
  llvm::errs() << "wg " << x.d.wg[0] << "," << x.d.wg[1] << " w" << x.wave.id
               << " 0x" << Twine::utohexstr(in.pc) << " " << in.text;
  for (const Opnd &o : in.defs) {
    llvm::errs() << " | ";
    for (unsigned r = 0; r < o.count && r < 4; ++r) {
      uint32_t v = o.file == File::S   ? x.w.s[o.reg + r]
                   : o.file == File::V ? x.w.V(o.reg + r, lane)
                   : o.file == File::A ? x.w.A(o.reg + r, lane)
                                       : 0;
      llvm::errs() << format("%08x ", v);
    }
  }
  llvm::errs() << " exec " << format("%016llx", (unsigned long long)x.w.exec())
               << "\n";
}

static bool runWave(Exec &x, uint64_t &budget) {
  Decoder &dec = x.d.co.decoder();
  bool tracing = traceLane() >= 0;
  while (true) {
    auto in = dec.at(x.d.co, x.w.pc);
    if (!in) {
      x.cur = nullptr;
      return x.fail(toString(in.takeError()));
    }
    const Inst &inst = **in;
    x.cur = &inst;
    if (!checkHazards(x, inst))
      return false;
    Counters &c = x.d.counters;
    switch (inst.cls) {
    case Class::SALU:
      ++c.salu;
      break;
    case Class::VALU:
      ++c.valu;
      break;
    case Class::MFMA:
      ++c.mfma;
      break;
    case Class::LDS:
      ++c.lds;
      break;
    case Class::VMEM:
      ++c.vmem;
      break;
    case Class::SMEM:
      ++c.smem;
      break;
    case Class::Branch:
      ++c.branch;
      break;
    case Class::WaitBarrier:
      ++c.waitBarrier;
      break;
    }
    ++c.perOpcode[inst.name];
    x.branched = x.endWave = x.barrier = false;
    if (!inst.fn(x, inst))
      return false;
    if (tracing)
      trace(x, inst);
    if (!x.branched)
      x.w.pc += inst.size;
    if (x.endWave) {
      x.wave.done = true;
      return true;
    }
    if (x.barrier) {
      x.wave.atBarrier = true;
      return true;
    }
    if (budget && --budget == 0)
      return x.fail("instruction limit reached (a kernel that does not end?)");
  }
}

/// Runs the waves of one workgroup until all have ended.
static Error runWorkgroup(Dispatch &d, std::vector<Wave> &waves,
                          uint64_t &budget) {
  while (true) {
    bool progress = false;
    for (Wave &wv : waves) {
      if (wv.done || wv.atBarrier)
        continue;
      Exec x{d, wv, wv.st};
      progress = true;
      if (!runWave(x, budget))
        return err(d.error);
    }
    bool allDone = true, allWaiting = true;
    for (Wave &wv : waves) {
      allDone &= wv.done;
      allWaiting &= wv.done || wv.atBarrier;
    }
    if (allDone)
      return Error::success();
    if (allWaiting) {
      for (Wave &wv : waves)
        wv.atBarrier = false;
      continue;
    }
    if (!progress)
      return err("kernel " + d.kernel.name + ": waves deadlocked");
  }
}

Error Device::dispatch(const CodeObject &co, StringRef name, Dim3 grid,
                       Dim3 block, uint32_t dynamicLds, const void *kernarg,
                       size_t kernargBytes, Counters *out) {
  const Kernel *k = co.kernel(name);
  if (!k)
    return err("the code object has no kernel '" + name + "'");
  if (k->wavefrontSize != 64)
    return err("kernel " + name + " is wave" + Twine(k->wavefrontSize) +
               "; the emulator runs wave64");
  uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (!threads || threads > 1024)
    return err("workgroup of " + Twine(threads) +
               " work-items (1 to 1024 allowed)");
  if (!grid.x || !grid.y || !grid.z)
    return err("empty grid");
  if (k->privateSegmentBytes)
    return err("kernel " + name + " uses " + Twine(k->privateSegmentBytes) +
               " bytes of scratch; the emulator does not model scratch");
  uint64_t ldsBytes = uint64_t(k->groupSegmentBytes) + dynamicLds;
  uint64_t ldsLimit = co.chip() == "gfx950" ? 160 * 1024 : 64 * 1024;
  if (ldsBytes > ldsLimit)
    return err("kernel " + name + " needs " + Twine(ldsBytes) +
               " bytes of LDS; " + co.chip() + " has " + Twine(ldsLimit));

  // The kernarg segment: the caller's explicit arguments, then the hidden
  // ones the metadata names.
  uint32_t explicitEnd = 0;
  for (const KernelArg &a : k->args)
    if (!StringRef(a.valueKind).starts_with("hidden_"))
      explicitEnd = std::max(explicitEnd, a.offset + a.size);
  if (kernargBytes != explicitEnd)
    return err("kernel " + name + " takes " + Twine(explicitEnd) +
               " bytes of explicit kernel arguments; " + Twine(kernargBytes) +
               " were given");
  std::vector<uint8_t> args(
      std::max<uint32_t>(k->kernargBytes, explicitEnd) + 64, 0);
  std::memcpy(args.data(), kernarg, kernargBytes);
  for (const KernelArg &a : k->args) {
    auto put = [&](uint64_t v) {
      std::memcpy(args.data() + a.offset, &v, std::min(a.size, 8u));
    };
    StringRef kind = a.valueKind;
    if (kind == "hidden_block_count_x")
      put(grid.x);
    else if (kind == "hidden_block_count_y")
      put(grid.y);
    else if (kind == "hidden_block_count_z")
      put(grid.z);
    else if (kind == "hidden_group_size_x")
      put(block.x);
    else if (kind == "hidden_group_size_y")
      put(block.y);
    else if (kind == "hidden_group_size_z")
      put(block.z);
    else if (kind == "hidden_grid_dims")
      put(grid.z > 1 ? 3 : grid.y > 1 ? 2 : 1);
    else if (kind == "hidden_dynamic_lds_size")
      put(dynamicLds);
  }
  DispatchPacket packet{};
  packet.setup = 3;
  packet.wgX = block.x, packet.wgY = block.y, packet.wgZ = block.z;
  packet.gridX = grid.x * block.x, packet.gridY = grid.y * block.y,
  packet.gridZ = grid.z * block.z;
  packet.groupSegment = ldsBytes;
  packet.kernarg = reinterpret_cast<uint64_t>(args.data());
  registerBuffer(args.data(), args.size(), "kernarg segment", false);
  registerBuffer(&packet, sizeof packet, "dispatch packet", false);
  auto release = [&] {
    unregisterBuffer(args.data());
    unregisterBuffer(&packet);
  };

  Counters local;
  Counters &c = out ? *out : local;
  c = Counters();
  Dispatch d{*this,
             co,
             *k,
             co.chip() == "gfx950",
             {},
             c,
             {},
             {0, 0, 0},
             co.chip() == "gfx950" ? 64u : 32u,
             {}};
  uint64_t budget = instructionLimit;
  unsigned nWaves = (threads + 63) / 64;
  unsigned userSgprs = (k->rsrc2 >> 1) & 0x1f;
  for (uint32_t z = 0; z < grid.z; ++z)
    for (uint32_t y = 0; y < grid.y; ++y)
      for (uint32_t xg = 0; xg < grid.x; ++xg) {
        d.wg[0] = xg, d.wg[1] = y, d.wg[2] = z;
        // LDS holds garbage at the start of a workgroup: 0xFF bytes read
        // as NaN in every float format.
        d.lds.assign(ldsBytes, 0xFF);
        d.dmaOwner.assign(ldsBytes, 0);
        d.dmas.clear();
        std::vector<Wave> waves(nWaves);
        for (unsigned wi = 0; wi < nWaves; ++wi) {
          Wave &wv = waves[wi];
          wv.id = wi;
          WaveState &s = wv.st;
          s.pc = k->entry;
          unsigned sg = 0;
          auto put64 = [&](uint64_t v) {
            s.setS64(sg, v);
            sg += 2;
          };
          uint16_t p = k->codeProperties;
          if (p & 1)
            sg += 4; // private segment buffer (no scratch)
          if (p & 2)
            put64(reinterpret_cast<uint64_t>(&packet));
          if (p & 4)
            put64(0); // queue pointer: none
          if (p & 8)
            put64(reinterpret_cast<uint64_t>(args.data()));
          if (p & 16)
            put64(0); // dispatch id
          if (p & 32)
            sg += 2; // flat scratch init
          if (p & 64)
            s.s[sg++] = 0;
          // Preloaded kernel arguments fill the remaining user SGPRs.
          for (unsigned pre = 0; sg < userSgprs; ++pre)
            std::memcpy(&s.s[sg++], args.data() + 4 * pre, 4);
          if (k->rsrc2 >> 7 & 1)
            s.s[sg++] = xg;
          if (k->rsrc2 >> 8 & 1)
            s.s[sg++] = y;
          if (k->rsrc2 >> 9 & 1)
            s.s[sg++] = z;
          if (k->rsrc2 >> 10 & 1)
            s.s[sg++] = 0;
          uint64_t execMask = 0;
          for (unsigned l = 0; l < 64; ++l) {
            uint64_t t = uint64_t(wi) * 64 + l;
            if (t >= threads)
              break;
            execMask |= uint64_t(1) << l;
            uint32_t tx = t % block.x, ty = (t / block.x) % block.y,
                     tz = t / (block.x * block.y);
            s.V(0, l) = tx | ty << 10 | tz << 20;
          }
          s.setExec(execMask);
        }
        c.waves += nWaves;
        ++c.workgroups;
        if (Error e = runWorkgroup(d, waves, budget)) {
          release();
          return e;
        }
      }
  release();
  return Error::success();
}

Error mla::emu::runRaw(
    Device &dev, const std::string &chip, ArrayRef<uint8_t> code,
    uint32_t threads, uint32_t ldsBytes,
    const std::function<void(WaveState &, unsigned)> &setup,
    const std::function<void(const WaveState &, unsigned)> &inspect,
    Counters *out) {
  auto co = CodeObject::fromCode(chip, code);
  if (!co)
    return co.takeError();
  Counters local;
  Counters &c = out ? *out : local;
  c = Counters();
  Dispatch d{
      dev, **co,      (*co)->kernels().front(),    chip == "gfx950", {}, c,
      {},  {0, 0, 0}, chip == "gfx950" ? 64u : 32u, {}};
  d.lds.assign(ldsBytes, 0xFF);
  d.dmaOwner.assign(ldsBytes, 0);
  unsigned nWaves = (threads + 63) / 64;
  std::vector<Wave> waves(nWaves);
  for (unsigned wi = 0; wi < nWaves; ++wi) {
    waves[wi].id = wi;
    uint64_t m = 0;
    for (unsigned l = 0; l < 64 && wi * 64 + l < threads; ++l) {
      m |= uint64_t(1) << l;
      waves[wi].st.V(0, l) = wi * 64 + l;
    }
    waves[wi].st.setExec(m);
    if (setup)
      setup(waves[wi].st, wi);
  }
  uint64_t budget = dev.instructionLimit;
  if (Error e = runWorkgroup(d, waves, budget))
    return e;
  if (inspect)
    for (unsigned wi = 0; wi < nWaves; ++wi)
      inspect(waves[wi].st, wi);
  return Error::success();
}
