//===- PackedOps.cpp - VOP3P packed math and narrow-float conversions -----===//
//
// From the CDNA3 / CDNA4 ISA guides: packed 16-bit integer and packed f32
// math (op_sel / op_sel_hi pick each half's source half, neg_lo / neg_hi),
// and the fp8 / bf8 pair conversions, E4M3FN / E5M2 on gfx950 and the FNUZ
// formats on gfx942 (Numerics.h), round to nearest even.
//
//===----------------------------------------------------------------------===//
#include "Machine.h"
#include "Numerics.h"

#include <cmath>

using namespace mla::emu;

namespace {

using U32 = uint32_t;
using U64 = uint64_t;

//===-- VOP3P
//--------------------------------------------------------------===//

/// A 16-bit half of a packed source: op_sel / op_sel_hi pick it.
U32 half16(Exec &x, const Opnd &o, unsigned l, bool hi) {
  U32 v = x.u32(o, l);
  bool sel = hi ? (o.mods & kOpSel1) : (o.mods & kOpSel0);
  return sel ? v >> 16 : v & 0xffff;
}

template <U32 (*F)(U32, U32)> bool vpk16(Exec &x, const Inst &in) {
  U64 e = x.exec();
  for (unsigned l = 0; l < 64; ++l)
    if (e >> l & 1) {
      U32 lo =
          F(half16(x, in.srcs[0], l, false), half16(x, in.srcs[1], l, false)) &
          0xffff;
      U32 hi =
          F(half16(x, in.srcs[0], l, true), half16(x, in.srcs[1], l, true)) &
          0xffff;
      x.setV(in.defs[0], l, lo | hi << 16);
    }
  return true;
}
/// v_pk_mad_u16: each half a * b + c, low 16 bits (three packed sources).
bool vpkMadU16(Exec &x, const Inst &in) {
  U64 e = x.exec();
  for (unsigned l = 0; l < 64; ++l)
    if (e >> l & 1) {
      U32 r = 0;
      for (bool hi : {false, true}) {
        U32 v = half16(x, in.srcs[0], l, hi) * half16(x, in.srcs[1], l, hi) +
                half16(x, in.srcs[2], l, hi);
        r |= (v & 0xffff) << (hi ? 16 : 0);
      }
      x.setV(in.defs[0], l, r);
    }
  return true;
}
U32 pkLshl(U32 a, U32 b) { return b << (a & 15); }
U32 pkLshr(U32 a, U32 b) { return b >> (a & 15); }
U32 pkAdd(U32 a, U32 b) { return a + b; }
U32 pkSub(U32 a, U32 b) { return a - b; }
U32 pkMulLo(U32 a, U32 b) { return a * b; }
U32 pkMinU(U32 a, U32 b) { return a < b ? a : b; }
U32 pkMaxU(U32 a, U32 b) { return a > b ? a : b; }
U32 pkAshr(U32 a, U32 b) { return U32(int16_t(b) >> (a & 15)); }

/// One f32 element of a packed-f32 source (v_pk_*_f32, gfx90a+).
float pkF32(Exec &x, const Opnd &o, unsigned l, bool hi) {
  bool sel = hi ? (o.mods & kOpSel1) : (o.mods & kOpSel0);
  U32 bits = o.file == File::Imm
                 ? U32(o.imm)
                 : (sel ? U32(x.u64(o, l) >> 32) : U32(x.u64(o, l)));
  float f = asF(bits);
  if (o.mods & (hi ? kNegHi : kNeg))
    f = -f;
  return f;
}
/// Both halves are computed before either is written: D may be a source
/// (v_pk_mul_f32 v[0:1], v[0:1], v[2:3] op_sel_hi:[0,1] reads v0 for both
/// halves after writing v0 for the low one).
template <int Kind> bool vpkF32(Exec &x, const Inst &in) {
  U64 e = x.exec();
  for (unsigned l = 0; l < 64; ++l) {
    if (!(e >> l & 1))
      continue;
    float r[2];
    for (unsigned h = 0; h < 2; ++h) {
      float a = pkF32(x, in.srcs[0], l, h), b = pkF32(x, in.srcs[1], l, h);
      r[h] = Kind == 0   ? a + b
             : Kind == 1 ? a * b
                         : std::fma(a, b, pkF32(x, in.srcs[2], l, h));
    }
    for (unsigned h = 0; h < 2; ++h)
      x.setV(in.defs[0], l, asU(r[h]), h);
  }
  return true;
}

//===-- conversions to and from fp8 / bf16 --------------------------------===//

const MiniFloat &fp8Format(Exec &x) { return x.d.gfx950 ? kE4M3FN : kE4M3FNUZ; }
const MiniFloat &bf8Format(Exec &x) { return x.d.gfx950 ? kE5M2 : kE5M2FNUZ; }

/// v_cvt_pk_fp8_f32 / v_cvt_pk_bf8_f32: two f32 -> two codes into word
/// op_sel[dst] of D; the other word keeps its value.
template <bool Bf8> bool vcvtPkF8(Exec &x, const Inst &in) {
  U64 e = x.exec();
  const MiniFloat &f = Bf8 ? bf8Format(x) : fp8Format(x);
  bool hiWord = in.srcs[0].mods & kDstOpSel;
  bool clamp = !in.imms.empty() && in.imms[0];
  for (unsigned l = 0; l < 64; ++l)
    if (e >> l & 1) {
      U32 c0 = encodeMini(x.f32(in.srcs[0], l), f, clamp);
      U32 c1 = encodeMini(x.f32(in.srcs[1], l), f, clamp);
      U32 old = x.getV(in.defs[0], l);
      U32 pair = c0 | c1 << 8;
      x.setV(in.defs[0], l,
             hiWord ? (old & 0xffff) | pair << 16 : (old & 0xffff0000u) | pair);
    }
  return true;
}

/// v_cvt_pk_f32_fp8 / bf8: two codes of word op_sel (or SDWA WORD_1) of S0
/// -> two f32.
template <bool Bf8> bool vcvtPkF32F8(Exec &x, const Inst &in) {
  U64 e = x.exec();
  const MiniFloat &f = Bf8 ? bf8Format(x) : fp8Format(x);
  bool hiWord = in.srcs[0].mods & kOpSel0;
  if (in.enc == Enc::SDWA)
    hiWord = in.imms.back() == 5;
  for (unsigned l = 0; l < 64; ++l)
    if (e >> l & 1) {
      U32 v = x.u32(in.srcs[0], l) >> (hiWord ? 16 : 0);
      x.setV(in.defs[0], l, asU(float(decodeMini(v & 0xff, f))), 0);
      x.setV(in.defs[0], l, asU(float(decodeMini((v >> 8) & 0xff, f))), 1);
    }
  return true;
}

/// v_cvt_f32_fp8 / bf8: one code of S0 -> f32: byte 0 (e32), the SDWA
/// src0_sel byte (WORD_1: byte 2), or the byte op_sel picks (e64).
template <bool Bf8> bool vcvtF32F8(Exec &x, const Inst &in) {
  U64 e = x.exec();
  const MiniFloat &f = Bf8 ? bf8Format(x) : fp8Format(x);
  unsigned byte = 0;
  if (in.enc == Enc::SDWA && !in.imms.empty()) {
    int64_t sel = in.imms.back();
    byte = sel <= 3 ? unsigned(sel) : sel == 5 ? 2u : 0u;
  } else if (in.enc == Enc::E64) {
    byte = (in.srcs[0].mods & kOpSel0 ? 1u : 0u) |
           (in.srcs[0].mods & kOpSel1 ? 2u : 0u);
  }
  for (unsigned l = 0; l < 64; ++l)
    if (e >> l & 1) {
      U32 code = (x.u32(in.srcs[0], l) >> (8 * byte)) & 0xff;
      x.setV(in.defs[0], l, asU(float(decodeMini(code, f))));
    }
  return true;
}

/// What a scaled conversion writes.
enum class Out { Bf16, F16, F32 };

/// The scaled conversions' result for lane l: `a`, `b` as a bf16 or f16
/// pair (RNE, `a` in the low half) or as two f32 registers.
template <Out To>
void setScaledPair(Exec &x, const Inst &in, unsigned l, float a, float b) {
  if (To == Out::Bf16) {
    x.setV(in.defs[0], l, U32(f32ToBf16(a)) | U32(f32ToBf16(b)) << 16);
  } else if (To == Out::F16) {
    x.setV(in.defs[0], l, U32(f32ToF16(a)) | U32(f32ToF16(b)) << 16);
  } else {
    x.setV(in.defs[0], l, asU(a), 0);
    x.setV(in.defs[0], l, asU(b), 1);
  }
}

/// gfx950 v_cvt_scalef32_pk_{bf16,f16,f32}_fp8: two codes of word op_sel[0]
/// of S0, times the scale S1 (its exponent: 2^(exp - 127)), to bf16 or f16
/// (RNE) or f32.
template <Out To, bool Bf8> bool vcvtScaleF8(Exec &x, const Inst &in) {
  U64 e = x.exec();
  const MiniFloat &f = Bf8 ? kE5M2 : kE4M3FN;
  bool hiWord = in.srcs[0].mods & kOpSel0;
  for (unsigned l = 0; l < 64; ++l)
    if (e >> l & 1) {
      U32 v = x.u32(in.srcs[0], l) >> (hiWord ? 16 : 0);
      U32 sbits = x.u32(in.srcs[1], l);
      double scale = e8m0(uint8_t(sbits >> 23));
      setScaledPair<To>(x, in, l, float(decodeMini(v & 0xff, f) * scale),
                            float(decodeMini((v >> 8) & 0xff, f) * scale));
    }
  return true;
}

/// gfx950 v_cvt_scalef32_pk_{bf16,f32}_fp4: the two e2m1 codes of byte
/// op_sel[0] | op_sel[1] << 1 of S0 (element 2j in the low nibble), times
/// the scale S1's exponent (2^(exp - 127), as the fp8 forms), to bf16 (RNE)
/// or f32. Every e2m1 value times such a power of two is exact in f32.
template <Out To> bool vcvtScaleF4(Exec &x, const Inst &in) {
  U64 e = x.exec();
  unsigned byte = (in.srcs[0].mods & kOpSel0 ? 1u : 0u) |
                  (in.srcs[1].mods & kOpSel0 ? 2u : 0u);
  for (unsigned l = 0; l < 64; ++l)
    if (e >> l & 1) {
      U32 v = x.u32(in.srcs[0], l) >> (8 * byte);
      double scale = e8m0(uint8_t(x.u32(in.srcs[1], l) >> 23));
      setScaledPair<To>(x, in, l, float(decodeMini(v & 0xf, kE2M1) * scale),
                            float(decodeMini((v >> 4) & 0xf, kE2M1) * scale));
    }
  return true;
}

} // namespace

