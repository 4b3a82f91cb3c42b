//===- ScalarCodegen.cpp - scalar pieces shared by the lowerings ----------===//
#include "ScalarCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::mla;

bool mlir::mla::isFp8(Type t) {
  return isa<FloatType>(t) && t.getIntOrFloatBitWidth() == 8;
}

Type mlir::mla::storageType(Type t) {
  if (t.isBF16() || t.isF16())
    return IntegerType::get(t.getContext(), 16);
  if (isFp8(t))
    return IntegerType::get(t.getContext(), 8);
  return t;
}

int64_t mlir::mla::storedBytes(Type t) {
  return std::max<int64_t>(1, storageType(t).getIntOrFloatBitWidth() / 8);
}

Value mlir::mla::cstIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value mlir::mla::cstF32(OpBuilder &b, Location loc, float v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

Value mlir::mla::cstI32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
}

Value mlir::mla::toF32(OpBuilder &b, Location loc, Value v, Type t) {
  if (t.isF32())
    return v;
  Type i32 = b.getI32Type();
  if (t.isBF16()) {
    Value w = arith::ExtUIOp::create(b, loc, i32, v);
    w = arith::ShLIOp::create(b, loc, w, cstI32(b, loc, 16));
    return arith::BitcastOp::create(b, loc, b.getF32Type(), w);
  }
  if (t.isF16())
    return arith::ExtFOp::create(
        b, loc, b.getF32Type(),
        arith::BitcastOp::create(b, loc, b.getF16Type(), v).getResult());
  assert(isFp8(t) && "unsupported element type");
  // e4m3 S.EEEE.MMM placed at f32 bits 31 and 26..20 reads as
  // 1.MMM * 2^(E - 127), or MMM/8 * 2^-126 for E = 0 (an f32 subnormal);
  // one multiply by 2^(127 - bias) gives the value for normals and
  // subnormals alike (bias 7 for FN, 8 for FNUZ). Exact: the products are
  // normal f32 numbers. FN's NaN is S.1111.111, FNUZ's is 0x80.
  bool fnuz = isa<Float8E4M3FNUZType>(t);
  Value w = arith::ExtUIOp::create(b, loc, i32, v);
  Value sign = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, w, cstI32(b, loc, 0x80)),
      cstI32(b, loc, 24));
  Value mag = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, w, cstI32(b, loc, 0x7F)),
      cstI32(b, loc, 20));
  Value f = arith::BitcastOp::create(b, loc, b.getF32Type(),
                                     arith::OrIOp::create(b, loc, sign, mag));
  f = arith::MulFOp::create(b, loc, f,
                            cstF32(b, loc, std::ldexp(1.0f, fnuz ? 119 : 120)));
  Value isNan = fnuz ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             w, cstI32(b, loc, 0x80))
                     : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             mag, cstI32(b, loc, 0x7F << 20));
  return arith::SelectOp::create(
      b, loc, isNan, cstF32(b, loc, std::numeric_limits<float>::quiet_NaN()),
      f);
}

/// f32 -> e4m3 (FN or FNUZ) code as i8: round to nearest even, saturating
/// to the largest finite value (as mla_ref::encodeFp8, the reference).
static Value f32ToFp8(OpBuilder &b, Location loc, Value v, bool fnuz) {
  auto i32 = [&](int64_t x) { return cstI32(b, loc, x); };
  int bias = fnuz ? 8 : 7;
  Type i32T = b.getI32Type();
  Value bits = arith::BitcastOp::create(b, loc, i32T, v);
  Value magBits = arith::AndIOp::create(b, loc, bits, i32(0x7FFFFFFF));
  Value a = arith::BitcastOp::create(b, loc, b.getF32Type(), magBits);
  // Normal range: round the 23-bit mantissa to 3 bits (the carry may step
  // the exponent), then rebias.
  Value lsb = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, magBits, i32(20)), i32(1));
  Value rounded = arith::AddIOp::create(
      b, loc, magBits, arith::AddIOp::create(b, loc, lsb, i32(0x7FFFF)));
  Value normal = arith::SubIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, rounded, i32(20)),
      i32((127 - bias) << 3));
  // Subnormal range: adding 2^(23 + 1 - bias - 3) rounds a to a multiple of
  // the subnormal step 2^(1 - bias - 3) (f32 addition rounds to nearest
  // even); the multiple is the code (8 = the smallest normal).
  float magic = std::ldexp(1.0f, 23 + 1 - bias - 3);
  Value r = arith::SubFOp::create(
      b, loc, arith::AddFOp::create(b, loc, a, cstF32(b, loc, magic)),
      cstF32(b, loc, magic));
  Value sub = arith::FPToUIOp::create(
      b, loc, i32T,
      arith::MulFOp::create(b, loc, r,
                            cstF32(b, loc, std::ldexp(1.0f, bias + 2))));
  Value isSub =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, a,
                            cstF32(b, loc, std::ldexp(1.0f, 1 - bias)));
  Value code = arith::SelectOp::create(b, loc, isSub, sub, normal);
  // Saturate (also infinity), then the sign: FNUZ has no negative zero.
  float maxVal = fnuz ? 240.0f : 448.0f;
  Value big = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, a,
                                    cstF32(b, loc, maxVal));
  code = arith::SelectOp::create(b, loc, big, i32(fnuz ? 0x7F : 0x7E), code);
  Value neg = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne,
      arith::AndIOp::create(b, loc, bits, i32(0x80000000)), i32(0));
  if (fnuz)
    neg = arith::AndIOp::create(
        b, loc, neg,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, code, i32(0)));
  code = arith::SelectOp::create(
      b, loc, neg, arith::OrIOp::create(b, loc, code, i32(0x80)), code);
  Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
  code = arith::SelectOp::create(b, loc, isNan, i32(fnuz ? 0x80 : 0x7F), code);
  return arith::TruncIOp::create(b, loc, b.getI8Type(), code);
}

