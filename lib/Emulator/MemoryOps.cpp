//===- MemoryOps.cpp - LDS, buffer, global and scalar memory --------------===//
//
// Semantics from the ISA guides' "Data Share Operations", "Vector Memory
// Buffer Instructions", "Flat, Scratch and Global Instructions" and "Scalar
// Memory Operations". Loads read memory at issue and hand their data to the
// wait model (Exec.cpp); stores write at issue and count on the same
// counter. LDS accesses outside the workgroup's allocation and global
// accesses outside the registered buffers fault. Raw buffer accesses (stride
// 0) are range-checked per dword against num_records as the guide states for
// raw buffers: out of range reads return 0, writes are dropped.
//
//===----------------------------------------------------------------------===//
#include "Machine.h"

#include "llvm/Support/MathExtras.h"

#include <cstring>

using namespace mla::emu;

namespace {

using U32 = uint32_t;
using U64 = uint64_t;

/// A byte or short load's dword: zero- or sign-extended.
U32 subDword(const uint8_t *buf, unsigned bytes, bool sign) {
  U32 v = bytes == 1 ? buf[0] : buf[0] | U32(buf[1]) << 8;
  if (sign)
    v = bytes == 1 ? U32(int32_t(int8_t(v))) : U32(int32_t(int16_t(v)));
  return v;
}

bool ldsCheck(Exec &x, U64 addr, unsigned n, unsigned lane) {
  if (addr + n > x.d.lds.size())
    return x.fail("lane " + llvm::Twine(lane) + " accesses LDS bytes [" +
                  llvm::Twine(addr) + ", " + llvm::Twine(addr + n) +
                  ") beyond the workgroup's " + llvm::Twine(x.d.lds.size()) +
                  " bytes");
  return x.ldsDmaFree(addr, n, lane);
}

/// The LDS byte addresses of a DS access in the lanes of EXEC: part 0, and
/// part 1 of the *2 forms (offset0 / offset1 count elements), each
/// bounds-checked, bank conflicts counted per part.
template <unsigned Bytes, bool Two>
bool dsAddresses(Exec &x, const Inst &in, U64 (&addr)[2][64]) {
  U64 e = x.exec();
  for (unsigned part = 0; part < (Two ? 2u : 1u); ++part) {
    U32 bankAddr[64] = {};
    for (unsigned l = 0; l < 64; ++l) {
      if (!(e >> l & 1))
        continue;
      U64 base = x.u32(in.srcs[0], l);
      addr[part][l] =
          Two ? base + U64(in.imms[part]) * Bytes : base + U64(in.imms[0]);
      if (!ldsCheck(x, addr[part][l], Bytes, l))
        return false;
      bankAddr[l] = U32(addr[part][l]);
    }
    x.ldsBankCycles(bankAddr, e, Bytes);
  }
  return true;
}

/// ds_read_* / ds_read2_*: `Bytes` per element (sub-dword: zero- or
/// sign-extended), two elements for read2.
template <unsigned Bytes, bool Two, bool Signed = false>
bool dsRead(Exec &x, const Inst &in) {
  U64 e = x.exec();
  const Opnd &dst = in.defs[0];
  unsigned dwords = Two ? 2 * ((Bytes + 3) / 4) : (Bytes + 3) / 4;
  Pending p{Counter::LGKM,
            true,
            dst.file,
            dst.reg,
            uint8_t(dwords),
            e,
            std::vector<U32>(dwords * 64, 0),
            nullptr};
  U64 addr[2][64] = {};
  if (!dsAddresses<Bytes, Two>(x, in, addr))
    return false;
  for (unsigned l = 0; l < 64; ++l) {
    if (!(e >> l & 1))
      continue;
    for (unsigned part = 0; part < (Two ? 2u : 1u); ++part) {
      uint8_t buf[16] = {};
      std::memcpy(buf, &x.d.lds[addr[part][l]], Bytes);
      if (Bytes < 4) {
        p.data[l] = subDword(buf, Bytes, Signed);
        continue;
      }
      for (unsigned d = 0; d < Bytes / 4; ++d)
        std::memcpy(&p.data[(part * (Bytes / 4) + d) * 64 + l], buf + 4 * d, 4);
    }
  }
  x.deferLoad(std::move(p));
  return true;
}

/// ds_read_b64_tr_b8 / _b16 (gfx950): every lane reads 8 bytes at its own
/// address, then each group of 16 lanes exchanges them: the group's 128
/// bytes, lane after lane, form a row-major matrix of 16 columns of
/// `Bits`-bit elements (8 rows of bytes; 4 rows of 16-bit elements), and
/// lane i of the group receives column i, row 0 in its lowest element.
/// Lane 2r (b8) reads row r's columns 0-7 and lane 2r + 1 its columns
/// 8-15; lane i's byte j comes from lane 2j + i / 8, byte i mod 8.
/// The lane map is the one the CDNA4 guide's transposing loads describe,
/// as hardware-validated code uses it (ThunderKittens' CDNA4 fp8 and bf16
/// column loads: lane l of a group addresses row l / 2 (b8) or l / 4 (b16)
/// and column block l mod 2 (l mod 4) of the block it turns into one
/// column per lane). The guide requires EXEC to be all ones: a partial
/// mask is refused rather than guessed at.
template <unsigned Bits> bool dsReadTranspose(Exec &x, const Inst &in) {
  U64 e = x.exec();
  if (e != ~U64(0))
    return x.fail("a transposing LDS read with EXEC " +
                  llvm::Twine::utohexstr(e) +
                  " (the instruction needs every lane active)");
  const Opnd &dst = in.defs[0];
  Pending p{
      Counter::LGKM, true, dst.file, dst.reg, 2, e, std::vector<U32>(2 * 64, 0),
      nullptr};
  U64 addr[2][64] = {};
  if (!dsAddresses<8, false>(x, in, addr))
    return false;
  constexpr unsigned per = Bits / 8; // bytes per element
  for (unsigned g = 0; g < 64; g += 16) {
    uint8_t block[128];
    for (unsigned l = 0; l < 16; ++l)
      std::memcpy(block + 8 * l, &x.d.lds[addr[0][g + l]], 8);
    for (unsigned i = 0; i < 16; ++i) {
      uint8_t out[8];
      for (unsigned r = 0; r < 8 / per; ++r)
        std::memcpy(out + r * per, block + (r * 16 + i) * per, per);
      std::memcpy(&p.data[g + i], out, 4);
      std::memcpy(&p.data[64 + g + i], out + 4, 4);
    }
  }
  x.deferLoad(std::move(p));
  return true;
}

/// ds_write_*: srcs = addr, data[, data1]; imms = offset (offset0, offset1).
template <unsigned Bytes, bool Two> bool dsWrite(Exec &x, const Inst &in) {
  U64 e = x.exec();
  U64 addr[2][64] = {};
  if (!dsAddresses<Bytes, Two>(x, in, addr))
    return false;
  for (unsigned l = 0; l < 64; ++l) {
    if (!(e >> l & 1))
      continue;
    for (unsigned part = 0; part < (Two ? 2u : 1u); ++part) {
      uint8_t buf[16];
      for (unsigned d = 0; d < (Bytes + 3) / 4; ++d) {
        U32 v = x.getV(in.srcs[1 + part], l, d);
        std::memcpy(buf + 4 * d, &v, 4);
      }
      std::memcpy(&x.d.lds[addr[part][l]], buf, Bytes);
    }
  }
  x.deferLoad({Counter::LGKM, true, File::None, 0, 0, 0, {}, nullptr});
  return true;
}

/// ds_swizzle_b32: offset[15] = 1: quad permute (offset[7:0]); else the
/// bit-mask mode within 32 lanes: src = ((lane & and) | or) ^ xor.
bool ds_swizzle_b32(Exec &x, const Inst &in) {
  U64 e = x.exec();
  U32 off = U32(in.imms[0]);
  const Opnd &dst = in.defs[0];
  Pending p{Counter::LGKM,           true,   dst.file, dst.reg, 1, e,
            std::vector<U32>(64, 0), nullptr};
  for (unsigned l = 0; l < 64; ++l) {
    if (!(e >> l & 1))
      continue;
    unsigned src;
    if (off & 0x8000) {
      src = (l & ~3u) | ((off >> (2 * (l & 3))) & 3);
    } else {
      unsigned andM = off & 31, orM = (off >> 5) & 31, xorM = (off >> 10) & 31;
      src = (l & 32) | ((((l & 31) & andM) | orM) ^ xorM);
    }
    p.data[l] = (e >> src & 1) ? x.u32(in.srcs[0], src) : 0;
  }
  x.deferLoad(std::move(p));
  return true;
}

/// ds_bpermute_b32 (pull: D[l] = data[(addr[l] + offset) / 4 mod 64]) and
/// ds_permute_b32 (push: D[(addr[l] + offset) / 4 mod 64] = data[l]).
template <bool Backward> bool dsPermute(Exec &x, const Inst &in) {
  U64 e = x.exec();
  const Opnd &dst = in.defs[0];
  Pending p{Counter::LGKM,           true,   dst.file, dst.reg, 1, e,
            std::vector<U32>(64, 0), nullptr};
  for (unsigned l = 0; l < 64; ++l) {
    if (!(e >> l & 1))
      continue;
    unsigned sel = ((x.u32(in.srcs[0], l) + U32(in.imms[0])) / 4) & 63;
    if (Backward)
      p.data[l] = (e >> sel & 1) ? x.u32(in.srcs[1], sel) : 0;
    else
      p.data[sel] = x.u32(in.srcs[1], l);
  }
  x.deferLoad(std::move(p));
  return true;
}

//===-- buffer (MUBUF) ----------------------------------------------------===//

struct Rsrc {
  U64 base;
  U32 stride, numRecords;
};
Rsrc rsrc(Exec &x, const Opnd &o) {
  U32 d0 = x.w.s[o.reg], d1 = x.w.s[o.reg + 1], d2 = x.w.s[o.reg + 2];
  return {d0 | U64(d1 & 0xffff) << 32, (d1 >> 16) & 0x3fff, d2};
}

/// buffer_load / buffer_store with OFFEN (vaddr = byte offset) or OFFSET
/// (no vaddr). Operands: vdata, [vaddr], srsrc, soffset; imms: offset, ...
template <unsigned Bytes, bool Store, bool Offen>
bool bufferOp(Exec &x, const Inst &in) {
  U64 e = x.exec();
  unsigned i = 0;
  const Opnd &data = Store ? in.srcs[i++] : in.defs[0];
  const Opnd *vaddr = Offen ? &in.srcs[i++] : nullptr;
  const Opnd &srs = in.srcs[i++];
  const Opnd &soff = in.srcs[i++];
  Rsrc r = rsrc(x, srs);
  if (r.stride)
    return x.fail("structured buffers (stride " + llvm::Twine(r.stride) +
                  ") are not modelled; the kernels use raw buffers");
  U32 so = x.s32(soff), instOff = U32(in.imms[0]);
  unsigned dwords = (Bytes + 3) / 4;
  Pending p{Counter::VM,
            true,
            data.file,
            data.reg,
            uint8_t(Store ? 0 : dwords),
            e,
            std::vector<U32>(Store ? 0 : dwords * 64, 0),
            nullptr};
  for (unsigned l = 0; l < 64; ++l) {
    if (!(e >> l & 1))
      continue;
    U64 off = U64(Offen ? x.u32(*vaddr, l) : 0) + instOff;
    for (unsigned d = 0; d < dwords; ++d) {
      unsigned n = Bytes < 4 ? Bytes : 4;
      bool inRange = off + 4 * d + n <= r.numRecords;
      U64 addr = r.base + so + off + 4 * d;
      if (Store) {
        if (!inRange)
          continue;
        U32 v = x.getV(data, l, d);
        if (!x.writeGlobal(addr, &v, n, l))
          return false;
      } else {
        U32 v = 0;
        if (inRange && !x.readGlobal(addr, &v, n, l))
          return false;
        p.data[d * 64 + l] = v;
      }
    }
  }
  x.deferLoad(std::move(p));
  return true;
}

/// buffer_load_dword / _dwordx4 with the LDS bit (OFFEN; srcs = vaddr,
/// srsrc, soffset; imms = offset, ...): no VGPR is written; lane l's
/// `Bytes` go to LDS byte M0 + offset + l * Bytes (gfx950's dwordx4: 16 per
/// lane; the instruction offset applies to both addresses, AMDGPU DMA
/// Operations in LLVM's docs). Out-of-range lanes write zeros, as a
/// buffer load returns them. The load counts on vmcnt like any buffer
/// load; its LDS bytes are written at issue and claimed until the wave's
/// s_waitcnt retires it (Dispatch::dmaOwner).
template <unsigned Bytes> bool bufferLdsLoad(Exec &x, const Inst &in) {
  U64 e = x.exec();
  const Opnd &vaddr = in.srcs[0];
  Rsrc r = rsrc(x, in.srcs[1]);
  if (r.stride)
    return x.fail("structured buffers (stride " + llvm::Twine(r.stride) +
                  ") are not modelled; the kernels use raw buffers");
  U32 so = x.s32(in.srcs[2]), instOff = U32(in.imms[0]);
  U64 ldsBase = U64(x.w.s[WaveState::kM0]) + instOff;
  uint32_t id = x.d.nextDma++;
  Dispatch::Dma dma{x.cur, x.wave.id, {}};
  for (unsigned l = 0; l < 64; ++l) {
    if (!(e >> l & 1))
      continue;
    U64 dst = ldsBase + U64(l) * Bytes;
    if (!ldsCheck(x, dst, Bytes, l))
      return false;
    U64 off = U64(x.u32(vaddr, l)) + instOff;
    uint8_t buf[Bytes] = {};
    if (off + Bytes <= r.numRecords &&
        !x.readGlobal(r.base + so + off, buf, Bytes, l))
      return false;
    std::memcpy(&x.d.lds[dst], buf, Bytes);
    for (U64 a = dst; a < dst + Bytes; ++a)
      x.d.dmaOwner[a] = id;
    dma.ranges.push_back({U32(dst), U32(dst + Bytes)});
  }
  x.d.dmas.emplace(id, std::move(dma));
  Pending p{Counter::VM, true, File::None, 0, 0, 0, {}, nullptr};
  p.ldsDma = id;
  x.deferLoad(std::move(p));
  return true;
}

//===-- global ------------------------------------------------------------===//

/// global_load_* (vdst, vaddr64 | saddr + vaddr32, offset) and
/// global_store_* (vaddr, vdata, [saddr], offset).
template <unsigned Bytes, bool Store, bool Saddr, bool Signed = false>
bool globalOp(Exec &x, const Inst &in) {
  U64 e = x.exec();
  const Opnd *vaddr, *data = nullptr, *saddr = nullptr;
  if (Store) {
    vaddr = &in.srcs[0];
    data = &in.srcs[1];
    if (Saddr)
      saddr = &in.srcs[2];
  } else {
    data = &in.defs[0];
    if (Saddr) {
      saddr = &in.srcs[0];
      vaddr = &in.srcs[1];
    } else {
      vaddr = &in.srcs[0];
    }
  }
  // The MC operand holds the encoding's signed 13-bit field as is.
  int64_t off = llvm::SignExtend64<13>(uint64_t(in.imms[0]));
  unsigned dwords = (Bytes + 3) / 4;
  Pending p{Counter::VM,
            true,
            data->file,
            data->reg,
            uint8_t(Store ? 0 : dwords),
            e,
            std::vector<U32>(Store ? 0 : dwords * 64, 0),
            nullptr};
  for (unsigned l = 0; l < 64; ++l) {
    if (!(e >> l & 1))
      continue;
    U64 addr = Saddr ? x.s64(*saddr) + x.u32(*vaddr, l) : x.u64(*vaddr, l);
    addr += off;
    uint8_t buf[16] = {};
    if (Store) {
      for (unsigned d = 0; d < dwords; ++d) {
        U32 v = x.getV(*data, l, d);
        std::memcpy(buf + 4 * d, &v, 4);
      }
      if (!x.writeGlobal(addr, buf, Bytes, l))
        return false;
      continue;
    }
    if (!x.readGlobal(addr, buf, Bytes, l))
      return false;
    if (Bytes < 4) {
      p.data[l] = subDword(buf, Bytes, Signed);
      continue;
    }
    for (unsigned d = 0; d < dwords; ++d)
      std::memcpy(&p.data[d * 64 + l], buf + 4 * d, 4);
  }
  x.deferLoad(std::move(p));
  return true;
}

//===-- scalar memory
//-------------------------------------------------------===//

/// s_load_dword*: sdst, sbase, [soffset], imm offset. The address is
/// dword-aligned (its low two bits are ignored).
template <unsigned Dwords, bool Soffset> bool sLoad(Exec &x, const Inst &in) {
  const Opnd &dst = in.defs[0];
  // The immediate is the encoding's signed 21-bit offset field.
  U64 addr =
      x.s64(in.srcs[0]) + U64(llvm::SignExtend64<21>(uint64_t(in.imms[0])));
  if (Soffset)
    addr += x.s32(in.srcs[1]);
  addr &= ~U64(3);
  Pending p{Counter::LGKM,
            false,
            File::S,
            dst.reg,
            uint8_t(Dwords),
            0,
            std::vector<U32>(Dwords, 0),
            nullptr};
  if (!x.readGlobal(addr, p.data.data(), 4 * Dwords, 0))
    return false;
  x.deferLoad(std::move(p));
  return true;
}

} // namespace

