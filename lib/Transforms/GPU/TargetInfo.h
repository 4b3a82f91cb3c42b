//===- TargetInfo.h - the GPU lowering's target interface --------*- C++
//-*-===//
//
// Part of mla-lower-to-gpu (lib/Transforms/MLALowerToGPU.cpp). `TargetInfo`
// is the one way the lowering emits a target instruction: every op of the
// nvgpu, nvvm, rocdl and amdgpu dialects (and every llvm.nvvm.* /
// llvm.amdgcn.* intrinsic) is built in a subclass, one per vendor:
// TargetCDNA.cpp (gfx950, gfx942) and TargetSM90.cpp (sm_90), the model
// being Triton's TargetInfoBase. The lowering asks the chip's facts
// (ChipInfo::facts) whether an instruction exists and calls the hook; a
// hook the target lacks is a compiler bug and aborts. The file also holds
// the constants and small helpers the lowering's files share.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_TRANSFORMS_GPU_TARGETINFO_H
#define MLA_TRANSFORMS_GPU_TARGETINFO_H

#include "mla/MLAOps.h"
#include "mla/MatrixInstr.h"
#include "mla/Passes.h"
#include "mla/SharedMemoryPlan.h"
#include "mla/Target.h"

#include "../ScalarCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/TypeSwitch.h"

#include <functional>
#include <limits>
#include <memory>

namespace mlir::mla::gpulower {

constexpr float kLog2E = 1.44269504088896340736f;
/// The element type of `o`'s (tensor) result.
inline Type resultElt(Operation *o) {
  return cast<RankedTensorType>(o->getResult(0).getType()).getElementType();
}

/// Most rounds of 16-byte chunks per thread that a tile copy outside the KV
/// loop issues as straight-line loads before its stores (registers: 4 per
/// round).
constexpr int64_t kMaxStraightRounds = 16;

/// The bits of scalar `x` as a vector of type `t` (same width).
inline Value bitcastToVector(OpBuilder &b, Location loc, Value x,
                             VectorType t) {
  Value one = vector::FromElementsOp::create(
      b, loc, VectorType::get({1}, x.getType()), ValueRange{x});
  return vector::BitCastOp::create(b, loc, t, one);
}

/// The indices of element (r, c) of a tile in a rank-3 swizzled view
/// [atom][row][64] of `elemBytes`-byte elements: (c / 64, r, the column
/// within the atom with its 16-byte chunk permuted by the row). 16-bit
/// tiles are wgmma's 128-byte swizzle (Lowering::swizzled: 8 chunks a row,
/// chunk xor r mod 8); 8-bit ones its 64-byte swizzle (4 chunks a row,
/// xor (r / 2) mod 4): fp8 wgmma operands, and fp8 KV staged for
/// conversion on the same chip (Lowering::stagesInPlace). Both are
/// smemSwizzledOffset's (mla/MatrixInstr.h).
inline SmallVector<Value> swizzledIndices(OpBuilder &b, Location loc, Value r,
                                          Value c, int64_t elemBytes = 2) {
  auto cst = [&](int64_t v) { return cstIndex(b, loc, v); };
  int64_t perChunk = 16 / elemBytes, chunks = 64 / perChunk;
  Value inAtom = arith::RemUIOp::create(b, loc, c, cst(64));
  Value rowTerm = elemBytes == 1 ? arith::DivUIOp::create(b, loc, r, cst(2))
                                 : r;
  Value chunk = arith::XOrIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, inAtom, cst(perChunk)),
      arith::RemUIOp::create(b, loc, rowTerm, cst(chunks)));
  Value col = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, chunk, cst(perChunk)),
      arith::RemUIOp::create(b, loc, c, cst(perChunk)));
  return {arith::DivUIOp::create(b, loc, c, cst(64)), r, col};
}

/// The indices of element (r, c) of a shared-memory tile view: (r, c) for
/// padded rows (rank 2), swizzledIndices for a swizzled view (rank 3).
inline SmallVector<Value> smemIndices(OpBuilder &b, Location loc, Value view,
                                      Value r, Value c) {
  auto mt = cast<MemRefType>(view.getType());
  if (mt.getRank() != 3)
    return {r, c};
  return swizzledIndices(b, loc, r, c,
                         mt.getElementType().getIntOrFloatBitWidth() / 8);
}

