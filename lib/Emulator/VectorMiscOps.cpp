//===- VectorMiscOps.cpp - VOPC compares, carries, lane moves, 64-bit -----===//
//
// From the CDNA3 / CDNA4 ISA guides' pseudo-code ("Vector ALU Operations"):
// the compares (VOPC / VOP3, writing VCC or an SGPR pair, 0 for lanes that
// are off), carry-in / carry-out adds, lane reads and writes, 64-bit shifts
// and multiply-adds, the f32 division helpers and AGPR moves. The
// elementwise 32-bit operations are in VectorOps.cpp.
//
//===----------------------------------------------------------------------===//
#include "VectorCommon.h"

#include "llvm/ADT/bit.h"

#include <algorithm>
#include <cmath>

using namespace mla::emu;
using namespace mla::emu::valu;

namespace {

//===-- compares ----------------------------------------------------------===//

template <typename T, bool Is64, bool Float>
T cmpSrc(Exec &x, const Opnd &o, unsigned l) {
  if constexpr (Float)
    return T(x.f32(o, l));
  else if constexpr (Is64)
    return T(x.u64(o, l));
  else
    return T(x.u32(o, l));
}

/// VOPC: e32 writes VCC, e64 its sdst; lanes off in EXEC get 0. `test`
/// says whether lane l's compare holds.
template <typename Test> bool writeCompare(Exec &x, const Inst &in, Test test) {
  U64 e = x.exec(), r = 0;
  for (unsigned l = 0; l < 64; ++l)
    if (e >> l & 1 && test(l))
      r |= U64(1) << l;
  if (in.defs.empty())
    x.w.setVcc(r);
  else
    x.setS64(in.defs[0], r);
  return true;
}
template <typename T, bool Is64, bool Float, bool (*P)(T, T)>
bool vcmp(Exec &x, const Inst &in) {
  return writeCompare(x, in, [&](unsigned l) {
    return P(cmpSrc<T, Is64, Float>(x, in.srcs[0], l),
             cmpSrc<T, Is64, Float>(x, in.srcs[1], l));
  });
}
/// 16-bit integer compares (VOPC e32 / e64 / SDWA): the sources' low 16
/// bits after SDWA's source selects.
template <typename T, bool (*P)(T, T)> bool vcmp16(Exec &x, const Inst &in) {
  return writeCompare(x, in, [&](unsigned l) {
    VArgs v;
    readSrcs(x, in, l, 2, false, v);
    return P(T(v.a & 0xffff), T(v.b & 0xffff));
  });
}
template <typename T> bool pEq(T a, T b) { return a == b; }
template <typename T> bool pNe(T a, T b) { return a != b; }
template <typename T> bool pLt(T a, T b) { return a < b; }
template <typename T> bool pLe(T a, T b) { return a <= b; }
template <typename T> bool pGt(T a, T b) { return a > b; }
template <typename T> bool pGe(T a, T b) { return a >= b; }
bool fO(float a, float b) { return !std::isnan(a) && !std::isnan(b); }
bool fU(float a, float b) { return std::isnan(a) || std::isnan(b); }
bool fNeq(float a, float b) { return !(a == b); }
bool fNlt(float a, float b) { return !(a < b); }
bool fNle(float a, float b) { return !(a <= b); }
bool fNgt(float a, float b) { return !(a > b); }
bool fNge(float a, float b) { return !(a >= b); }
bool fLg(float a, float b) { return a < b || a > b; }
bool fNlg(float a, float b) { return !(a < b || a > b); }

//===-- carries, lane moves, 64-bit -------------------------------------===//

/// v_add_co / v_sub_co / v_subrev_co / v_addc_co / v_subb_co / v_subbrev_co.
template <int Kind, bool CarryIn> bool vcarry(Exec &x, const Inst &in) {
  U64 e = x.exec(), cout = 0;
  bool e64 = in.defs.size() > 1;
  U64 cin = CarryIn ? (e64 ? x.s64(in.srcs[2]) : x.w.vcc()) : 0;
  for (unsigned l = 0; l < 64; ++l) {
    if (!(e >> l & 1))
      continue;
    U64 a = x.u32(in.srcs[0], l), b = x.u32(in.srcs[1], l), c = cin >> l & 1;
    if (Kind == 2)
      std::swap(a, b); // reversed subtract
    U64 r = Kind == 0 ? a + b + c : a - b - c;
    bool carry = Kind == 0 ? (r >> 32) != 0 : (b + c > a);
    if (carry)
      cout |= U64(1) << l;
    x.setV(in.defs[0], l, U32(r));
  }
  if (e64)
    x.setS64(in.defs[1], cout);
  else
    x.w.setVcc(cout);
  return true;
}

bool v_cndmask_b32(Exec &x, const Inst &in) {
  U64 e = x.exec();
  U64 cond = in.enc == Enc::E64 ? x.s64(in.srcs[2]) : x.w.vcc();
  U32 res[64];
  for (unsigned l = 0; l < 64; ++l)
    if (e >> l & 1) {
      VArgs v;
      readSrcs(x, in, l, 2, in.enc == Enc::E64, v);
      res[l] = (cond >> l & 1) ? v.b : v.a;
    }
  for (unsigned l = 0; l < 64; ++l)
    if (e >> l & 1)
      writeDst(x, in, l, res[l]);
  return true;
}

bool v_readlane_b32(Exec &x, const Inst &in) {
  x.setS32(in.defs[0], x.u32(in.srcs[0], x.s32(in.srcs[1]) & 63));
  return true;
}
bool v_readfirstlane_b32(Exec &x, const Inst &in) {
  U64 e = x.exec();
  unsigned l = e ? llvm::countr_zero(e) : 0;
  x.setS32(in.defs[0], x.u32(in.srcs[0], l));
  return true;
}
bool v_writelane_b32(Exec &x, const Inst &in) {
  x.setV(in.defs[0], x.s32(in.srcs[1]) & 63, x.s32(in.srcs[0]));
  return true;
}

bool v_mov_b64(Exec &x, const Inst &in) {
  U64 e = x.exec();
  for (unsigned l = 0; l < 64; ++l)
    if (e >> l & 1) {
      U64 v = x.u64(in.srcs[0], l);
      x.setV(in.defs[0], l, U32(v), 0);
      x.setV(in.defs[0], l, U32(v >> 32), 1);
    }
  return true;
}

template <U64 (*F)(U64, U64, U64)> bool vop64(Exec &x, const Inst &in) {
  U64 e = x.exec();
  U64 res[64];
  for (unsigned l = 0; l < 64; ++l)
    if (e >> l & 1)
      res[l] =
          F(x.u64(in.srcs[0], l), in.srcs.size() > 1 ? x.u64(in.srcs[1], l) : 0,
            in.srcs.size() > 2 ? x.u64(in.srcs[2], l) : 0);
  for (unsigned l = 0; l < 64; ++l)
    if (e >> l & 1) {
      x.setV(in.defs[0], l, U32(res[l]), 0);
      x.setV(in.defs[0], l, U32(res[l] >> 32), 1);
    }
  return true;
}
U64 lshlrev64(U64 a, U64 b, U64) { return b << (a & 63); }
U64 lshrrev64(U64 a, U64 b, U64) { return b >> (a & 63); }
U64 ashrrev64(U64 a, U64 b, U64) { return U64(int64_t(b) >> (a & 63)); }
U64 lshladd64(U64 a, U64 b, U64 c) { return (a << (b & 7)) + c; }
U64 add64(U64 a, U64 b, U64) { return a + b; }

/// v_mad_u64_u32 / v_mad_i64_i32: D64 = S0 * S1 + S2 (64-bit), sdst = carry.
template <bool Signed> bool vmad64(Exec &x, const Inst &in) {
  U64 e = x.exec(), carry = 0;
  for (unsigned l = 0; l < 64; ++l)
    if (e >> l & 1) {
      U32 a = x.u32(in.srcs[0], l), b = x.u32(in.srcs[1], l);
      U64 c = x.u64(in.srcs[2], l);
      unsigned __int128 p;
      if (Signed)
        p = (unsigned __int128)(__int128(int64_t(int32_t(a)) * int32_t(b)) +
                                __int128(int64_t(c)));
      else
        p = (unsigned __int128)(U64(a) * b) + c;
      if (Signed ? false : (p >> 64) != 0)
        carry |= U64(1) << l;
      x.setV(in.defs[0], l, U32(p), 0);
      x.setV(in.defs[0], l, U32(U64(p) >> 32), 1);
    }
  if (in.defs.size() > 1)
    x.setS64(in.defs[1], carry);
  return true;
}

/// v_fmamk_f32 (D = S0 * K + S1) and v_fmaak_f32 (D = S0 * S1 + K), K the
/// literal.
template <bool KMultiplies> bool vfmaK(Exec &x, const Inst &in) {
  U64 e = x.exec();
  float k = asF(U32(in.imms[0]));
  for (unsigned l = 0; l < 64; ++l)
    if (e >> l & 1) {
      float s0 = x.f32(in.srcs[0], l), s1 = x.f32(in.srcs[1], l);
      x.setVf(in.defs[0], l,
              KMultiplies ? std::fma(s0, k, s1) : std::fma(s0, s1, k));
    }
  return true;
}

/// v_bitop3_b32 / _b16 (gfx950): each bit of D is the 3-input function
/// whose truth table is the 8-bit `bitop3` immediate, indexed by the bits
/// of S0, S1, S2 as (S0 << 2) | (S1 << 1) | S2: S0 & S1 is 0xc0, S0 | S2
/// 0xfa (the operands' own tables are 0xf0, 0xcc, 0xaa; LLVM's selection
/// uses the same, see InstructionTest). _b16 works on 16-bit halves:
/// op_sel bits 0-2 pick each source's half, bit 3 the half of D written;
/// the other half of D keeps its value.
template <bool B16> bool vBitop3(Exec &x, const Inst &in) {
  U64 e = x.exec();
  // bitop3 is the first immediate. _b16's op_sel comes from the source
  // modifiers (LLVM's SISrcMods: OP_SEL_0 = 4 per source, DST_OP_SEL = 8
  // on source 0), where the disassembler keeps it.
  if (in.imms.empty() || in.srcs.size() < 3)
    return x.fail("v_bitop3 without its sources or bitop3 immediate");
  unsigned table = unsigned(in.imms[0]) & 0xff, opSel = 0;
  if (B16)
    opSel = (in.srcs[0].mods >> 2 & 1) | (in.srcs[1].mods >> 2 & 1) << 1 |
            (in.srcs[2].mods >> 2 & 1) << 2 | (in.srcs[0].mods >> 3 & 1) << 3;
  for (unsigned l = 0; l < 64; ++l) {
    if (!(e >> l & 1))
      continue;
    U32 s[3];
    for (unsigned i = 0; i < 3; ++i) {
      s[i] = x.u32(in.srcs[i], l);
      if (B16)
        s[i] = opSel >> i & 1 ? s[i] >> 16 : s[i];
    }
    U32 d = 0;
    for (unsigned i = 0; i < 8; ++i)
      if (table >> i & 1)
        d |= (i & 4 ? s[0] : ~s[0]) & (i & 2 ? s[1] : ~s[1]) &
             (i & 1 ? s[2] : ~s[2]);
    if (B16) {
      unsigned shift = opSel >> 3 & 1 ? 16 : 0;
      U32 old = x.getV(in.defs[0], l);
      d = (old & ~(0xffffu << shift)) | (d & 0xffff) << shift;
    }
    x.setV(in.defs[0], l, d);
  }
  return true;
}

//===-- division helpers (ISA pseudo-code, f32) --------------------------===//

int expOf(float f) { return (asU(f) >> 23) & 0xff; }
bool isDenorm(float f) { return f != 0 && expOf(f) == 0; }

/// v_div_scale_f32 D, VCC = S0, S1 (denominator), S2 (numerator).
bool v_div_scale_f32(Exec &x, const Inst &in) {
  U64 e = x.exec(), vcc = 0;
  for (unsigned l = 0; l < 64; ++l) {
    if (!(e >> l & 1))
      continue;
    float s0 = x.f32(in.srcs[0], l), s1 = x.f32(in.srcs[1], l),
          s2 = x.f32(in.srcs[2], l);
    float d = s0;
    bool flag = false;
    if (s2 == 0 || s1 == 0) {
      d = NAN;
    } else if (expOf(s2) - expOf(s1) >= 96) {
      flag = true;
      if (s0 == s1)
        d = std::ldexp(s0, 64);
    } else if (isDenorm(s1)) {
      d = std::ldexp(s0, 64);
    } else if (isDenorm(1.0f / s1) && isDenorm(s2 / s1)) {
      flag = true;
      if (s0 == s1)
        d = std::ldexp(s0, 64);
    } else if (isDenorm(1.0f / s1)) {
      d = std::ldexp(s0, -64);
    } else if (isDenorm(s2 / s1)) {
      flag = true;
      if (s0 == s2)
        d = std::ldexp(s0, 64);
    } else if (expOf(s2) <= 23) {
      d = std::ldexp(s0, 64);
    }
    if (flag)
      vcc |= U64(1) << l;
    x.setVf(in.defs[0], l, d);
  }
  x.setS64(in.defs[1], vcc);
  return true;
}

bool v_div_fmas_f32(Exec &x, const Inst &in) {
  U64 e = x.exec(), vcc = x.w.vcc();
  for (unsigned l = 0; l < 64; ++l)
    if (e >> l & 1) {
      float s0 = x.f32(in.srcs[0], l), s1 = x.f32(in.srcs[1], l),
            s2 = x.f32(in.srcs[2], l);
      float r = std::fma(s0, s1, s2);
      if (vcc >> l & 1)
        r = expOf(s2) > 127 ? std::ldexp(r, 64) : std::ldexp(r, -64);
      x.setVf(in.defs[0], l, r);
    }
  return true;
}

/// v_div_fixup_f32 D = S0 (quotient), S1 (denominator), S2 (numerator),
/// the ISA's order of cases: NaN inputs, 0/0 and inf/inf, x/0 and inf/x,
/// 0/x and x/inf, under- and overflow by exponents, else |S0| with the
/// quotient's sign. (v_div_scale_f32 hands a NaN quotient on for a zero
/// numerator; this is where 0/x becomes 0.)
bool v_div_fixup_f32(Exec &x, const Inst &in) {
  U64 e = x.exec();
  for (unsigned l = 0; l < 64; ++l) {
    if (!(e >> l & 1))
      continue;
    float q = x.f32(in.srcs[0], l), den = x.f32(in.srcs[1], l),
          num = x.f32(in.srcs[2], l);
    bool neg = std::signbit(den) != std::signbit(num);
    float inf = neg ? -INFINITY : INFINITY, zero = neg ? -0.0f : 0.0f;
    float r;
    if (std::isnan(num))
      r = asF(asU(num) | 0x00400000u);
    else if (std::isnan(den))
      r = asF(asU(den) | 0x00400000u);
    else if ((den == 0 && num == 0) || (std::isinf(den) && std::isinf(num)))
      r = asF(0xffc00000u);
    else if (den == 0 || std::isinf(num))
      r = inf;
    else if (std::isinf(den) || num == 0)
      r = zero;
    else if (expOf(num) - expOf(den) < -150)
      r = zero; // underflow
    else if (expOf(den) == 255)
      r = inf; // overflow
    else
      r = neg ? -std::fabs(q) : std::fabs(q);
    x.setVf(in.defs[0], l, r);
  }
  return true;
}

bool v_nop(Exec &, const Inst &) { return true; }

bool v_accvgpr_move(Exec &x, const Inst &in) {
  U64 e = x.exec();
  for (unsigned l = 0; l < 64; ++l)
    if (e >> l & 1)
      x.setV(in.defs[0], l, x.u32(in.srcs[0], l));
  return true;
}

} // namespace

