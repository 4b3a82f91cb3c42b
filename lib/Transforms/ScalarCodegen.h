//===- ScalarCodegen.h - scalar pieces shared by the lowerings --*- C++ -*-===//
//
// The element-level semantics of the tile ops, emitted as arith ops so that
// the host lowering (checked by the CPU numerics tests) and the GPU lowering
// compute bit-identical conversions and split ranges.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_LIB_TRANSFORMS_SCALARCODEGEN_H
#define MLA_LIB_TRANSFORMS_SCALARCODEGEN_H

#include "mlir/IR/Builders.h"

namespace mlir::mla {

/// True for the 8-bit float types.
bool isFp8(Type t);

/// How an element of type `t` is held in memory by the lowerings: bf16 and
/// f16 as i16, 8-bit floats as i8, everything else as itself. Narrow floats
/// never reach LLVM memory as float types.
Type storageType(Type t);

/// Bytes one stored element of type `t` takes (at least 1).
int64_t storedBytes(Type t);

Value cstIndex(OpBuilder &b, Location loc, int64_t v);
Value cstF32(OpBuilder &b, Location loc, float v);
Value cstI32(OpBuilder &b, Location loc, int64_t v);

/// Widens a stored element of float type `t` to f32 exactly (fp8: integer
/// decode of E4M3FN / E4M3FNUZ, bf16: shift, f16: extf).
Value toF32(OpBuilder &b, Location loc, Value stored, Type t);

/// Rounds an f32 to float type `t` (nearest even; f32, bf16, f16, e4m3 FN /
/// FNUZ saturating) and returns its stored form.
Value fromF32(OpBuilder &b, Location loc, Value v, Type t);

/// The bf16 bits (i16) of one mxfp4 element: e2m1 `code` (i32, 0..15)
/// times the e8m0 block scale `scale` (i32, 0..255: 2^(scale - 127), 255 =
/// NaN). Exact, with subnormal results, and infinite past bf16's range.
/// Integer arithmetic only, so every target decodes alike.
Value mxfp4ToBf16(OpBuilder &b, Location loc, Value code, Value scale);

/// The same for scales 2 .. 252 only (normal, finite results), in fewer
/// operations: `base` is mxfp4Base(scale), computed once per block.
/// Returns i32 bits (the high half zero).
Value mxfp4ToBf16Normal(OpBuilder &b, Location loc, Value code, Value base);
Value mxfp4Base(OpBuilder &b, Location loc, Value scale);
/// Whether mxfp4ToBf16Normal holds for `scale` (i1).
Value mxfp4ScaleIsNormal(OpBuilder &b, Location loc, Value scale);

/// The stored zero of float type `t`.
Value storedZero(OpBuilder &b, Location loc, Type t);

/// `x == -inf ? 0 : x`: the exp2 reference point of a row that has seen no
/// unmasked score, so that no NaN is formed.
Value finiteOrZero(OpBuilder &b, Location loc, Value x);

/// `scale` and `inverse` of `mla.quant_scale` (see its description) for
/// the tile's largest magnitude `amax` (f32, not negative or NaN) and the
/// narrow type's top exponent E: 2^k and 2^-k, k = E - 1 - floor(log2
/// amax) clamped to [-126, 126], built from amax's exponent field.
std::pair<Value, Value> emitQuantScale(OpBuilder &b, Location loc, Value amax,
                                       int64_t topExponent);

/// |x| of an f32 by clearing its sign bit (no math dialect needed on any
/// target; NaN stays NaN): what mla.quant_scale's amax takes the maximum
/// of, NaN ignored.
Value magnitude(OpBuilder &b, Location loc, Value x);

/// [lo, hi) of `mla.split_range` (see its description).
std::pair<Value, Value> emitSplitRange(OpBuilder &b, Location loc, Value len,
                                       Value split, Value numSplits,
                                       int64_t blockN, bool exact);

} // namespace mlir::mla

#endif