/// The 16-bit type a (non-fp8) matrix instruction reads: f16 or bf16.
inline Type sixteenBitOperand(OpBuilder &b, const MatrixInstr *mi) {
  return mi->abType == MatrixElem::F16 ? Type(b.getF16Type())
                                       : Type(b.getBF16Type());
}

/// The high half of an f32 as stored bf16 (i16): exact for fp8 values.
Value f32HighHalf(OpBuilder &b, Location loc, Value x);
/// An f32 holding an fp8 value as stored `op` (bf16 or f16; i16): exact.
Value f32ToOperand(OpBuilder &b, Location loc, Value x, Type op);
/// Four bf16 pairs (i32 each, the low half first) as the 8 stored values
/// they hold (vector<8 x i16>): what mxfp4WordToBf16 returns.
Value bf16PairsToVector8(OpBuilder &b, Location loc, ArrayRef<Value> pairs);

//===----------------------------------------------------------------------===//
// The target interface
//===----------------------------------------------------------------------===//

class TargetInfo {
public:
  /// The implementation for `chip` (looked up once, by the pass) with the
  /// bf16 matrix instruction of the deepest K; an error on `diagOp` for a
  /// chip that is not a GPU or has no bf16 matrix instruction.
  static FailureOr<std::unique_ptr<TargetInfo>> create(const ChipInfo &chip,
                                                       Operation *diagOp);
  virtual ~TargetInfo() = default;

  const ChipInfo &chip;
  /// The bf16 matrix instruction: fixes every accumulator tile's layout.
  const MatrixInstr *mma;

  /// The matrix instruction for a dot of `lhs` x `rhs` element types
  /// contracting over `k`: an fp8 instruction of the operands' own format
  /// when both are that fp8 type and the chip has one with the bf16
  /// instruction's M, N and accumulator layout (so the accumulator tiles
  /// keep their layout), the deepest whose K divides `k` (gfx950's
  /// 16x16x128 f8f6f4 for P V over 128 tokens, its 16x16x32 fp8 one over
  /// 576 = 4.5 x 128, which kRanges splits); else the bf16 one, operands
  /// converted.
  const MatrixInstr *instrFor(Type lhs, Type rhs, int64_t k) const;

  /// One stretch [begin, end) of a dot's contraction and the instruction
  /// that runs it.
  struct KRange {
    const MatrixInstr *mi;
    int64_t begin, end;
  };
  /// The contraction of a dot split where a deeper instruction than
  /// instrFor's pays: the longest multiple of the deepest instruction of
  /// the operands' type on it, the rest on instrFor's choice for the rest
  /// (gfx950, fp8 Q K^T over 576: 512 on the 16x16x128 f8f6f4
  /// instruction, 64 on the 16x16x32 fp8 one: 6 instructions a tile
  /// instead of 18). One range of instrFor(lhs, rhs, k) where no split
  /// gives fewer instructions.
  SmallVector<KRange, 2> kRanges(Type lhs, Type rhs, int64_t k) const;

  //--- every target ------------------------------------------------------//

