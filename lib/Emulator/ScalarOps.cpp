//===- ScalarOps.cpp - SOP1 / SOP2 / SOPK / SOPC / SOPP semantics ---------===//
//
// From the CDNA3 / CDNA4 ISA guides' pseudo-code ("Scalar ALU Operations",
// "Program Flow Control"). Operand order is the MC operand list's: sdst,
// ssrc0, ssrc1 (SOPK: sdst, [sdst as source], simm16).
//
//===----------------------------------------------------------------------===//
#include "Machine.h"

#include "llvm/ADT/bit.h"

using namespace mla::emu;

namespace {

using U32 = uint32_t;
using U64 = uint64_t;

template <typename F> bool sop2_32(Exec &x, const Inst &in, F f) {
  U32 a = x.s32(in.srcs[0]), b = x.s32(in.srcs[1]);
  x.setS32(in.defs[0], f(x, a, b));
  return true;
}
template <typename F> bool sop2_64(Exec &x, const Inst &in, F f) {
  U64 a = x.s64(in.srcs[0]), b = x.s64(in.srcs[1]);
  x.setS64(in.defs[0], f(x, a, b));
  return true;
}

#define SOP2_32(NAME, ...)                                                     \
  bool NAME(Exec &x, const Inst &in) {                                         \
    return sop2_32(x, in, [](Exec &x, U32 a, U32 b) -> U32 { __VA_ARGS__ });   \
  }
#define SOP2_64(NAME, ...)                                                     \
  bool NAME(Exec &x, const Inst &in) {                                         \
    return sop2_64(x, in, [](Exec &x, U64 a, U64 b) -> U64 { __VA_ARGS__ });   \
  }

SOP2_32(s_add_u32, {
  U64 r = U64(a) + b;
  x.w.scc = r >> 32;
  return U32(r);
});
SOP2_32(s_addc_u32, {
  U64 r = U64(a) + b + x.w.scc;
  x.w.scc = r >> 32;
  return U32(r);
});
SOP2_32(s_sub_u32, {
  x.w.scc = b > a;
  return a - b;
});
SOP2_32(s_subb_u32, {
  U64 r = U64(a) - b - x.w.scc;
  x.w.scc = U64(b) + x.w.scc > a;
  return U32(r);
});
SOP2_32(s_add_i32, {
  int32_t r = int32_t(a + b);
  x.w.scc =
      (int32_t(a) >= 0) == (int32_t(b) >= 0) && (r >= 0) != (int32_t(a) >= 0);
  return U32(r);
});
SOP2_32(s_sub_i32, {
  int32_t r = int32_t(a - b);
  x.w.scc =
      (int32_t(a) >= 0) != (int32_t(b) >= 0) && (r >= 0) != (int32_t(a) >= 0);
  return U32(r);
});
SOP2_32(s_mul_i32, {
  (void)x;
  return a * b; // the low 32 bits, the same for signed operands (no C++ UB)
});
SOP2_32(s_mul_hi_u32, {
  (void)x;
  return U32((U64(a) * b) >> 32);
});
SOP2_32(s_mul_hi_i32, {
  (void)x;
  return U32((int64_t(int32_t(a)) * int32_t(b)) >> 32);
});
SOP2_32(s_and_b32, {
  U32 r = a & b;
  x.w.scc = r;
  return r;
});
SOP2_32(s_or_b32, {
  U32 r = a | b;
  x.w.scc = r;
  return r;
});
SOP2_32(s_xor_b32, {
  U32 r = a ^ b;
  x.w.scc = r;
  return r;
});
SOP2_32(s_andn2_b32, {
  U32 r = a & ~b;
  x.w.scc = r;
  return r;
});
SOP2_32(s_orn2_b32, {
  U32 r = a | ~b;
  x.w.scc = r;
  return r;
});
SOP2_32(s_nand_b32, {
  U32 r = ~(a & b);
  x.w.scc = r;
  return r;
});
SOP2_32(s_lshl_b32, {
  U32 r = a << (b & 31);
  x.w.scc = r;
  return r;
});
SOP2_32(s_lshr_b32, {
  U32 r = a >> (b & 31);
  x.w.scc = r;
  return r;
});
SOP2_32(s_ashr_i32, {
  U32 r = U32(int32_t(a) >> (b & 31));
  x.w.scc = r;
  return r;
});
SOP2_32(s_min_i32, {
  x.w.scc = int32_t(a) < int32_t(b);
  return x.w.scc ? a : b;
});
SOP2_32(s_min_u32, {
  x.w.scc = a < b;
  return x.w.scc ? a : b;
});
SOP2_32(s_max_i32, {
  x.w.scc = int32_t(a) > int32_t(b);
  return x.w.scc ? a : b;
});
SOP2_32(s_max_u32, {
  x.w.scc = a > b;
  return x.w.scc ? a : b;
});
SOP2_32(s_cselect_b32, { return x.w.scc ? a : b; });
SOP2_32(s_bfe_u32, {
  unsigned off = b & 31, width = (b >> 16) & 0x7f;
  U32 r = width == 0    ? 0
          : width >= 32 ? a >> off
                        : (a >> off) & ((1u << width) - 1);
  x.w.scc = r;
  return r;
});
SOP2_32(s_bfe_i32, {
  unsigned off = b & 31, width = (b >> 16) & 0x7f;
  int32_t r = 0;
  if (width)
    r = width >= 32 ? int32_t(a) >> off
                    : int32_t(U32(a >> off) << (32 - width)) >> (32 - width);
  x.w.scc = r != 0;
  return U32(r);
});
SOP2_32(s_lshl1_add_u32, {
  U64 r = (U64(a) << 1) + b;
  x.w.scc = r >> 32;
  return U32(r);
});
SOP2_32(s_lshl2_add_u32, {
  U64 r = (U64(a) << 2) + b;
  x.w.scc = r >> 32;
  return U32(r);
});
SOP2_32(s_lshl3_add_u32, {
  U64 r = (U64(a) << 3) + b;
  x.w.scc = r >> 32;
  return U32(r);
});
SOP2_32(s_lshl4_add_u32, {
  U64 r = (U64(a) << 4) + b;
  x.w.scc = r >> 32;
  return U32(r);
});
SOP2_32(s_pack_ll_b32_b16, {
  (void)x;
  return (a & 0xffff) | b << 16;
});
SOP2_32(s_pack_lh_b32_b16, {
  (void)x;
  return (a & 0xffff) | (b & 0xffff0000u);
});
SOP2_32(s_pack_hh_b32_b16, {
  (void)x;
  return (a >> 16) | (b & 0xffff0000u);
});
SOP2_32(s_absdiff_i32, {
  int32_t r = int32_t(a) - int32_t(b);
  r = r < 0 ? -r : r;
  x.w.scc = r;
  return U32(r);
});

SOP2_64(s_and_b64, {
  U64 r = a & b;
  x.w.scc = r != 0;
  return r;
});
SOP2_64(s_or_b64, {
  U64 r = a | b;
  x.w.scc = r != 0;
  return r;
});
SOP2_64(s_xor_b64, {
  U64 r = a ^ b;
  x.w.scc = r != 0;
  return r;
});
SOP2_64(s_andn2_b64, {
  U64 r = a & ~b;
  x.w.scc = r != 0;
  return r;
});
SOP2_64(s_orn2_b64, {
  U64 r = a | ~b;
  x.w.scc = r != 0;
  return r;
});
SOP2_64(s_nor_b64, {
  U64 r = ~(a | b);
  x.w.scc = r != 0;
  return r;
});
SOP2_64(s_cselect_b64, { return x.w.scc ? a : b; });

// 64-bit shifts take a 32-bit shift count as ssrc1.
bool s_lshl_b64(Exec &x, const Inst &in) {
  U64 r = x.s64(in.srcs[0]) << (x.s32(in.srcs[1]) & 63);
  x.w.scc = r != 0;
  x.setS64(in.defs[0], r);
  return true;
}
bool s_lshr_b64(Exec &x, const Inst &in) {
  U64 r = x.s64(in.srcs[0]) >> (x.s32(in.srcs[1]) & 63);
  x.w.scc = r != 0;
  x.setS64(in.defs[0], r);
  return true;
}
bool s_ashr_i64(Exec &x, const Inst &in) {
  U64 r = U64(int64_t(x.s64(in.srcs[0])) >> (x.s32(in.srcs[1]) & 63));
  x.w.scc = r != 0;
  x.setS64(in.defs[0], r);
  return true;
}

// SOP1
bool s_mov_b32(Exec &x, const Inst &in) {
  x.setS32(in.defs[0], x.s32(in.srcs[0]));
  return true;
}
bool s_mov_b64(Exec &x, const Inst &in) {
  x.setS64(in.defs[0], x.s64(in.srcs[0]));
  return true;
}
bool s_cmov_b32(Exec &x, const Inst &in) {
  if (x.w.scc)
    x.setS32(in.defs[0], x.s32(in.srcs[0]));
  return true;
}
bool s_not_b32(Exec &x, const Inst &in) {
  U32 r = ~x.s32(in.srcs[0]);
  x.w.scc = r;
  x.setS32(in.defs[0], r);
  return true;
}
bool s_not_b64(Exec &x, const Inst &in) {
  U64 r = ~x.s64(in.srcs[0]);
  x.w.scc = r != 0;
  x.setS64(in.defs[0], r);
  return true;
}
bool s_brev_b32(Exec &x, const Inst &in) {
  x.setS32(in.defs[0], llvm::reverseBits(x.s32(in.srcs[0])));
  return true;
}
bool s_abs_i32(Exec &x, const Inst &in) {
  int32_t v = int32_t(x.s32(in.srcs[0]));
  U32 r = v < 0 ? U32(0) - U32(v) : U32(v);
  x.w.scc = r;
  x.setS32(in.defs[0], r);
  return true;
}
bool s_sext_i32_i16(Exec &x, const Inst &in) {
  x.setS32(in.defs[0], U32(int32_t(int16_t(x.s32(in.srcs[0])))));
  return true;
}
bool s_sext_i32_i8(Exec &x, const Inst &in) {
  x.setS32(in.defs[0], U32(int32_t(int8_t(x.s32(in.srcs[0])))));
  return true;
}
bool s_bcnt1_i32_b32(Exec &x, const Inst &in) {
  U32 r = llvm::popcount(x.s32(in.srcs[0]));
  x.w.scc = r;
  x.setS32(in.defs[0], r);
  return true;
}
bool s_bcnt1_i32_b64(Exec &x, const Inst &in) {
  U32 r = llvm::popcount(x.s64(in.srcs[0]));
  x.w.scc = r;
  x.setS32(in.defs[0], r);
  return true;
}
bool s_ff1_i32_b32(Exec &x, const Inst &in) {
  U32 v = x.s32(in.srcs[0]);
  x.setS32(in.defs[0], v ? llvm::countr_zero(v) : ~0u);
  return true;
}
bool s_ff1_i32_b64(Exec &x, const Inst &in) {
  U64 v = x.s64(in.srcs[0]);
  x.setS32(in.defs[0], v ? llvm::countr_zero(v) : ~0u);
  return true;
}
bool s_flbit_i32_b32(Exec &x, const Inst &in) {
  U32 v = x.s32(in.srcs[0]);
  x.setS32(in.defs[0], v ? llvm::countl_zero(v) : ~0u);
  return true;
}

/// s_*_saveexec_b64: sdst = EXEC; EXEC = op(ssrc0, EXEC); SCC = EXEC != 0.
template <U64 (*Op)(U64, U64)> bool saveexec(Exec &x, const Inst &in) {
  U64 src = x.s64(in.srcs[0]), old = x.exec();
  U64 e = Op(src, old);
  x.setS64(in.defs[0], old);
  x.w.setExec(e);
  x.w.scc = e != 0;
  return true;
}
U64 opAnd(U64 s, U64 e) { return s & e; }
U64 opOr(U64 s, U64 e) { return s | e; }
U64 opXor(U64 s, U64 e) { return s ^ e; }
U64 opAndN2(U64 s, U64 e) { return s & ~e; }
U64 opOrN2(U64 s, U64 e) { return s | ~e; }
U64 opAndN1(U64 s, U64 e) { return ~s & e; }

// SOPK: sdst, [sdst], simm16
int32_t simm16(const Inst &in) { return int16_t(in.imms.back()); }
bool s_movk_i32(Exec &x, const Inst &in) {
  x.setS32(in.defs[0], U32(simm16(in)));
  return true;
}
bool s_mulk_i32(Exec &x, const Inst &in) {
  x.setS32(in.defs[0], U32(int32_t(x.s32(in.defs[0])) * simm16(in)));
  return true;
}
bool s_addk_i32(Exec &x, const Inst &in) {
  int32_t a = int32_t(x.s32(in.defs[0])), b = simm16(in);
  int32_t r = int32_t(U32(a) + U32(b));
  x.w.scc = (a >= 0) == (b >= 0) && (r >= 0) != (a >= 0);
  x.setS32(in.defs[0], U32(r));
  return true;
}
bool s_cmovk_i32(Exec &x, const Inst &in) {
  if (x.w.scc)
    x.setS32(in.defs[0], U32(simm16(in)));
  return true;
}

// SOPC
#define SOPC(NAME, T, GET, OP)                                                 \
  bool NAME(Exec &x, const Inst &in) {                                         \
    T a = T(x.GET(in.srcs[0])), b = T(x.GET(in.srcs[1]));                      \
    x.w.scc = a OP b;                                                          \
    return true;                                                               \
  }
SOPC(s_cmp_eq_i32, int32_t, s32, ==);
SOPC(s_cmp_lg_i32, int32_t, s32, !=);
SOPC(s_cmp_gt_i32, int32_t, s32, >);
SOPC(s_cmp_ge_i32, int32_t, s32, >=);
SOPC(s_cmp_lt_i32, int32_t, s32, <);
SOPC(s_cmp_le_i32, int32_t, s32, <=);
SOPC(s_cmp_eq_u32, U32, s32, ==);
SOPC(s_cmp_lg_u32, U32, s32, !=);
SOPC(s_cmp_gt_u32, U32, s32, >);
SOPC(s_cmp_ge_u32, U32, s32, >=);
SOPC(s_cmp_lt_u32, U32, s32, <);
SOPC(s_cmp_le_u32, U32, s32, <=);
SOPC(s_cmp_eq_u64, U64, s64, ==);
SOPC(s_cmp_lg_u64, U64, s64, !=);
bool s_bitcmp0_b32(Exec &x, const Inst &in) {
  x.w.scc = !(x.s32(in.srcs[0]) >> (x.s32(in.srcs[1]) & 31) & 1);
  return true;
}
bool s_bitcmp1_b32(Exec &x, const Inst &in) {
  x.w.scc = x.s32(in.srcs[0]) >> (x.s32(in.srcs[1]) & 31) & 1;
  return true;
}

// SOPP: branches are pc + 4 + simm16 * 4.
bool branchIf(Exec &x, const Inst &in, bool taken) {
  if (taken) {
    x.w.pc = in.pc + 4 + int64_t(int16_t(in.imms[0])) * 4;
    x.branched = true;
  }
  return true;
}
bool s_branch(Exec &x, const Inst &in) { return branchIf(x, in, true); }
bool s_cbranch_scc0(Exec &x, const Inst &in) {
  return branchIf(x, in, !x.w.scc);
}
bool s_cbranch_scc1(Exec &x, const Inst &in) {
  return branchIf(x, in, x.w.scc);
}
bool s_cbranch_vccz(Exec &x, const Inst &in) {
  return branchIf(x, in, x.w.vcc() == 0);
}
bool s_cbranch_vccnz(Exec &x, const Inst &in) {
  return branchIf(x, in, x.w.vcc() != 0);
}
bool s_cbranch_execz(Exec &x, const Inst &in) {
  return branchIf(x, in, x.exec() == 0);
}
bool s_cbranch_execnz(Exec &x, const Inst &in) {
  return branchIf(x, in, x.exec() != 0);
}
bool s_endpgm(Exec &x, const Inst &) {
  x.endWave = true;
  return true;
}
bool s_barrier(Exec &x, const Inst &) {
  x.barrier = true;
  return true;
}
bool s_nop(Exec &, const Inst &) { return true; }
/// s_waitcnt simm16 (gfx9): vmcnt = {[15:14], [3:0]}, expcnt [6:4],
/// lgkmcnt [11:8].
bool s_waitcnt(Exec &x, const Inst &in) {
  uint32_t s = uint32_t(in.imms[0]);
  waitcnt(x, (s & 0xf) | ((s >> 14) & 3) << 4, (s >> 8) & 0xf);
  return true;
}

} // namespace

