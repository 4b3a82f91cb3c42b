//===- Dispatch.cpp - workgroups, waves, barriers and the wait model ------===//
//
// A dispatch runs its workgroups one after another; inside a workgroup each
// wave runs until it reaches s_barrier or s_endpgm, and a barrier releases
// when every wave that has not ended has reached it. Initial registers follow
// AMDGPUUsage ("Initial Kernel Execution State"): user SGPRs in the order the
// descriptor enables them, then workgroup ids, and the packed work-item ids
// in v0 (gfx90a and later).
//
// The wait model (Exec.cpp): a load's data is read at issue but reaches its
// registers only when an s_waitcnt guarantees it (vmcnt: vector memory, in
// order, with stores counted too; lgkmcnt: LDS in order, scalar loads out of
// order). An instruction that reads or overwrites a register still waiting
// for its load stops the dispatch with an error naming both instructions.
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