void mla::emu::addVectorMiscOps(OpTable &t) {
  auto V = [&](const char *name, Handler h) { t[name] = {h, Class::VALU}; };
  V("v_add_co_u32", vcarry<0, false>);
  V("v_sub_co_u32", vcarry<1, false>);
  V("v_subrev_co_u32", vcarry<2, false>);
  V("v_addc_co_u32", vcarry<0, true>);
  V("v_subb_co_u32", vcarry<1, true>);
  V("v_subbrev_co_u32", vcarry<2, true>);
  V("v_cndmask_b32", v_cndmask_b32);
  V("v_readlane_b32", v_readlane_b32);
  V("v_readfirstlane_b32", v_readfirstlane_b32);
  V("v_writelane_b32", v_writelane_b32);
  V("v_mov_b64", v_mov_b64);
  V("v_lshlrev_b64", vop64<lshlrev64>);
  V("v_lshrrev_b64", vop64<lshrrev64>);
  V("v_ashrrev_i64", vop64<ashrrev64>);
  V("v_lshl_add_u64", vop64<lshladd64>);
  V("v_add_u64", vop64<add64>);
  V("v_mad_u64_u32", vmad64<false>);
  V("v_mad_i64_i32", vmad64<true>);
  V("v_bitop3_b32", vBitop3<false>);
  V("v_bitop3_b16", vBitop3<true>);
  V("v_fmamk_f32", vfmaK<true>);
  V("v_fmaak_f32", vfmaK<false>);
  V("v_div_scale_f32", v_div_scale_f32);
  V("v_div_fmas_f32", v_div_fmas_f32);
  V("v_div_fixup_f32", v_div_fixup_f32);
  V("v_nop", v_nop);
  V("v_accvgpr_write_b32", v_accvgpr_move);
  V("v_accvgpr_read_b32", v_accvgpr_move);
  V("v_accvgpr_mov_b32", v_accvgpr_move);

  // compares
#define CMPS(SUF, T, IS64, FLT)                                                \
  V("v_cmp_eq_" SUF, vcmp<T, IS64, FLT, pEq<T>>);                              \
  V("v_cmp_ne_" SUF, vcmp<T, IS64, FLT, pNe<T>>);                              \
  V("v_cmp_lt_" SUF, vcmp<T, IS64, FLT, pLt<T>>);                              \
  V("v_cmp_le_" SUF, vcmp<T, IS64, FLT, pLe<T>>);                              \
  V("v_cmp_gt_" SUF, vcmp<T, IS64, FLT, pGt<T>>);                              \
  V("v_cmp_ge_" SUF, vcmp<T, IS64, FLT, pGe<T>>)
  CMPS("u32", U32, false, false);
  CMPS("i32", int32_t, false, false);
  CMPS("u64", U64, true, false);
  CMPS("i64", int64_t, true, false);
#undef CMPS
#define CMPS16(SUF, T)                                                         \
  V("v_cmp_eq_" SUF, vcmp16<T, pEq<T>>);                                       \
  V("v_cmp_ne_" SUF, vcmp16<T, pNe<T>>);                                       \
  V("v_cmp_lt_" SUF, vcmp16<T, pLt<T>>);                                       \
  V("v_cmp_le_" SUF, vcmp16<T, pLe<T>>);                                       \
  V("v_cmp_gt_" SUF, vcmp16<T, pGt<T>>);                                       \
  V("v_cmp_ge_" SUF, vcmp16<T, pGe<T>>)
  CMPS16("u16", uint16_t);
  CMPS16("i16", int16_t);
#undef CMPS16
  V("v_cmp_eq_f32", vcmp<float, false, true, pEq<float>>);
  V("v_cmp_lt_f32", vcmp<float, false, true, pLt<float>>);
  V("v_cmp_le_f32", vcmp<float, false, true, pLe<float>>);
  V("v_cmp_gt_f32", vcmp<float, false, true, pGt<float>>);
  V("v_cmp_ge_f32", vcmp<float, false, true, pGe<float>>);
  V("v_cmp_lg_f32", vcmp<float, false, true, fLg>);
  V("v_cmp_o_f32", vcmp<float, false, true, fO>);
  V("v_cmp_u_f32", vcmp<float, false, true, fU>);
  V("v_cmp_neq_f32", vcmp<float, false, true, fNeq>);
  V("v_cmp_nlt_f32", vcmp<float, false, true, fNlt>);
  V("v_cmp_nle_f32", vcmp<float, false, true, fNle>);
  V("v_cmp_ngt_f32", vcmp<float, false, true, fNgt>);
  V("v_cmp_nge_f32", vcmp<float, false, true, fNge>);
  V("v_cmp_nlg_f32", vcmp<float, false, true, fNlg>);
}