void mla::emu::addScalarOps(OpTable &t) {
#define S(NAME) t[#NAME] = {NAME, Class::SALU}
  S(s_add_u32);
  S(s_addc_u32);
  S(s_sub_u32);
  S(s_subb_u32);
  S(s_add_i32);
  S(s_sub_i32);
  S(s_mul_i32);
  S(s_mul_hi_u32);
  S(s_mul_hi_i32);
  S(s_and_b32);
  S(s_or_b32);
  S(s_xor_b32);
  S(s_andn2_b32);
  S(s_orn2_b32);
  S(s_nand_b32);
  S(s_lshl_b32);
  S(s_lshr_b32);
  S(s_ashr_i32);
  S(s_min_i32);
  S(s_min_u32);
  S(s_max_i32);
  S(s_max_u32);
  S(s_cselect_b32);
  S(s_bfe_u32);
  S(s_bfe_i32);
  S(s_lshl1_add_u32);
  S(s_lshl2_add_u32);
  S(s_lshl3_add_u32);
  S(s_lshl4_add_u32);
  S(s_pack_ll_b32_b16);
  S(s_pack_lh_b32_b16);
  S(s_pack_hh_b32_b16);
  S(s_absdiff_i32);
  S(s_and_b64);
  S(s_or_b64);
  S(s_xor_b64);
  S(s_andn2_b64);
  S(s_orn2_b64);
  S(s_nor_b64);
  S(s_cselect_b64);
  S(s_lshl_b64);
  S(s_lshr_b64);
  S(s_ashr_i64);
  S(s_mov_b32);
  S(s_mov_b64);
  S(s_cmov_b32);
  S(s_not_b32);
  S(s_not_b64);
  S(s_brev_b32);
  S(s_abs_i32);
  S(s_sext_i32_i16);
  S(s_sext_i32_i8);
  S(s_bcnt1_i32_b32);
  S(s_bcnt1_i32_b64);
  S(s_ff1_i32_b32);
  S(s_ff1_i32_b64);
  S(s_flbit_i32_b32);
  S(s_movk_i32);
  S(s_mulk_i32);
  S(s_addk_i32);
  S(s_cmovk_i32);
  S(s_cmp_eq_i32);
  S(s_cmp_lg_i32);
  S(s_cmp_gt_i32);
  S(s_cmp_ge_i32);
  S(s_cmp_lt_i32);
  S(s_cmp_le_i32);
  S(s_cmp_eq_u32);
  S(s_cmp_lg_u32);
  S(s_cmp_gt_u32);
  S(s_cmp_ge_u32);
  S(s_cmp_lt_u32);
  S(s_cmp_le_u32);
  S(s_cmp_eq_u64);
  S(s_cmp_lg_u64);
  S(s_bitcmp0_b32);
  S(s_bitcmp1_b32);
#undef S
  t["s_and_saveexec_b64"] = {saveexec<opAnd>, Class::SALU};
  t["s_or_saveexec_b64"] = {saveexec<opOr>, Class::SALU};
  t["s_xor_saveexec_b64"] = {saveexec<opXor>, Class::SALU};
  t["s_andn2_saveexec_b64"] = {saveexec<opAndN2>, Class::SALU};
  t["s_orn2_saveexec_b64"] = {saveexec<opOrN2>, Class::SALU};
  t["s_andn1_saveexec_b64"] = {saveexec<opAndN1>, Class::SALU};
#define B(NAME) t[#NAME] = {NAME, Class::Branch}
  B(s_branch);
  B(s_cbranch_scc0);
  B(s_cbranch_scc1);
  B(s_cbranch_vccz);
  B(s_cbranch_vccnz);
  B(s_cbranch_execz);
  B(s_cbranch_execnz);
#undef B
  t["s_endpgm"] = {s_endpgm, Class::WaitBarrier};
  t["s_barrier"] = {s_barrier, Class::WaitBarrier};
  t["s_waitcnt"] = {s_waitcnt, Class::WaitBarrier};
  t["s_nop"] = {s_nop, Class::WaitBarrier};
  t["s_sleep"] = {s_nop, Class::WaitBarrier};
  t["s_setprio"] = {s_nop, Class::WaitBarrier};
}