Value mlir::mla::fromF32(OpBuilder &b, Location loc, Value v, Type t) {
  if (t.isF32())
    return v;
  if (isa<Float8E4M3FNType, Float8E4M3FNUZType>(t))
    return f32ToFp8(b, loc, v, isa<Float8E4M3FNUZType>(t));
  if (t.isF16()) // round to nearest even: cvt.rn.f16.f32, v_cvt_f16_f32
    return arith::BitcastOp::create(
        b, loc, b.getI16Type(),
        arith::TruncFOp::create(b, loc, b.getF16Type(), v).getResult());
  assert(t.isBF16() &&
         "the verifiers only allow rounding f32 to bf16, f16 or e4m3");
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), v);
  Value lsb = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, cstI32(b, loc, 16)),
      cstI32(b, loc, 1));
  Value rounded = arith::AddIOp::create(
      b, loc, bits, arith::AddIOp::create(b, loc, lsb, cstI32(b, loc, 0x7FFF)));
  Value hi = arith::ShRUIOp::create(b, loc, rounded, cstI32(b, loc, 16));
  Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
  hi = arith::SelectOp::create(b, loc, isNan, cstI32(b, loc, 0x7FC0), hi);
  return arith::TruncIOp::create(b, loc, b.getI16Type(), hi);
}

Value mlir::mla::mxfp4ToBf16(OpBuilder &b, Location loc, Value code,
                             Value scale) {
  using P = arith::CmpIPredicate;
  auto c = [&](int64_t v) { return cstI32(b, loc, v); };
  auto andi = [&](Value x, int64_t m) {
    return arith::AndIOp::create(b, loc, x, c(m)).getResult();
  };
  auto shl = [&](Value x, Value n) {
    return arith::ShLIOp::create(b, loc, x, n).getResult();
  };
  auto cmpc = [&](P p, Value x, int64_t v) {
    return arith::CmpIOp::create(b, loc, p, x, c(v)).getResult();
  };
  auto sel = [&](Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y).getResult();
  };
  // A value is M * 2^(scale - 128), M = 2 * |e2m1| in {0,1,2,3,4,6,8,12}.
  Value mag = andi(code, 7);
  Value sign = shl(andi(code, 8), c(12));
  // Normal results: the bf16 exponent field is the scale plus
  // the e2m1 exponent, the mantissa bit e2m1's: bits = (scale << 7) +
  // (mag << 6) - 128, less 64 more for mag 1 (0.5, e2m1's subnormal);
  // past the largest finite value, infinity; with scales 0 and 1 it may
  // fall below the normals (negative, or a field of 0).
  Value normal =
      arith::AddIOp::create(b, loc, shl(scale, c(7)), shl(mag, c(6)));
  normal = arith::SubIOp::create(b, loc, normal,
                                 sel(cmpc(P::eq, mag, 1), c(192), c(128)));
  normal = arith::MinSIOp::create(b, loc, normal, c(0x7F80));
  // Below bf16's smallest normal (only with scales 0 and 1): a subnormal,
  // M << (5 + scale) in units of 2^-133, M from a table of nibbles.
  Value m =
      andi(arith::ShRUIOp::create(b, loc, c(0xC8643210), shl(mag, c(2))), 0xF);
  Value low = shl(m, arith::AddIOp::create(b, loc, scale, c(5)));
  Value bits = sel(cmpc(P::slt, normal, 0x80), low, normal);
  bits = sel(cmpc(P::eq, mag, 0), c(0), bits);
  bits = sel(cmpc(P::eq, scale, 255), c(0x7FC0), bits);
  bits = arith::OrIOp::create(b, loc, bits, sign);
  return arith::TruncIOp::create(b, loc, b.getI16Type(), bits);
}

