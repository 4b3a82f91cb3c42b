//===- MatrixOps.cpp - MFMA semantics -------------------------------------===//
//
// Written from the ISA guides' general operand rule for MFMA (CDNA4 ISA
// §7.1.4; CDNA3 the same for these shapes), not from the compiler's
// lib/Schedule descriptors: for an M x N x K block with 64 lanes, K is
// split into G = 64 / M lane groups of K_L = K / G consecutive values:
//
//   A[m][k]  lives in lane m + M * (k / K_L), element k % K_L
//   B[k][n]  lives in lane n + N * (k / K_L), element k % K_L
//   D[m][n]  (16 x 16) lives in lane n + 16 * (m / 4), register m % 4
//
// except the FP8 / BF8 operands of gfx950's 16x16x128 f8f6f4 forms, whose
// table (§7.1.5.1) interleaves K: lane group g holds k = 16 g + (i mod 16)
// + 64 (i / 16). Element i of a lane's operand is bits [w i, w (i + 1)) of
// its register tuple for a w-bit type. Products are summed exactly (double)
// and added to C, then rounded to f32; the scale form multiplies each
// 32-wide K block by 2^(sa - 127) * 2^(sb - 127).
//
//===----------------------------------------------------------------------===//
#include "Machine.h"
#include "Numerics.h"

#include <cmath>

using namespace mla::emu;