  /// The gpu.module's target attribute (#rocdl.target / #nvvm.target).
  virtual Attribute moduleTarget(MLIRContext *ctx) const = 0;
  /// Approximate 2^x and log2(x) of an f32 (one instruction each).
  virtual Value exp2(OpBuilder &b, Location loc, Value x) const = 0;
  virtual Value log2(OpBuilder &b, Location loc, Value x) const = 0;
  /// Four bytes of the 8-byte concatenation lo:hi (lo = bytes 0-3, both
  /// i32) picked by `sel` (indices 0-7) as one i32, in one instruction.
  virtual Value bytePerm(OpBuilder &b, Location loc, Value lo, Value hi,
                         std::array<int64_t, 4> sel) const = 0;
  /// One instruction `mi`: `a`, `b` are the lane's operand elements as
  /// stored values of `elt` (bf16: i16, fp8: i8), `c` its f32 accumulator
  /// elements; returns D.
  virtual SmallVector<Value> matrixOp(OpBuilder &b, Location loc,
                                      const MatrixInstr *mi, Type elt,
                                      ArrayRef<Value> a, ArrayRef<Value> bv,
                                      ArrayRef<Value> c) const = 0;
  /// A stored fp8 element (i8 of float type `elt`) as a stored operand of
  /// type `op` (bf16 or f16; i16) with the chip's conversion instruction;
  /// std::nullopt where the chip decodes in software (Fp8Decode::Software).
  virtual std::optional<Value> fp8ToOperand(OpBuilder &b, Location loc,
                                            Value stored, Type elt,
                                            Type op) const = 0;
  /// A pair of stored fp8 elements (vector<2 x i8> of float type `elt`) as
  /// two stored operands of type `op` with the chip's pair conversion;
  /// std::nullopt where the chip decodes in software.
  virtual std::optional<std::pair<Value, Value>>
  fp8PairToOperand(OpBuilder &b, Location loc, Value pair, Type elt,
                   Type op) const = 0;
  /// f32 values `x`, `y` rounded to fp8 type `elt` as stored codes (i8)
  /// with the chip's pair conversion (ChipInfo facts: fp8PairEncode);
  /// std::nullopt where the chip rounds in software.
  virtual std::optional<std::array<Value, 2>> f32PairToFp8(OpBuilder &b,
                                                           Location loc,
                                                           Value x, Value y,
                                                           Type elt) const = 0;
  /// f32 values rounded to `elt`'s stored form, in order: fp8 in pairs
  /// through f32PairToFp8 where the chip has it, the rest one by one
  /// (fromF32).
  SmallVector<Value> roundedToStored(OpBuilder &b, Location loc,
                                     ArrayRef<Value> xs, Type elt) const {
    SmallVector<Value> out;
    for (size_t i = 0; i < xs.size(); ++i) {
      if (isFp8(elt) && i + 1 < xs.size())
        if (auto hw = f32PairToFp8(b, loc, xs[i], xs[i + 1], elt)) {
          out.append(hw->begin(), hw->end());
          ++i;
          continue;
        }
      out.push_back(fromF32(b, loc, xs[i], elt));
    }
    return out;
  }
  /// Stored values of float type `elt` (rounded by roundedToStored) as f32,
  /// in order: fp8 in pairs through the chip's pair decode into f16 (exact:
  /// f16 holds every e4m3 value) where it has one, the rest in software
  /// (toF32). mla.split_terms reads its hi terms back this way.
  SmallVector<Value> storedToF32(OpBuilder &b, Location loc,
                                 ArrayRef<Value> stored, Type elt) const {
    SmallVector<Value> out;
    for (size_t i = 0; i < stored.size(); ++i) {
      if (isFp8(elt) && i + 1 < stored.size()) {
        Value pair = vector::FromElementsOp::create(
            b, loc, VectorType::get({2}, b.getI8Type()),
            ValueRange{stored[i], stored[i + 1]});
        if (auto hw = fp8PairToOperand(b, loc, pair, elt, b.getF16Type())) {
          for (Value h : {hw->first, hw->second})
            out.push_back(arith::ExtFOp::create(
                b, loc, b.getF32Type(),
                arith::BitcastOp::create(b, loc, b.getF16Type(), h)
                    .getResult()));
          ++i;
          continue;
        }
      }
      out.push_back(toF32(b, loc, stored[i], elt));
    }
    return out;
  }
  /// f32 values as two terms of float type `elt` (mla.split_terms), the
  /// stored forms of hi = round(x) and lo = round(x - hi), the hi terms
  /// read back through storedToF32; that reading goes to `hiF32` if given.
  std::pair<SmallVector<Value>, SmallVector<Value>>
  roundedToTerms(OpBuilder &b, Location loc, ArrayRef<Value> xs, Type elt,
                 SmallVectorImpl<Value> *hiF32 = nullptr) const {
    SmallVector<Value> hi = roundedToStored(b, loc, xs, elt), rest;
    SmallVector<Value> hiRead = storedToF32(b, loc, hi, elt);
    for (auto [x, h] : llvm::zip(xs, hiRead))
      rest.push_back(arith::SubFOp::create(b, loc, x, h));
    if (hiF32)
      hiF32->assign(hiRead.begin(), hiRead.end());
    return {hi, roundedToStored(b, loc, rest, elt)};
  }
  /// `v` reduced with `combine` over each group of 16 consecutive lanes
  /// (lane bits 0-3), every lane of the group getting the result, with the
  /// chip's lane-permute modifiers; std::nullopt where shuffles do it
  /// (the caller's XOR butterfly). `combine` must be commutative and
  /// associative (max, sum), and every lane of the group active (the row
  /// reductions run in the program's uniform control flow).
  virtual std::optional<Value>
  reduce16Lanes(OpBuilder &b, Location loc, Value v,
                function_ref<Value(Value, Value)> combine) const {
    return std::nullopt;
  }
  /// ChipTuning::rescaleSlackLog2: a workgroup barrier that also returns
  /// whether `pred` (i1) held in any thread of the program (i1, the same
  /// in every thread); null where the chip has no such barrier.
  virtual Value barrierAny(OpBuilder &b, Location loc, Value pred) const {
    return Value();
  }
  /// ldsDmaLoads16: a workgroup barrier after which every wave sees the
  /// shared-memory writes (not the global ones) of every wave before it,
  /// and which does not wait for the LDS DMA loads in flight (the lowering
  /// waits for those itself: asyncWaitGroups). gpu.barrier's does.
  virtual void ldsOnlyBarrier(OpBuilder &b, Location loc) const;
  /// Attributes of a kernel function that ask the backend for an occupancy:
  /// `smemBytes` per program, `asyncCopies` when its KV loop double-buffers.
  virtual void kernelHints(gpu::GPUFuncOp func, int64_t smemBytes,
                           bool asyncCopies) const {}

