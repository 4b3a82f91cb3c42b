//===- ScalarCodegen.cpp - scalar pieces shared by the lowerings ----------===//
#include "ScalarCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cassert>
#include <limits>

using namespace mlir;
using namespace mlir::mla;

bool mlir::mla::isFp8(Type t) {
  return isa<FloatType>(t) && t.getIntOrFloatBitWidth() == 8;
}

Type mlir::mla::storageType(Type t) {
  if (t.isBF16())
    return IntegerType::get(t.getContext(), 16);
  if (isFp8(t))
    return IntegerType::get(t.getContext(), 8);
  return t;
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
  assert(isFp8(t) && "unsupported element type");
  // e4m3: sign, 4 exponent bits, 3 mantissa bits; FN has bias 7 and NaN at
  // S.1111.111, FNUZ has bias 8 and its only NaN at 0x80.
  bool fnuz = isa<Float8E4M3FNUZType>(t);
  int64_t bias = fnuz ? 8 : 7;
  Value w = arith::ExtUIOp::create(b, loc, i32, v);
  auto andI = [&](Value x, int64_t m) {
    return arith::AndIOp::create(b, loc, x, cstI32(b, loc, m));
  };
  auto shr = [&](Value x, int64_t s) {
    return arith::ShRUIOp::create(b, loc, x, cstI32(b, loc, s));
  };
  auto shl = [&](Value x, int64_t s) {
    return arith::ShLIOp::create(b, loc, x, cstI32(b, loc, s));
  };
  Value sign = shl(andI(w, 0x80), 24);
  Value exp = andI(shr(w, 3), 0xF);
  Value man = andI(w, 0x7);
  // Normal: rebias the exponent, move the mantissa to the top.
  Value normal = arith::OrIOp::create(
      b, loc, sign,
      arith::OrIOp::create(
          b, loc,
          shl(arith::AddIOp::create(b, loc, exp, cstI32(b, loc, 127 - bias)), 23),
          shl(man, 20)));
  // Subnormal: man * 2^(1 - bias - 3), with the sign copied in.
  Value subMag = arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, b.getF32Type(), man),
      cstF32(b, loc, std::ldexp(1.0f, static_cast<int>(-2 - bias))));
  Value sub = arith::OrIOp::create(
      b, loc, arith::BitcastOp::create(b, loc, i32, subMag), sign);
  Value isSub = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, exp,
                                      cstI32(b, loc, 0));
  Value bits = arith::SelectOp::create(b, loc, isSub, sub, normal);
  Value isNan =
      fnuz ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, w,
                                   cstI32(b, loc, 0x80))
           : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                   andI(w, 0x7F), cstI32(b, loc, 0x7F));
  bits = arith::SelectOp::create(b, loc, isNan, cstI32(b, loc, 0x7FC00000),
                                 bits);
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

Value mlir::mla::fromF32(OpBuilder &b, Location loc, Value v, Type t) {
  if (t.isF32())
    return v;
  assert(t.isBF16() && "the verifiers only allow rounding f32 to bf16");
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

std::pair<Value, Value> mlir::mla::emitSplitRange(OpBuilder &b, Location loc,
                                                  Value len, Value s, Value n,
                                                  int64_t blockN, bool exact) {
  if (exact) {
    Value per = arith::DivUIOp::create(b, loc, len, n);
    Value lo = arith::MulIOp::create(b, loc, s, per);
    return {lo, arith::AddIOp::create(b, loc, lo, per)};
  }
  Value bn = cstIndex(b, loc, blockN);
  Value per = arith::CeilDivUIOp::create(b, loc, len, n);
  per = arith::MulIOp::create(b, loc,
                              arith::CeilDivUIOp::create(b, loc, per, bn), bn);
  Value lo =
      arith::MinUIOp::create(b, loc, arith::MulIOp::create(b, loc, s, per), len);
  Value hi =
      arith::MinUIOp::create(b, loc, arith::AddIOp::create(b, loc, lo, per), len);
  return {lo, hi};
}