namespace {

using U32 = uint32_t;
using U64 = uint64_t;

enum class Ty { BF16, F16, FP8, BF8, FP6, BF6, FP4 };

unsigned bitsOf(Ty t) {
  switch (t) {
  case Ty::BF16:
  case Ty::F16:
    return 16;
  case Ty::FP8:
  case Ty::BF8:
    return 8;
  case Ty::FP6:
  case Ty::BF6:
    return 6;
  case Ty::FP4:
    return 4;
  }
  return 0;
}

/// Element `i` of lane `l`'s operand `o` as a double.
double element(Exec &x, const Opnd &o, unsigned l, unsigned i, Ty t) {
  unsigned w = bitsOf(t);
  unsigned bit = w * i;
  U64 word = x.getV(o, l, bit / 32);
  if (bit % 32 + w > 32)
    word |= U64(x.getV(o, l, bit / 32 + 1)) << 32;
  U32 code = U32(word >> (bit % 32)) & ((1u << w) - 1);
  switch (t) {
  case Ty::BF16:
    return bf16ToF32(uint16_t(code));
  case Ty::F16:
    return f16ToF32(uint16_t(code));
  case Ty::FP8:
    return decodeMini(code, x.d.gfx950 ? kE4M3FN : kE4M3FNUZ);
  case Ty::BF8:
    return decodeMini(code, x.d.gfx950 ? kE5M2 : kE5M2FNUZ);
  case Ty::FP6:
    return decodeMini(code, kE2M3);
  case Ty::BF6:
    return decodeMini(code, kE3M2);
  case Ty::FP4:
    return decodeMini(code, kE2M1);
  }
  return 0;
}

Ty f8f6f4Format(int64_t code, bool *ok) {
  *ok = true;
  switch (code) {
  case 0:
    return Ty::FP8;
  case 1:
    return Ty::BF8;
  case 2:
    return Ty::FP6;
  case 3:
    return Ty::BF6;
  case 4:
    return Ty::FP4;
  }
  *ok = false;
  return Ty::FP8;
}

/// The K index of element i in lane group g.
unsigned kIndex(unsigned g, unsigned i, unsigned kPerLane, bool interleaved) {
  if (interleaved)
    return 16 * g + (i % 16) + 64 * (i / 16);
  return kPerLane * g + i;
}

/// D = C + A B for a 16 x 16 x K block; `scaled` adds the E8M0 block scales.
bool mfma16(Exec &x, const Inst &in, unsigned K, Ty ta, Ty tb, bool scaled) {
  const Opnd &A = in.srcs[0], &B = in.srcs[1], &C = in.srcs[2];
  const Opnd &D = in.defs[0];
  unsigned kPerLane = K / 4;
  bool interA = K == 128 && bitsOf(ta) == 8,
       interB = K == 128 && bitsOf(tb) == 8;
  // Gather A (16 x K) and B (K x 16).
  std::vector<double> a(16 * K), b(K * 16);
  for (unsigned l = 0; l < 64; ++l) {
    unsigned g = l / 16, mn = l % 16;
    for (unsigned i = 0; i < kPerLane; ++i) {
      a[mn * K + kIndex(g, i, kPerLane, interA)] = element(x, A, l, i, ta);
      b[kIndex(g, i, kPerLane, interB) * 16 + mn] = element(x, B, l, i, tb);
    }
  }
  double sa[16][4], sb[16][4];
  if (scaled) {
    // scale sources: srcs[3], srcs[4]; op_sel / op_sel_hi (imms after cbsz,
    // blgp) pick the byte: byte = op_sel[j] | op_sel_hi[j] << 1.
    int64_t opSel = in.imms.size() > 2 ? in.imms[2] : 0;
    int64_t opSelHi = in.imms.size() > 3 ? in.imms[3] : 0;
    unsigned byteA = (opSel & 1) | (opSelHi & 1) << 1;
    unsigned byteB = (opSel >> 1 & 1) | (opSelHi >> 1 & 1) << 1;
    for (unsigned l = 0; l < 64; ++l) {
      sa[l % 16][l / 16] = e8m0(uint8_t(x.u32(in.srcs[3], l) >> (8 * byteA)));
      sb[l % 16][l / 16] = e8m0(uint8_t(x.u32(in.srcs[4], l) >> (8 * byteB)));
    }
  }
  float out[64][4];
  for (unsigned l = 0; l < 64; ++l)
    for (unsigned r = 0; r < 4; ++r) {
      unsigned m = 4 * (l / 16) + r, n = l % 16;
      double acc = 0;
      for (unsigned k = 0; k < K; ++k) {
        double p = a[m * K + k] * b[k * 16 + n];
        if (scaled)
          p *= sa[m][k / 32] * sb[n][k / 32];
        acc += p;
      }
      float c = C.file == File::Imm ? asF(U32(C.imm)) : asF(x.getV(C, l, r));
      out[l][r] = float(acc + double(c));
    }
  for (unsigned l = 0; l < 64; ++l)
    for (unsigned r = 0; r < 4; ++r)
      x.setV(D, l, asU(out[l][r]), r);
  return true;
}

/// cbsz / abid / blgp broadcast the operands across blocks; the kernels use
/// none, and the emulator refuses rather than guessing.
bool noBroadcast(Exec &x, const Inst &in) {
  for (size_t i = 0; i < 3 && i < in.imms.size(); ++i)
    if (in.imms[i])
      return x.fail("cbsz / abid / blgp broadcasts are not modelled");
  return true;
}

template <unsigned K, Ty T> bool mfma(Exec &x, const Inst &in) {
  if (!noBroadcast(x, in))
    return false;
  return mfma16(x, in, K, T, T, false);
}

template <bool Scaled> bool mfmaF8F6F4(Exec &x, const Inst &in) {
  bool okA, okB;
  Ty ta = f8f6f4Format(in.imms.size() > 0 ? in.imms[0] : 0, &okA);
  Ty tb = f8f6f4Format(in.imms.size() > 1 ? in.imms[1] : 0, &okB);
  if (!okA || !okB)
    return x.fail("cbsz / blgp name no f8f6f4 format");
  return mfma16(x, in, 128, ta, tb, Scaled);
}

} // namespace

void mla::emu::addMatrixOps(OpTable &t) {
  auto X = [&](const char *n, Handler h) { t[n] = {h, Class::MFMA}; };
  X("v_mfma_f32_16x16x16bf16_1k", mfma<16, Ty::BF16>);
  X("v_mfma_f32_16x16x16_bf16", mfma<16, Ty::BF16>);
  X("v_mfma_f32_16x16x16f16", mfma<16, Ty::F16>);
  X("v_mfma_f32_16x16x16_f16", mfma<16, Ty::F16>);
  X("v_mfma_f32_16x16x32_bf16", mfma<32, Ty::BF16>);
  X("v_mfma_f32_16x16x32_f16", mfma<32, Ty::F16>);
  X("v_mfma_f32_16x16x32_fp8_fp8", mfma<32, Ty::FP8>);
  X("v_mfma_f32_16x16x32_bf8_bf8", mfma<32, Ty::BF8>);
  X("v_mfma_f32_16x16x128_f8f6f4", mfmaF8F6F4<false>);
  X("v_mfma_scale_f32_16x16x128_f8f6f4", mfmaF8F6F4<true>);
}
