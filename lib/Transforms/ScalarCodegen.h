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

/// mla.dequant into e4m3fn: the row reference of a row whose largest scale
/// code is `largest` is max(kMxfp4E4m3MinRef, largest); its exponent
/// (mla.dequant's `exponents`) is that reference minus kMxfp4E4m3ExpOffset.
constexpr int64_t kMxfp4E4m3MinRef = 33, kMxfp4E4m3ExpOffset = 133;

/// The e4m3fn byte (i8) of one mxfp4 element decoded against its row's
/// reference `ref` (i32): e2m1 `code` times 2^(scale - ref + 6), rounded to
/// nearest even (exact for scale >= ref - 14), NaN (0x7F) for scale 255.
/// Integer and f32 arithmetic only, so every target decodes alike.
Value mxfp4ToE4m3(OpBuilder &b, Location loc, Value code, Value scale,
                  Value ref);

/// For blocks with k = scale - ref + 6 >= -5 (every product a normal e4m3
/// value or zero) and scale != 255: the e4m3fn bytes of the eight e2m1
/// magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 times 2^k, as two i32 words
/// (magnitudes 0-3 and 4-7, byte i of a word = magnitude i): a byte-permute
/// table equal to mxfp4ToE4m3 for those blocks (ScalarCodegenTest checks
/// it). `k6` is k + 6 (i32, >= 1).
std::pair<Value, Value> mxfp4E4m3Table(OpBuilder &b, Location loc, Value k6);

/// 2^e as f32 for an i32 `e` in [-126, 127], built from its exponent field
/// (exact on every target; mla.online_softmax's col_exp).
Value pow2F32(OpBuilder &b, Location loc, Value e);

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