Value mlir::mla::mxfp4ToE4m3(OpBuilder &b, Location loc, Value code,
                             Value scale, Value ref) {
  auto c = [&](int64_t v) { return cstI32(b, loc, v); };
  // The product through bf16, exactly: with scale code k + 127 (clamped at
  // 0, below which every product rounds to zero in e4m3 anyway), then
  // rounded once to e4m3.
  Value k127 = arith::AddIOp::create(
      b, loc, arith::SubIOp::create(b, loc, scale, ref), c(127 + 6));
  k127 = arith::MaxSIOp::create(b, loc, k127, c(0));
  Value bf = arith::ExtUIOp::create(b, loc, b.getI32Type(),
                                    mxfp4ToBf16(b, loc, code, k127));
  Value f = arith::BitcastOp::create(b, loc, b.getF32Type(),
                                     arith::ShLIOp::create(b, loc, bf, c(16)));
  Value byte = fromF32(b, loc, f, Float8E4M3FNType::get(b.getContext()));
  Value nan =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, scale, c(255));
  return arith::SelectOp::create(
      b, loc, nan,
      arith::ConstantOp::create(b, loc, b.getIntegerAttr(b.getI8Type(), 0x7F)),
      byte);
}

std::pair<Value, Value> mlir::mla::mxfp4E4m3Table(OpBuilder &b, Location loc,
                                                  Value k6) {
  // Magnitude m >= 2 is e2m1 exponent E and mantissa bit M with (E, M) =
  // m: its e4m3 byte is (m << 2) + (k6 << 3); 0.5 (m = 1) is k6 << 3, 0
  // is 0. Per byte: {0, 0, 8, 12, 16, 20, 24, 28} + k6 * {0, 8, 8, ...}.
  auto c = [&](int64_t v) { return cstI32(b, loc, v); };
  Value lo = arith::AddIOp::create(
      b, loc, c(0x0C080000), arith::MulIOp::create(b, loc, k6, c(0x08080800)));
  Value hi = arith::AddIOp::create(
      b, loc, c(0x1C181410), arith::MulIOp::create(b, loc, k6, c(0x08080808)));
  return {lo, hi};
}

Value mlir::mla::pow2F32(OpBuilder &b, Location loc, Value e) {
  return arith::BitcastOp::create(
      b, loc, b.getF32Type(),
      arith::ShLIOp::create(
          b, loc, arith::AddIOp::create(b, loc, e, cstI32(b, loc, 127)),
          cstI32(b, loc, 23)));
}

Value mlir::mla::mxfp4Base(OpBuilder &b, Location loc, Value scale) {
  return arith::SubIOp::create(
      b, loc, arith::ShLIOp::create(b, loc, scale, cstI32(b, loc, 7)),
      cstI32(b, loc, 128));
}

Value mlir::mla::mxfp4ScaleIsNormal(OpBuilder &b, Location loc, Value scale) {
  // 2 <= scale <= 252 as one unsigned compare.
  return arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ule,
      arith::SubIOp::create(b, loc, scale, cstI32(b, loc, 2)),
      cstI32(b, loc, 250));
}

Value mlir::mla::mxfp4ToBf16Normal(OpBuilder &b, Location loc, Value code,
                                   Value base) {
  auto c = [&](int64_t v) { return cstI32(b, loc, v); };
  // mxfp4ToBf16's normal formula, its mantissa-and-exponent term from a
  // table of nibbles, d = {0, 0, 2, 3, 4, 5, 6, 7}[mag] (mag 1 = 0.5 is
  // the scale's own binade less one: base already holds that -128):
  // bits = base + (d << 6), 0 for mag 0, the sign at bit 15.
  Value mag = arith::AndIOp::create(b, loc, code, c(7));
  Value d = arith::AndIOp::create(
      b, loc,
      arith::ShRUIOp::create(b, loc, c(0x76543200),
                             arith::ShLIOp::create(b, loc, mag, c(2))),
      c(0xF));
  Value bits = arith::AddIOp::create(
      b, loc, arith::ShLIOp::create(b, loc, d, c(6)), base);
  Value zero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, mag, c(0));
  bits = arith::SelectOp::create(b, loc, zero, c(0), bits);
  Value sign = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, code, c(8)), c(12));
  return arith::OrIOp::create(b, loc, bits, sign);
}

