//===- VectorOps.cpp - VOP1 / VOP2 / VOP3 / VOPC / VOP3P semantics --------===//
//
// From the CDNA3 / CDNA4 ISA guides' pseudo-code ("Vector ALU Operations").
// Every lane enabled in EXEC computes; VOPC and carry-outs write 0 for
// lanes that are off. SDWA sources and destinations are selected per the
// sel fields; DPP moves the first source across lanes (row masks, bound
// control). Float results of VOP3 honour omod and clamp.
//
//===----------------------------------------------------------------------===//
#include "VectorCommon.h"

#include "llvm/ADT/bit.h"

#include <algorithm>
#include <cmath>

using namespace mla::emu;
using namespace mla::emu::valu;

namespace {

//===-- source selection (SDWA, DPP) and destination writes ---------------===//

/// SDWA select of a 32-bit value: 0-3 bytes, 4-5 words, 6 dword.
U32 sdwaSel(U32 v, int64_t sel, bool sext) {
  switch (sel) {
  case 0:
  case 1:
  case 2:
  case 3: {
    U32 b = (v >> (8 * sel)) & 0xff;
    return sext ? U32(int32_t(int8_t(b))) : b;
  }
  case 4:
  case 5: {
    U32 h = (v >> (16 * (sel - 4))) & 0xffff;
    return sext ? U32(int32_t(int16_t(h))) : h;
  }
  default:
    return v;
  }
}

/// The source lane DPP reads for `lane`, or -1 when there is none.
int dppLane(int64_t ctrl, unsigned lane) {
  unsigned row = lane & ~15u, inRow = lane & 15;
  if (ctrl <= 0xff)
    return (lane & ~3u) | ((ctrl >> (2 * (lane & 3))) & 3);
  if (ctrl >= 0x101 && ctrl <= 0x10f) { // row_shl
    int s = inRow + (ctrl & 15);
    return s < 16 ? int(row + s) : -1;
  }
  if (ctrl >= 0x111 && ctrl <= 0x11f) { // row_shr
    int s = int(inRow) - int(ctrl & 15);
    return s >= 0 ? int(row + s) : -1;
  }
  if (ctrl >= 0x121 && ctrl <= 0x12f) // row_ror
    return row + ((inRow + 16 - (ctrl & 15)) & 15);
  switch (ctrl) {
  case 0x130:
    return lane + 1 < 64 ? int(lane + 1) : -1; // wave_shl1
  case 0x134:
    return (lane + 1) & 63; // wave_rol1
  case 0x138:
    return lane >= 1 ? int(lane - 1) : -1; // wave_shr1
  case 0x13c:
    return (lane + 63) & 63; // wave_ror1
  case 0x140:
    return row + (15 - inRow); // row_mirror
  case 0x141:
    return row + ((inRow & 8) | (7 - (inRow & 7))); // row_half_mirror
  case 0x142:
    return inRow == 15 || row == 0 ? -2 : int(row - 1) | 15; // row_bcast15
  case 0x143:
    return lane < 32 ? -2 : 31; // row_bcast31
  }
  return -1;
}

/// Applies float abs / neg modifiers to the bits of an f32.
U32 fmods(U32 v, uint8_t mods) {
  if (mods & kAbs)
    v &= 0x7fffffffu;
  if (mods & kNeg)
    v ^= 0x80000000u;
  return v;
}

/// Where the real sources start: DPP puts the old destination first.
unsigned firstSrc(const Inst &in) { return in.enc == Enc::DPP ? 1 : 0; }

U32 applyOmodClamp(const Inst &in, U32 r) {
  if (in.enc != Enc::E64 && in.enc != Enc::Plain)
    return r;
  if (in.imms.size() < 2)
    return r;
  float f = asF(r);
  switch (in.imms[1]) {
  case 1:
    f *= 2;
    break;
  case 2:
    f *= 4;
    break;
  case 3:
    f *= 0.5f;
    break;
  }
  if (in.imms[0])
    f = std::isnan(f) ? 0.0f : std::min(1.0f, std::max(0.0f, f));
  return asU(f);
}

} // namespace