  //--- capabilities (asked through ChipInfo facts first) -----------------//

  /// boundsCheckedLoads: a buffer resource of `numRecords` bytes from
  /// global address `base` (i64) whose loads past its size return zeros.
  virtual Value boundedBuffer(OpBuilder &b, Location loc, Value base,
                              Value numRecords) const;
  /// boundsCheckedLoads: 16 bytes at byte `offset` (i32) of buffer `rsrc`
  /// (boundedBuffer) as a vector of type `t`, zeros past the buffer's end.
  virtual Value boundedLoad16(OpBuilder &b, Location loc, Value rsrc,
                              Value offset, VectorType t) const;
  /// asyncTileCopy: a 16-byte global -> shared copy from global address
  /// `src` to shared address `dst` (both i64) that does not pass through
  /// registers; `srcBytes` (i32, may be null) of them are read, the rest
  /// zero-filled.
  virtual void asyncCopy16(OpBuilder &b, Location loc, Value dst, Value src,
                           Value srcBytes) const;
  /// ldsDmaLoads16: one wave's load of 16 bytes a lane from byte
  /// `offset` (i32) of buffer `rsrc` (boundedBuffer; zeros past its end)
  /// to LDS byte address `ldsBase` (i32, the same in every lane of the
  /// wave) + 16 x lane, not through registers. Completes like an
  /// asynchronous copy (asyncCommitGroup / asyncWaitGroups).
  /// `instOffset` (0 .. 4095) is added to both addresses by the
  /// instruction itself: consecutive loads share one `ldsBase`.
  virtual void ldsDmaLoad16(OpBuilder &b, Location loc, Value rsrc,
                            Value offset, Value ldsBase,
                            int64_t instOffset) const;
  /// ldsDmaLoads16: `v` (i32, the same in every lane of the wave) as a
  /// value the backend knows to be wave-uniform (held in a scalar
  /// register).
  virtual Value waveUniform(OpBuilder &b, Location loc, Value v) const;
  /// mxfp4Decode (not Software): the 8 e2m1 codes of `word` (i32; code n
  /// in nibble n, little-endian) times 2^(`scale` - 127) (`scale`: the
  /// e8m0 code as i32, 2 .. 252) as 8 bf16 values (vector<8 x i16>).
  virtual Value mxfp4WordToBf16(OpBuilder &b, Location loc, Value word,
                                Value scale) const;
  /// The 8 e2m1 codes of `word` (as mxfp4WordToBf16) as e4m3fn bytes (two
  /// i32, codes 0-3 and 4-7) through the magnitude table `lo` / `hi`
  /// (mxfp4E4m3Table: byte m = magnitude m's e4m3 byte), the sign bit set
  /// for negative codes. Shifts and masks here; sm_90 permutes bytes.
  virtual std::pair<Value, Value> mxfp4WordToE4m3(OpBuilder &b, Location loc,
                                                  Value word, Value lo,
                                                  Value hi) const;
  /// asyncTileCopy / ldsDmaLoads16: closes the group of this thread's
  /// copies issued so far.
  virtual void asyncCommitGroup(OpBuilder &b, Location loc) const;
  /// asyncTileCopy / ldsDmaLoads16: waits until at most `pending` groups
  /// are in flight (CDNA: 0 only, s_waitcnt vmcnt(0)).
  virtual void asyncWaitGroups(OpBuilder &b, Location loc,
                               int64_t pending) const;
  /// bulkTensorCopies: with `pred` true (one thread), initialises the
  /// mbarrier at shared address `mbar` (i64) for one arrival.
  virtual void mbarrierInit(OpBuilder &b, Location loc, Value mbar,
                            Value pred) const;
  /// bulkTensorCopies: with `pred` true, arrives on `mbar` expecting `bytes`
  /// of bulk copies in its current phase.
  virtual void mbarrierExpectBytes(OpBuilder &b, Location loc, Value mbar,
                                   int64_t bytes, Value pred) const;
  /// bulkTensorCopies: with `pred` true, sends the box of tensor map `map`
  /// (a generic pointer) at `coords` (i32, innermost first) to shared
  /// address `dst` (i64); the copy completes its bytes on `mbar`, its
  /// reads under L2 cache policy `policy` (l2ReadPolicy's; null: none).
  virtual void tensorTileCopy(OpBuilder &b, Location loc, Value dst, Value map,
                              ValueRange coords, Value mbar, Value pred,
                              Value policy) const;
  /// bulkTensorCopies: waits until the phase of `mbar` with parity `parity`
  /// (i32 0 / 1) has completed.
  virtual void mbarrierWait(OpBuilder &b, Location loc, Value mbar,
                            Value parity) const;
  /// MatrixInstr::aByLdmatrix: the A fragment of rows row..row+15, columns
  /// col..col+15 of shared-memory view `view` (lane l addresses row
  /// l % 16 and column half l / 16) in one ldmatrix.x4, as 8 stored
  /// elements of type `storage`.
  virtual SmallVector<Value> ldmatrixX4(OpBuilder &b, Location loc, Value view,
                                        Value row, Value col,
                                        Type storage) const;
  /// ChipTuning::wgmmaRegisterV: one ldmatrix.x4.trans of 16-bit words,
  /// this lane's row of matrix lane / 8 at shared address `addr` (i64)
  /// plus `offset` bytes (added by the instruction, so that the constant
  /// offsets of a KV loop's reads do not become registers each); matrix
  /// q's register (i32, its low half first) holds element (row
  /// 2 (lane mod 4), column lane / 4) and the next row's.
  virtual SmallVector<Value> ldmatrixX4Trans(OpBuilder &b, Location loc,
                                             Value addr, int64_t offset) const;
  /// ChipTuning::kvEvictFirstTiles: the L2 cache policy (i64) of a
  /// read-once stream, evict first where `evictFirst` (i1) holds, else
  /// normal; null where the chip's loads take no policy.
  virtual Value l2ReadPolicy(OpBuilder &b, Location loc,
                             Value evictFirst) const;
  /// A global load of `type` (16 bytes) at generic address `addr` (i64)
  /// plus `offset` bytes (added by the instruction, as ldmatrixX4Trans's)
  /// under `policy` (l2ReadPolicy's).
  virtual Value globalLoadWithPolicy(OpBuilder &b, Location loc,
                                     VectorType type, Value addr,
                                     int64_t offset, Value policy) const;
  /// transposedLdsReads: the 64 / bits elements of `bits` bits (8 or 16)
  /// this lane receives from the transposing read whose 8 bytes it
  /// addresses at (row, col) of shared-memory view `view` (lane map:
  /// MatrixInstr.h, transposedReads), as a vector of i8 or i16. Every lane
  /// of the wave must be active.
  virtual Value transposedRead(OpBuilder &b, Location loc, Value view,
                               Value row, Value col, unsigned bits) const;
  /// MatrixInstr::smemOperands (sm_90a wgmma): orders this thread's
  /// earlier shared-memory writes (generic proxy: stores, cp.async) before
  /// reads by the tensor cores (async proxy); a barrier after it makes
  /// that every thread's (fence.proxy.async.shared::cta).
  virtual void asyncProxyFence(OpBuilder &b, Location loc) const;
  /// smemOperands: the accumulator registers' earlier writes complete
  /// before the next warpgroup MMAs read them (wgmma.fence).
  virtual void warpgroupFence(OpBuilder &b, Location loc) const;
  /// smemOperands: one warpgroup MMA `mi` with N = `n` (a multiple of 16):
  /// D = A B + `acc` (n / 2 f32 per thread, the instruction's register
  /// order), A and B in shared memory through 64-bit matrix descriptors
  /// (wgmmaDescriptor), A MN-major where `aMnMajor` (else K-major), B
  /// K-major. Asynchronous: the result is there after
  /// warpgroupCommitAndWait.
  virtual SmallVector<Value> warpgroupMma(OpBuilder &b, Location loc,
                                          const MatrixInstr *mi, int64_t n,
                                          Value descA, bool aMnMajor,
                                          Value descB,
                                          ArrayRef<Value> acc) const;
  /// MatrixInstr::aRegisters: the same MMA with A from this thread's
  /// registers, `a` its 32-bit registers of one K step in the
  /// instruction's order (aRegisters, two 16-bit elements each), B
  /// K-major through descriptor `descB` plus `descBOffset` (added with
  /// the instruction, so that a loop-invariant descriptor per step is not
  /// hoisted out of the KV loop into a register each). The registers must
  /// stay unchanged until the MMA's group has been waited for.
  virtual SmallVector<Value>
  warpgroupMmaRegisterA(OpBuilder &b, Location loc, const MatrixInstr *mi,
                        int64_t n, ArrayRef<Value> a, Value descB,
                        int64_t descBOffset, ArrayRef<Value> acc) const;
  /// smemOperands with an fp8 form (whose operands are K-major only): the
  /// bytes of i32 `lo` (0-3) and `hi` (4-7) picked by the nibbles of i32
  /// `selector`, output byte i by nibble i (prmt), for transposing fp8
  /// tiles in registers.
  virtual Value bytePermute(OpBuilder &b, Location loc, Value lo, Value hi,
                            Value selector) const;
  /// smemOperands: closes the group of warpgroup MMAs issued so far and
  /// waits until at most `pending` groups are in flight.
  virtual void warpgroupCommitAndWait(OpBuilder &b, Location loc,
                                      int64_t pending) const;
  /// dependentLaunch: wait until the kernel this one was launched as the
  /// dependent of has finished and its stores are visible.
  virtual void waitForPrerequisiteGrid(OpBuilder &b, Location loc) const;
  /// dependentLaunch: allow this kernel's dependents to be scheduled.
  virtual void launchDependents(OpBuilder &b, Location loc) const;
  /// clusterPrograms: the programs of this program's thread-block cluster
  /// (1 when launched without clusters), as an index.
  virtual Value clusterPrograms(OpBuilder &b, Location loc) const;
  /// clusterPrograms: waits for every thread of the cluster; global stores
  /// before it are visible to the cluster's loads after it.
  virtual void clusterBarrier(OpBuilder &b, Location loc) const;

protected:
  TargetInfo(const ChipInfo &chip, const MatrixInstr *mma)
      : chip(chip), mma(mma) {}
  /// An f32 -> f32 LLVM intrinsic `name` of `x` (the targets' exp2 / log2).
  static Value unaryF32Intrinsic(OpBuilder &b, Location loc, StringRef name,
                                 Value x);
  /// Aborts: the lowering asked for `what`, which this target lacks.
  [[noreturn]] void missing(StringRef what) const;
};

/// The vendor implementations (TargetCDNA.cpp, TargetSM90.cpp).
std::unique_ptr<TargetInfo> createCdnaTargetInfo(const ChipInfo &chip,
                                                 const MatrixInstr *mma);
std::unique_ptr<TargetInfo> createSm90TargetInfo(const ChipInfo &chip,
                                                 const MatrixInstr *mma);

} // namespace mlir::mla::gpulower

#endif // MLA_TRANSFORMS_GPU_TARGETINFO_H