Value mlir::mla::storedZero(OpBuilder &b, Location loc, Type t) {
  Type st = storageType(t);
  if (isa<IntegerType>(st))
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(st, 0));
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(t, 0.0));
}

Value mlir::mla::finiteOrZero(OpBuilder &b, Location loc, Value x) {
  Value negInf = cstF32(b, loc, -std::numeric_limits<float>::infinity());
  Value isNegInf =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, negInf);
  return arith::SelectOp::create(b, loc, isNegInf, cstF32(b, loc, 0), x);
}

std::pair<Value, Value> mlir::mla::emitQuantScale(OpBuilder &b, Location loc,
                                                  Value amax,
                                                  int64_t topExponent) {
  Type i32 = b.getI32Type();
  // The biased exponent field: 0 for zero and subnormals (2^-127 then),
  // 255 for infinity.
  Value bits = arith::BitcastOp::create(b, loc, i32, amax);
  Value field = arith::ShRUIOp::create(b, loc, bits, cstI32(b, loc, 23));
  // k = E - 1 - (field - 127), clamped to [-126, 126]; 2^k has the biased
  // field k + 127 and 2^-k the field 127 - k.
  Value k = arith::SubIOp::create(b, loc, cstI32(b, loc, topExponent + 126),
                                  field);
  k = arith::MinSIOp::create(b, loc, k, cstI32(b, loc, 126));
  k = arith::MaxSIOp::create(b, loc, k, cstI32(b, loc, -126));
  auto pow2 = [&](Value biased) -> Value {
    return arith::BitcastOp::create(
        b, loc, b.getF32Type(),
        arith::ShLIOp::create(b, loc, biased, cstI32(b, loc, 23)));
  };
  Value scale = pow2(arith::AddIOp::create(b, loc, k, cstI32(b, loc, 127)));
  Value inverse = pow2(arith::SubIOp::create(b, loc, cstI32(b, loc, 127), k));
  return {scale, inverse};
}

Value mlir::mla::magnitude(OpBuilder &b, Location loc, Value x) {
  Type i32 = b.getI32Type();
  Value mag = arith::AndIOp::create(
      b, loc, arith::BitcastOp::create(b, loc, i32, x),
      cstI32(b, loc, 0x7FFFFFFF));
  return arith::BitcastOp::create(b, loc, b.getF32Type(), mag);
}

std::pair<Value, Value> mlir::mla::emitSplitRange(OpBuilder &b, Location loc,
                                                  Value len, Value s, Value n,
                                                  int64_t blockN, bool exact) {
  if (exact) {
    // A length the dispatch rule should have kept away (not a multiple of
    // num_splits * block_n) gives an empty range: full tiles past the
    // sequence's end would read the rows after it.
    // (per * n == length and per % block_n == 0: no second division.)
    // (Each operand built in its own statement: the IR's order must not
    // depend on the C++ compiler's argument evaluation order.)
    Value per = arith::DivUIOp::create(b, loc, len, n);
    Value back = arith::MulIOp::create(b, loc, per, n);
    Value whole =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, back, len);
    Value rem = arith::RemUIOp::create(b, loc, per, cstIndex(b, loc, blockN));
    Value full = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rem,
                                       cstIndex(b, loc, 0));
    Value divides = arith::AndIOp::create(b, loc, whole, full);
    per = arith::SelectOp::create(b, loc, divides, per, cstIndex(b, loc, 0));
    Value lo = arith::MulIOp::create(b, loc, s, per);
    return {lo, arith::AddIOp::create(b, loc, lo, per)};
  }
  Value bn = cstIndex(b, loc, blockN);
  Value per = arith::CeilDivUIOp::create(b, loc, len, n);
  per = arith::MulIOp::create(b, loc,
                              arith::CeilDivUIOp::create(b, loc, per, bn), bn);
  Value lo = arith::MinUIOp::create(b, loc,
                                    arith::MulIOp::create(b, loc, s, per), len);
  Value hi = arith::MinUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, lo, per), len);
  return {lo, hi};
}