namespace mla::emu::valu {

/// Reads the sources of `lane` with SDWA / modifiers applied. Returns false
/// when DPP has no source lane and bound_ctrl is off (lane not written).
bool readSrcs(Exec &x, const Inst &in, unsigned lane, unsigned n, bool isFloat,
              VArgs &v) {
  unsigned f0 = firstSrc(in);
  U32 *out[3] = {&v.a, &v.b, &v.c};
  for (unsigned i = 0; i < n && f0 + i < in.srcs.size(); ++i) {
    const Opnd &o = in.srcs[f0 + i];
    unsigned l = lane;
    if (in.enc == Enc::DPP && i == 0) {
      int s = dppLane(in.imms[0], lane);
      bool boundCtrl = in.imms.size() > 3 && in.imms[3];
      if (s < 0 || !(x.exec() >> s & 1)) {
        if (!boundCtrl)
          return false;
        *out[i] = 0;
        continue;
      }
      l = unsigned(s);
    }
    U32 raw = x.u32(o, l);
    if (in.enc == Enc::SDWA) {
      size_t k = in.imms.size();
      int64_t sel = n >= 2 ? in.imms[k - 2 + i] : in.imms[k - 1];
      raw = sdwaSel(raw, sel, o.mods & 16);
    }
    *out[i] = isFloat ? fmods(raw, o.mods) : raw;
  }
  return true;
}

/// Writes the 32-bit result of `lane` through SDWA's dst_sel / dst_unused.
void writeDst(Exec &x, const Inst &in, unsigned lane, U32 r) {
  const Opnd &d = in.defs[0];
  if (in.enc == Enc::SDWA && in.imms.size() >= 4) {
    size_t k = in.imms.size();
    bool vop2 = in.srcs.size() - firstSrc(in) >= 2;
    int64_t sel = vop2 ? in.imms[k - 4] : in.imms[k - 3];
    int64_t unused = vop2 ? in.imms[k - 3] : in.imms[k - 2];
    if (sel != 6) {
      U32 old = x.getV(d, lane);
      unsigned shift = sel <= 3 ? 8 * sel : 16 * (sel - 4);
      U32 mask = (sel <= 3 ? 0xffu : 0xffffu) << shift;
      U32 v = (r << shift) & mask;
      if (unused == 2) // preserve
        v |= old & ~mask;
      else if (unused == 1 &&
               (v >> (shift + (sel <= 3 ? 7 : 15)) & 1)) // sign-extend
        v |= ~(mask | ((1u << shift) - 1));
      r = v;
    }
  }
  x.setV(d, lane, r);
}

} // namespace mla::emu::valu