void mla::emu::addPackedOps(OpTable &t) {
  auto V = [&](const char *name, Handler h) { t[name] = {h, Class::VALU}; };
  V("v_pk_lshlrev_b16", vpk16<pkLshl>);
  V("v_pk_lshrrev_b16", vpk16<pkLshr>);
  V("v_pk_add_u16", vpk16<pkAdd>);
  V("v_pk_sub_u16", vpk16<pkSub>);
  // (Without clamp, which the lowerings' code does not set, the signed
  // forms wrap like the unsigned ones.)
  V("v_pk_add_i16", vpk16<pkAdd>);
  V("v_pk_sub_i16", vpk16<pkSub>);
  V("v_pk_mul_lo_u16", vpk16<pkMulLo>);
  V("v_pk_mad_u16", vpkMadU16);
  V("v_pk_min_u16", vpk16<pkMinU>);
  V("v_pk_max_u16", vpk16<pkMaxU>);
  V("v_pk_ashrrev_i16", vpk16<pkAshr>);
  V("v_pk_add_f32", vpkF32<0>);
  V("v_pk_mul_f32", vpkF32<1>);
  V("v_pk_fma_f32", vpkF32<2>);
  V("v_cvt_pk_fp8_f32", vcvtPkF8<false>);
  V("v_cvt_pk_bf8_f32", vcvtPkF8<true>);
  V("v_cvt_pk_f32_fp8", vcvtPkF32F8<false>);
  V("v_cvt_f32_fp8", vcvtF32F8<false>);
  V("v_cvt_f32_bf8", vcvtF32F8<true>);
  V("v_cvt_pk_f32_bf8", vcvtPkF32F8<true>);
  V("v_cvt_scalef32_pk_bf16_fp8", vcvtScaleF8<Out::Bf16, false>);
  V("v_cvt_scalef32_pk_bf16_bf8", vcvtScaleF8<Out::Bf16, true>);
  V("v_cvt_scalef32_pk_f16_fp8", vcvtScaleF8<Out::F16, false>);
  V("v_cvt_scalef32_pk_f16_bf8", vcvtScaleF8<Out::F16, true>);
  V("v_cvt_scalef32_pk_f32_fp8", vcvtScaleF8<Out::F32, false>);
  V("v_cvt_scalef32_pk_f32_bf8", vcvtScaleF8<Out::F32, true>);
  V("v_cvt_scalef32_pk_bf16_fp4", vcvtScaleF4<Out::Bf16>);
  V("v_cvt_scalef32_pk_f32_fp4", vcvtScaleF4<Out::F32>);
}