void mla::emu::addMemoryOps(OpTable &t) {
  auto L = [&](const char *n, Handler h) { t[n] = {h, Class::LDS}; };
  auto M = [&](const char *n, Handler h) { t[n] = {h, Class::VMEM}; };
  auto S = [&](const char *n, Handler h) { t[n] = {h, Class::SMEM}; };
  L("ds_read_u8", dsRead<1, false>);
  L("ds_read_i8", dsRead<1, false, true>);
  L("ds_read_u16", dsRead<2, false>);
  L("ds_read_i16", dsRead<2, false, true>);
  L("ds_read_b32", dsRead<4, false>);
  L("ds_read_b64", dsRead<8, false>);
  L("ds_read_b96", dsRead<12, false>);
  L("ds_read_b128", dsRead<16, false>);
  L("ds_read2_b32", dsRead<4, true>);
  L("ds_read2_b64", dsRead<8, true>);
  L("ds_read_b64_tr_b8", dsReadTranspose<8>);
  L("ds_read_b64_tr_b16", dsReadTranspose<16>);
  L("ds_write_b8", dsWrite<1, false>);
  L("ds_write_b16", dsWrite<2, false>);
  L("ds_write_b32", dsWrite<4, false>);
  L("ds_write_b64", dsWrite<8, false>);
  L("ds_write_b96", dsWrite<12, false>);
  L("ds_write_b128", dsWrite<16, false>);
  L("ds_write2_b32", dsWrite<4, true>);
  L("ds_write2_b64", dsWrite<8, true>);
  L("ds_swizzle_b32", ds_swizzle_b32);
  L("ds_bpermute_b32", dsPermute<true>);
  L("ds_permute_b32", dsPermute<false>);
  M("buffer_load_dword_offen", bufferOp<4, false, true>);
  M("buffer_load_dwordx2_offen", bufferOp<8, false, true>);
  M("buffer_load_dwordx3_offen", bufferOp<12, false, true>);
  M("buffer_load_dwordx4_offen", bufferOp<16, false, true>);
  M("buffer_load_dword_offset", bufferOp<4, false, false>);
  M("buffer_load_dwordx2_offset", bufferOp<8, false, false>);
  M("buffer_load_dwordx4_offset", bufferOp<16, false, false>);
  M("buffer_load_dword_lds_offen", bufferLdsLoad<4>);
  M("buffer_load_dwordx4_lds_offen", bufferLdsLoad<16>);
  M("buffer_store_dword_offen", bufferOp<4, true, true>);
  M("buffer_store_dwordx2_offen", bufferOp<8, true, true>);
  M("buffer_store_dwordx4_offen", bufferOp<16, true, true>);
  M("buffer_store_dword_offset", bufferOp<4, true, false>);
  M("buffer_store_dwordx4_offset", bufferOp<16, true, false>);
#define G(NAME, BYTES, SIGNED)                                                 \
  M("global_load_" NAME, globalOp<BYTES, false, false, SIGNED>);               \
  M("global_load_" NAME "_saddr", globalOp<BYTES, false, true, SIGNED>)
  G("ubyte", 1, false);
  G("sbyte", 1, true);
  G("ushort", 2, false);
  G("sshort", 2, true);
  G("dword", 4, false);
  G("dwordx2", 8, false);
  G("dwordx3", 12, false);
  G("dwordx4", 16, false);
#undef G
#define GS(NAME, BYTES)                                                        \
  M("global_store_" NAME, globalOp<BYTES, true, false>);                       \
  M("global_store_" NAME "_saddr", globalOp<BYTES, true, true>)
  GS("byte", 1);
  GS("short", 2);
  GS("dword", 4);
  GS("dwordx2", 8);
  GS("dwordx3", 12);
  GS("dwordx4", 16);
#undef GS
  S("s_load_dword_imm", sLoad<1, false>);
  S("s_load_dwordx2_imm", sLoad<2, false>);
  S("s_load_dwordx4_imm", sLoad<4, false>);
  S("s_load_dwordx8_imm", sLoad<8, false>);
  S("s_load_dwordx16_imm", sLoad<16, false>);
  S("s_load_dword_sgpr_imm", sLoad<1, true>);
  S("s_load_dwordx2_sgpr_imm", sLoad<2, true>);
  S("s_load_dwordx4_sgpr_imm", sLoad<4, true>);
  S("s_load_dwordx8_sgpr_imm", sLoad<8, true>);
}