namespace {

using Fn3 = U32 (*)(U32, U32, U32);

/// A 32-bit VALU op with up to three sources.
template <Fn3 F, unsigned N, bool Float> bool vop(Exec &x, const Inst &in) {
  U64 e = x.exec();
  if (in.enc == Enc::DPP) {
    U64 rowMask = in.imms.size() > 1 ? in.imms[1] : 15,
        bankMask = in.imms.size() > 2 ? in.imms[2] : 15;
    for (unsigned l = 0; l < 64; ++l)
      if (!(rowMask >> (l / 16) & 1) || !(bankMask >> ((l & 15) / 4) & 1))
        e &= ~(U64(1) << l);
  }
  U32 results[64];
  U64 written = 0;
  for (unsigned l = 0; l < 64; ++l) {
    if (!(e >> l & 1))
      continue;
    VArgs v;
    if (!readSrcs(x, in, l, N, Float, v))
      continue;
    U32 r = F(v.a, v.b, v.c);
    results[l] = Float ? applyOmodClamp(in, r) : r;
    written |= U64(1) << l;
  }
  for (unsigned l = 0; l < 64; ++l)
    if (written >> l & 1)
      writeDst(x, in, l, results[l]);
  return true;
}

float F(U32 b) { return asF(b); }
U32 B(float f) { return asU(f); }

#define OP(NAME, ...)                                                          \
  U32 NAME(U32 a, U32 b, U32 c) {                                              \
    (void)a, (void)b, (void)c;                                                 \
    __VA_ARGS__                                                                \
  }

// float
OP(f_add, return B(F(a) + F(b));)
OP(f_sub, return B(F(a) - F(b));)
OP(f_subrev, return B(F(b) - F(a));)
OP(f_mul, return B(F(a) * F(b));)
OP(f_max, return B(std::fmax(F(a), F(b)));)
OP(f_min, return B(std::fmin(F(a), F(b)));)
OP(f_fma, return B(std::fma(F(a), F(b), F(c)));)
OP(f_fmac, return B(std::fma(F(a), F(b), F(c)));)
OP(f_max3, return B(std::fmax(std::fmax(F(a), F(b)), F(c)));)
OP(f_min3, return B(std::fmin(std::fmin(F(a), F(b)), F(c)));)
float ieeeMax(float p, float q) {
  if (std::isnan(p) || std::isnan(q))
    return std::numeric_limits<float>::quiet_NaN();
  if (p == 0 && q == 0)
    return std::signbit(p) ? q : p;
  return p > q ? p : q;
}
float ieeeMin(float p, float q) {
  if (std::isnan(p) || std::isnan(q))
    return std::numeric_limits<float>::quiet_NaN();
  if (p == 0 && q == 0)
    return std::signbit(p) ? p : q;
  return p < q ? p : q;
}
OP(f_maximum3, return B(ieeeMax(ieeeMax(F(a), F(b)), F(c)));)
OP(f_minimum3, return B(ieeeMin(ieeeMin(F(a), F(b)), F(c)));)
OP(f_med3, {
  float p = F(a), q = F(b), r = F(c);
  return B(std::fmax(std::fmin(p, q), std::fmin(std::fmax(p, q), r)));
})
OP(f_exp, return B(std::exp2(F(a)));)
OP(f_log, return B(std::log2(F(a)));)
OP(f_rcp, return B(1.0f / F(a));)
OP(f_rsq, return B(1.0f / std::sqrt(F(a)));)
OP(f_sqrt, return B(std::sqrt(F(a)));)
OP(f_trunc, return B(std::trunc(F(a)));)
OP(f_floor, return B(std::floor(F(a)));)
OP(f_ceil, return B(std::ceil(F(a)));)
OP(f_rndne, return B(std::nearbyint(F(a)));)
OP(f_fract, {
  float f = F(a);
  return B(std::isinf(f) ? NAN : std::fmin(f - std::floor(f), 0x1.fffffep-1f));
})
OP(f_ldexp, return B(std::ldexp(F(a), int32_t(b)));)
OP(f_cvt_f32_u32, return B(float(a));)
OP(f_cvt_f32_i32, return B(float(int32_t(a)));)
OP(f_cvt_u32_f32, {
  float f = F(a);
  if (std::isnan(f) || f <= 0)
    return 0u;
  if (f >= 4294967296.0f)
    return 0xffffffffu;
  return U32(f);
})
OP(f_cvt_i32_f32, {
  float f = F(a);
  if (std::isnan(f))
    return 0u;
  if (f <= -2147483648.0f)
    return 0x80000000u;
  if (f >= 2147483648.0f)
    return 0x7fffffffu;
  return U32(int32_t(f));
})
OP(f_cvt_f32_bf16, return B(bf16ToF32(uint16_t(a)));)
OP(f_cvt_f32_f16, return B(f16ToF32(uint16_t(a)));)
OP(f_cvt_pk_bf16_f32, return U32(f32ToBf16(F(a))) | U32(f32ToBf16(F(b))) << 16;)

// integer
OP(i_mov, return a;)
OP(i_add, return a + b;)
OP(i_sub, return a - b;)
OP(i_subrev, return b - a;)
OP(i_and, return a & b;)
OP(i_or, return a | b;)
OP(i_xor, return a ^ b;)
OP(i_not, return ~a;)
OP(i_lshlrev, return b << (a & 31);)
OP(i_lshrrev, return b >> (a & 31);)
OP(i_ashrrev, return U32(int32_t(b) >> (a & 31));)
OP(i_lshlrev16, return (b << (a & 15)) & 0xffff;)
OP(i_lshrrev16, return ((b & 0xffff) >> (a & 15));)
OP(i_add16, return (a + b) & 0xffff;)
OP(i_sub16, return (a - b) & 0xffff;)
OP(i_mul_lo16, return (a * b) & 0xffff;)
OP(i_mad16, return (a * b + c) & 0xffff;)
OP(i_max3_u16, return std::max({a & 0xffff, b & 0xffff, c & 0xffff});)
OP(i_min3_u16, return std::min({a & 0xffff, b & 0xffff, c & 0xffff});)
OP(i_max3_i16,
   return U32(uint16_t(std::max({int16_t(a), int16_t(b), int16_t(c)})));)
OP(i_min3_i16,
   return U32(uint16_t(std::min({int16_t(a), int16_t(b), int16_t(c)})));)
OP(i_add3, return a + b + c;)
OP(i_and_or, return (a & b) | c;)
OP(i_or3, return a | b | c;)
OP(i_xad, return (a ^ b) + c;)
OP(i_lshl_or, return (a << (b & 31)) | c;)
OP(i_lshl_add, return (a << (b & 31)) + c;)
OP(i_add_lshl, return (a + b) << (c & 31);)
OP(i_bfe_u32, {
  unsigned off = b & 31, w = c & 31;
  return w ? (a >> off) & ((1u << w) - 1) : 0u;
})
OP(i_bfe_i32, {
  unsigned off = b & 31, w = c & 31;
  return w ? U32(int32_t((a >> off) << (32 - w)) >> (32 - w)) : 0u;
})
OP(i_bfi, return (a & b) | (~a & c);)
OP(i_alignbit, return U32(((U64(a) << 32) | b) >> (c & 31));)
OP(i_alignbyte, return U32(((U64(a) << 32) | b) >> (8 * (c & 3)));)
OP(i_mul_lo, return a * b;)
OP(i_mul_hi_u32, return U32((U64(a) * b) >> 32);)
OP(i_mul_hi_i32, return U32((int64_t(int32_t(a)) * int32_t(b)) >> 32);)
OP(i_mul_u24, return (a & 0xffffff) * (b & 0xffffff);)
OP(i_mul_hi_u24, return U32((U64(a & 0xffffff) * (b & 0xffffff)) >> 32);)
OP(i_mad_u24, return (a & 0xffffff) * (b & 0xffffff) + c;)
// Signed 24-bit operands (bits 23:0 sign-extended), low 32 bits kept.
OP(i_mad_i24,
   return U32(int64_t(int32_t(a << 8) >> 8) * int64_t(int32_t(b << 8) >> 8) +
              int64_t(int32_t(c)));)
OP(i_min_u32, return std::min(a, b);)
OP(i_max_u32, return std::max(a, b);)
OP(i_min_i32, return U32(std::min(int32_t(a), int32_t(b)));)
OP(i_max_i32, return U32(std::max(int32_t(a), int32_t(b)));)
// The median of three: max(min(a, b), min(max(a, b), c)).
OP(i_med3_i32, {
  int32_t x = int32_t(a), y = int32_t(b), z = int32_t(c);
  return U32(std::max(std::min(x, y), std::min(std::max(x, y), z)));
})
OP(i_med3_u32, return std::max(std::min(a, b), std::min(std::max(a, b), c));)
OP(i_max3_i32, return U32(std::max({int32_t(a), int32_t(b), int32_t(c)}));)
OP(i_min3_i32, return U32(std::min({int32_t(a), int32_t(b), int32_t(c)}));)
OP(i_max3_u32, return std::max({a, b, c});)
OP(i_min3_u32, return std::min({a, b, c});)
OP(i_bcnt, return U32(llvm::popcount(a)) + b;)
OP(i_bfrev, return llvm::reverseBits(a);)
/// v_perm_b32: byte i of D = BYTE_PERMUTE({S0, S1}, S2.byte[i]).
OP(i_perm, {
  U64 data = (U64(a) << 32) | b;
  U32 r = 0;
  for (int i = 0; i < 4; ++i) {
    U32 sel = (c >> (8 * i)) & 0xff, byte;
    if (sel >= 13)
      byte = 0xff;
    else if (sel == 12)
      byte = 0;
    else if (sel >= 8)
      byte = (data >> (16 * (sel - 8) + 15) & 1) ? 0xff : 0;
    else
      byte = (data >> (8 * sel)) & 0xff;
    r |= byte << (8 * i);
  }
  return r;
})

} // namespace

void mla::emu::addVectorOps(OpTable &t) {
  auto V = [&](const char *name, Handler h) { t[name] = {h, Class::VALU}; };
#define F1(NAME, FN) V(NAME, vop<FN, 1, true>)
#define F2(NAME, FN) V(NAME, vop<FN, 2, true>)
#define F3(NAME, FN) V(NAME, vop<FN, 3, true>)
#define I1(NAME, FN) V(NAME, vop<FN, 1, false>)
#define I2(NAME, FN) V(NAME, vop<FN, 2, false>)
#define I3(NAME, FN) V(NAME, vop<FN, 3, false>)
  F2("v_add_f32", f_add);
  F2("v_sub_f32", f_sub);
  F2("v_subrev_f32", f_subrev);
  F2("v_mul_f32", f_mul);
  F2("v_max_f32", f_max);
  F2("v_min_f32", f_min);
  F3("v_fma_f32", f_fma);
  F3("v_fmac_f32", f_fmac);
  F3("v_max3_f32", f_max3);
  F3("v_min3_f32", f_min3);
  F3("v_maximum3_f32", f_maximum3);
  F3("v_minimum3_f32", f_minimum3);
  F3("v_med3_f32", f_med3);
  F1("v_exp_f32", f_exp);
  F1("v_log_f32", f_log);
  F1("v_rcp_f32", f_rcp);
  F1("v_rcp_iflag_f32", f_rcp);
  F1("v_rsq_f32", f_rsq);
  F1("v_sqrt_f32", f_sqrt);
  F1("v_trunc_f32", f_trunc);
  F1("v_floor_f32", f_floor);
  F1("v_ceil_f32", f_ceil);
  F1("v_rndne_f32", f_rndne);
  F1("v_fract_f32", f_fract);
  I2("v_ldexp_f32", f_ldexp);
  I1("v_cvt_f32_u32", f_cvt_f32_u32);
  I1("v_cvt_f32_i32", f_cvt_f32_i32);
  F1("v_cvt_u32_f32", f_cvt_u32_f32);
  F1("v_cvt_i32_f32", f_cvt_i32_f32);
  I1("v_cvt_f32_bf16", f_cvt_f32_bf16);
  I1("v_cvt_f32_f16", f_cvt_f32_f16);
  F2("v_cvt_pk_bf16_f32", f_cvt_pk_bf16_f32);
  I1("v_mov_b32", i_mov);
  I1("v_not_b32", i_not);
  I1("v_bfrev_b32", i_bfrev);
  I2("v_add_u32", i_add);
  I2("v_sub_u32", i_sub);
  I2("v_subrev_u32", i_subrev);
  I2("v_and_b32", i_and);
  I2("v_or_b32", i_or);
  I2("v_xor_b32", i_xor);
  I2("v_lshlrev_b32", i_lshlrev);
  I2("v_lshrrev_b32", i_lshrrev);
  I2("v_ashrrev_i32", i_ashrrev);
  I2("v_lshlrev_b16", i_lshlrev16);
  I2("v_lshrrev_b16", i_lshrrev16);
  I2("v_add_u16", i_add16);
  I2("v_sub_u16", i_sub16);
  I2("v_mul_lo_u16", i_mul_lo16);
  I2("v_mul_lo_u32", i_mul_lo);
  I2("v_mul_hi_u32", i_mul_hi_u32);
  I2("v_mul_hi_i32", i_mul_hi_i32);
  I2("v_mul_u32_u24", i_mul_u24);
  I2("v_mul_hi_u32_u24", i_mul_hi_u24);
  I2("v_min_u32", i_min_u32);
  I2("v_max_u32", i_max_u32);
  I2("v_min_i32", i_min_i32);
  I2("v_max_i32", i_max_i32);
  I2("v_bcnt_u32_b32", i_bcnt);
  I3("v_add3_u32", i_add3);
  I3("v_mad_legacy_u16", i_mad16);
  I3("v_mad_u16", i_mad16);
  I3("v_max3_u16", i_max3_u16);
  I3("v_med3_i32", i_med3_i32);
  I3("v_med3_u32", i_med3_u32);
  I3("v_max3_i32", i_max3_i32);
  I3("v_min3_i32", i_min3_i32);
  I3("v_max3_u32", i_max3_u32);
  I3("v_min3_u32", i_min3_u32);
  I3("v_min3_u16", i_min3_u16);
  I3("v_max3_i16", i_max3_i16);
  I3("v_min3_i16", i_min3_i16);
  I3("v_and_or_b32", i_and_or);
  I3("v_or3_b32", i_or3);
  I3("v_xad_u32", i_xad);
  I3("v_lshl_or_b32", i_lshl_or);
  I3("v_lshl_add_u32", i_lshl_add);
  I3("v_add_lshl_u32", i_add_lshl);
  I3("v_bfe_u32", i_bfe_u32);
  I3("v_bfe_i32", i_bfe_i32);
  I3("v_bfi_b32", i_bfi);
  I3("v_alignbit_b32", i_alignbit);
  I3("v_alignbyte_b32", i_alignbyte);
  I3("v_mad_u32_u24", i_mad_u24);
  I3("v_mad_i32_i24", i_mad_i24);
  I3("v_perm_b32", i_perm);
#undef F1
#undef F2
#undef F3
#undef I1
#undef I2
#undef I3
}
