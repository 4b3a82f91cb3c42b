//===- TargetCDNA.cpp - the target interface for CDNA3 / CDNA4 ------------===//
//
// gfx942 (MI300X) and gfx950 (MI355X): MFMA through amdgpu.mfma, fp8
// conversions through amdgpu.ext_packed_fp8 / scaled_ext_packed /
// packed_trunc_2xfp8, buffer resources for bounds-checked loads
// (rocdl.make.buffer.rsrc, raw buffer loads), v_perm_b32, v_exp_f32 and
// v_log_f32, DPP row reductions, gfx950's transposing LDS reads
// (amdgpu.transpose_load). No asynchronous copies, ldmatrix or dependent
// launches: the chip descriptors say so, and the lowering asks them first.
//
//===----------------------------------------------------------------------===//
#include "TargetInfo.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"

namespace mlir::mla::gpulower {
namespace {

class CdnaTargetInfo final : public TargetInfo {
public:
  CdnaTargetInfo(const ChipInfo &chip, const MatrixInstr *mma)
      : TargetInfo(chip, mma) {}

  Attribute moduleTarget(MLIRContext *ctx) const override {
    return ROCDL::ROCDLTargetAttr::get(ctx, /*optLevel=*/3, "amdgcn-amd-amdhsa",
                                       chip.name);
  }

  Value exp2(OpBuilder &b, Location loc, Value x) const override {
    return unaryF32Intrinsic(b, loc, "llvm.amdgcn.exp2.f32", x);
  }
  Value log2(OpBuilder &b, Location loc, Value x) const override {
    return unaryF32Intrinsic(b, loc, "llvm.amdgcn.log.f32", x);
  }

  /// One v_perm_b32 (llvm.amdgcn.perm: src0 holds bytes 4-7; the AMDGPU
  /// backend would otherwise build byte shuffles from shifts).
  Value bytePerm(OpBuilder &b, Location loc, Value lo, Value hi,
                 std::array<int64_t, 4> sel) const override {
    int64_t code = sel[0] | sel[1] << 8 | sel[2] << 16 | sel[3] << 24;
    return LLVM::CallIntrinsicOp::create(
               b, loc, b.getI32Type(), b.getStringAttr("llvm.amdgcn.perm"),
               ValueRange{hi, lo, cstI32(b, loc, code)})
        .getResult(0);
  }

  /// MFMA takes the lane's operand elements as one vector, element i in
  /// position i.
  SmallVector<Value> matrixOp(OpBuilder &b, Location loc, const MatrixInstr *mi,
                              Type elt, ArrayRef<Value> a, ArrayRef<Value> bv,
                              ArrayRef<Value> c) const override {
    Type f32 = b.getF32Type();
    auto operand = [&](ArrayRef<Value> elems) -> Value {
      int64_t n = elems.size();
      Value v = vector::FromElementsOp::create(
          b, loc, VectorType::get({n}, storageType(elt)), elems);
      return vector::BitCastOp::create(b, loc, VectorType::get({n}, elt), v);
    };
    auto accT = VectorType::get({static_cast<int64_t>(c.size())}, f32);
    Value acc = vector::FromElementsOp::create(b, loc, accT, c);
    auto i32 = [&](int64_t v) { return b.getI32IntegerAttr(v); };
    Value d =
        amdgpu::MFMAOp::create(b, loc, accT, i32(mi->m), i32(mi->n), i32(mi->k),
                               i32(1), operand(a), operand(bv), acc);
    SmallVector<Value> out;
    for (size_t i = 0; i < c.size(); ++i)
      out.push_back(
          vector::ExtractOp::create(b, loc, d, ArrayRef<int64_t>{(int64_t)i}));
    return out;
  }

  /// DPP: quad_perm [1,0,3,2] and [2,3,0,1] (partners at lane XOR 1, 2),
  /// then row_half_mirror (lane i with 7 - i: the other quad of its 8)
  /// and row_mirror (i with 15 - i: the other 8 of its 16), each a VALU
  /// source modifier where ds_swizzle was an LDS round trip.
  /// bound_ctrl: DPP's "old" operand is then not needed, and the backend
  /// folds the permute into an add (v_add_f32_dpp); with "old" given,
  /// each step took an extra move (gfx950 fp8_qp8: 20.9 against 20.2
  /// wave-instructions per KV token). Every partner lane is in the row
  /// and active.
  std::optional<Value>
  reduce16Lanes(OpBuilder &b, Location loc, Value v,
                function_ref<Value(Value, Value)> combine) const override {
    auto quad = [&](std::array<int32_t, 4> p) -> Attribute {
      SmallVector<Attribute> a;
      for (int32_t x : p)
        a.push_back(b.getI32IntegerAttr(x));
      return b.getArrayAttr(a);
    };
    struct Step {
      amdgpu::DPPPerm kind;
      Attribute arg;
    };
    Step steps[] = {{amdgpu::DPPPerm::quad_perm, quad({1, 0, 3, 2})},
                    {amdgpu::DPPPerm::quad_perm, quad({2, 3, 0, 1})},
                    {amdgpu::DPPPerm::row_half_mirror, Attribute()},
                    {amdgpu::DPPPerm::row_mirror, Attribute()}};
    for (const Step &s : steps) {
      Value moved = amdgpu::DPPOp::create(b, loc, v.getType(), v, v, s.kind,
                                          s.arg, 0xf, 0xf, true);
      v = combine(v, moved);
    }
    return v;
  }

  /// v_cvt_f32_fp8, then the f32's operand bits.
  std::optional<Value> fp8ToOperand(OpBuilder &b, Location loc, Value stored,
                                    Type elt, Type op) const override {
    if (chip.facts.fp8Decode == Fp8Decode::Software)
      return std::nullopt;
    Value f8 = arith::BitcastOp::create(b, loc, elt, stored);
    Value f =
        amdgpu::ExtPackedFp8Op::create(b, loc, b.getF32Type(), f8, /*index=*/0);
    return f32ToOperand(b, loc, f, op);
  }

  std::optional<std::pair<Value, Value>>
  fp8PairToOperand(OpBuilder &b, Location loc, Value pair, Type elt,
                   Type op) const override {
    if (chip.facts.fp8Decode == Fp8Decode::Software)
      return std::nullopt;
    Value f8 =
        vector::BitCastOp::create(b, loc, VectorType::get({2}, elt), pair);
    auto extract = [&](Value v, int64_t i) {
      return vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i})
          .getResult();
    };
    if (chip.facts.fp8Decode == Fp8Decode::PackedToBf16) {
      // v_cvt_scalef32_pk_{bf16,f16}_fp8 (scale 1).
      Value h = amdgpu::ScaledExtPackedOp::create(
          b, loc, VectorType::get({2}, op), f8, cstF32(b, loc, 1.0f),
          /*index=*/0);
      Value bits = vector::BitCastOp::create(
          b, loc, VectorType::get({2}, b.getI16Type()), h);
      return std::make_pair(extract(bits, 0), extract(bits, 1));
    }
    // v_cvt_pk_f32_fp8.
    Value f = amdgpu::ExtPackedFp8Op::create(
        b, loc, VectorType::get({2}, b.getF32Type()), f8,
        /*index=*/0);
    return std::make_pair(f32ToOperand(b, loc, extract(f, 0), op),
                          f32ToOperand(b, loc, extract(f, 1), op));
  }

  /// ScaledPairConvert (CDNA4): v_cvt_scalef32_pk_bf16_fp4 through
  /// amdgpu.scaled_ext_packed, byte by byte; the scale is the f32 whose
  /// exponent field is the e8m0 code.
  /// ByteTables (CDNA3): v_perm_b32 lookups, one selector byte per output
  /// byte. The bf16 values of the 8 magnitudes, with the scale added to
  /// their exponent fields (magnitude 0 left 0), are 16 bytes; their low
  /// bytes and high bytes are two 8-byte tables. The even codes' and the
  /// odd codes' magnitudes, one a byte, select into both; the sign bits are
  /// or-ed into the high bytes; four perms make (v0, v2), (v4, v6),
  /// (v1, v3), (v5, v7) and four more the pairs in order.
  Value mxfp4WordToBf16(OpBuilder &b, Location loc, Value word,
                        Value scale) const override {
    Type i32 = b.getI32Type();
    if (chip.facts.mxfp4Decode == Mxfp4Decode::ByteTables) {
      auto c = [&](uint32_t v) { return cstI32(b, loc, int64_t(int32_t(v))); };
      auto perm = [&](Value lo, Value hi, Value sel) -> Value {
        return LLVM::CallIntrinsicOp::create(
                   b, loc, i32, b.getStringAttr("llvm.amdgcn.perm"),
                   ValueRange{hi, lo, sel})
            .getResult(0);
      };
      auto add = [&](Value x, Value y) -> Value {
        return arith::AddIOp::create(b, loc, x, y);
      };
      auto andc = [&](Value x, uint32_t m) -> Value {
        return arith::AndIOp::create(b, loc, x, c(m));
      };
      auto shift = [&](Value x, int64_t n) -> Value {
        return n > 0 ? arith::ShLIOp::create(b, loc, x, cstI32(b, loc, n))
                           .getResult()
                     : arith::ShRUIOp::create(b, loc, x, cstI32(b, loc, -n))
                           .getResult();
      };
      // (scale - 127) << 7 in both 16-bit halves: no half carries into the
      // other (the sums stay in 0 .. 0x7F7F for scales 2 .. 252).
      Value a = arith::SubIOp::create(b, loc, shift(scale, 7), c(127 << 7));
      Value a2 = arith::MulIOp::create(b, loc, a, c(0x00010001));
      Value t0 = add(c(0x3F000000), shift(a, 16)), t1 = add(c(0x3FC03F80), a2),
            t2 = add(c(0x40404000), a2), t3 = add(c(0x40C04080), a2);
      Value lo0 = perm(t0, t1, c(0x06040200)),
            lo1 = perm(t2, t3, c(0x06040200));
      Value hi0 = perm(t0, t1, c(0x07050301)),
            hi1 = perm(t2, t3, c(0x07050301));
      Value even = andc(word, 0x07070707),
            odd = andc(shift(word, -4), 0x07070707);
      Value loE = perm(lo0, lo1, even), loO = perm(lo0, lo1, odd);
      Value hiE = arith::OrIOp::create(b, loc, perm(hi0, hi1, even),
                                       andc(shift(word, 4), 0x80808080));
      Value hiO = arith::OrIOp::create(b, loc, perm(hi0, hi1, odd),
                                       andc(word, 0x80808080));
      // (v0, v2), (v4, v6) from the even bytes, (v1, v3), (v5, v7) from
      // the odd ones, then the pairs in order.
      Value e01 = perm(loE, hiE, c(0x05010400)),
            e23 = perm(loE, hiE, c(0x07030602));
      Value o01 = perm(loO, hiO, c(0x05010400)),
            o23 = perm(loO, hiO, c(0x07030602));
      return bf16PairsToVector8(
          b, loc,
          {perm(e01, o01, c(0x05040100)), perm(e01, o01, c(0x07060302)),
           perm(e23, o23, c(0x05040100)), perm(e23, o23, c(0x07060302))});
    }
    Value codes = vector::BitCastOp::create(
        b, loc, VectorType::get({8}, b.getType<Float4E2M1FNType>()),
        vector::BroadcastOp::create(b, loc, VectorType::get({1}, i32), word));
    Value f = arith::BitcastOp::create(
        b, loc, b.getF32Type(),
        arith::ShLIOp::create(b, loc, scale, cstI32(b, loc, 23)));
    SmallVector<Value> pairs;
    for (int64_t byte = 0; byte < 4; ++byte) {
      Value pair = amdgpu::ScaledExtPackedOp::create(
          b, loc, VectorType::get({2}, b.getBF16Type()), codes, f, byte);
      pairs.push_back(vector::ExtractOp::create(
          b, loc,
          vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), pair),
          ArrayRef<int64_t>{0}));
    }
    return bf16PairsToVector8(b, loc, pairs);
  }

  /// v_cvt_pk_fp8_f32 through amdgpu.packed_trunc_2xfp8, after a clamp to
  /// the largest finite value (the software rounding saturates; the
  /// instruction would give NaN past it; NaN stays NaN through the clamp).
  std::optional<std::array<Value, 2>> f32PairToFp8(OpBuilder &b, Location loc,
                                                   Value x, Value y,
                                                   Type elt) const override {
    if (!chip.facts.fp8PairEncode)
      return std::nullopt;
    float maxVal = isa<Float8E4M3FNUZType>(elt) ? 240.0f : 448.0f;
    auto clamp = [&](Value v) -> Value {
      v = arith::MaximumFOp::create(b, loc, v, cstF32(b, loc, -maxVal));
      return arith::MinimumFOp::create(b, loc, v, cstF32(b, loc, maxVal));
    };
    Value packed = amdgpu::PackedTrunc2xFp8Op::create(
        b, loc, VectorType::get({4}, elt), clamp(x), clamp(y), /*wordIndex=*/0,
        /*existing=*/Value());
    Value bytes = vector::BitCastOp::create(
        b, loc, VectorType::get({4}, b.getI8Type()), packed);
    return std::array<Value, 2>{
        vector::ExtractOp::create(b, loc, bytes, ArrayRef<int64_t>{0})
            .getResult(),
        vector::ExtractOp::create(b, loc, bytes, ArrayRef<int64_t>{1})
            .getResult()};
  }

  /// Raw mode, stride 0, where the hardware checks every load's offset
  /// against num_records. The flag word is CDNA's: data format 32-bit /
  /// float (must be nonzero, ignored by raw loads), no swizzle, no
  /// thread-ID add.
  Value boundedBuffer(OpBuilder &b, Location loc, Value base,
                      Value numRecords) const override {
    auto global = LLVM::LLVMPointerType::get(b.getContext(), 1);
    auto rsrc = LLVM::LLVMPointerType::get(b.getContext(), 8);
    Value ptr = LLVM::IntToPtrOp::create(b, loc, global, base);
    Value stride = arith::ConstantOp::create(b, loc, b.getI16IntegerAttr(0));
    Value flags = arith::ConstantOp::create(
        b, loc, b.getI32IntegerAttr((7 << 12) | (4 << 15)));
    return ROCDL::MakeBufferRsrcOp::create(b, loc, rsrc, ptr, stride,
                                           numRecords, flags);
  }

  /// buffer_load_dwordx4.
  Value boundedLoad16(OpBuilder &b, Location loc, Value rsrc, Value offset,
                      VectorType t) const override {
    Value zero = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
    Value v = ROCDL::RawPtrBufferLoadOp::create(
        b, loc, VectorType::get({4}, b.getI32Type()), rsrc, offset, zero, zero,
        nullptr, nullptr, nullptr);
    return vector::BitCastOp::create(b, loc, t, v);
  }

  /// buffer_load_dwordx4 ... lds: M0 = `ldsBase` (LLVM reads the LDS
  /// pointer into M0, with v_readfirstlane where it cannot prove the value
  /// uniform: waveUniform makes it an SGPR value), the instruction offset
  /// `instOffset`.
  void ldsDmaLoad16(OpBuilder &b, Location loc, Value rsrc, Value offset,
                    Value ldsBase, int64_t instOffset) const override {
    auto lds = LLVM::LLVMPointerType::get(b.getContext(), 3);
    Value ptr = LLVM::IntToPtrOp::create(b, loc, lds, ldsBase);
    auto i32 = [&](int64_t v) {
      return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v))
          .getResult();
    };
    ROCDL::RawPtrBufferLoadLdsOp::create(
        b, loc, TypeRange{}, rsrc, ptr, i32(16), offset, i32(0),
        i32(instOffset), i32(0), nullptr, nullptr, nullptr);
  }
  /// v_readfirstlane_b32.
  Value waveUniform(OpBuilder &b, Location loc, Value v) const override {
    return ROCDL::ReadfirstlaneOp::create(b, loc, v.getType(), v);
  }
  /// s_waitcnt lgkmcnt(0) and s_barrier between two compiler-only fences
  /// (syncscope "singlethread": no memory access moves across them, and
  /// no wait is emitted for them). gpu.barrier's workgroup release fence
  /// would also wait for every LDS DMA load in flight (LLVM counts them as
  /// LDS writes): for the next KV tile at every barrier of a
  /// double-buffered KV loop.
  void ldsOnlyBarrier(OpBuilder &b, Location loc) const override {
    LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::seq_cst,
                          "singlethread");
    ROCDL::SWaitcntOp::create(b, loc, waitcntBits(/*vm=*/63, /*lgkm=*/0));
    ROCDL::SBarrierOp::create(b, loc);
    LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::seq_cst,
                          "singlethread");
  }
  /// LDS DMA loads complete in order on vmcnt: no groups to close.
  void asyncCommitGroup(OpBuilder &, Location) const override {}
  /// s_waitcnt vmcnt(0).
  void asyncWaitGroups(OpBuilder &b, Location loc,
                       int64_t pending) const override {
    if (pending != 0)
      missing("a wait for some of several LDS DMA groups");
    ROCDL::SWaitcntOp::create(b, loc, waitcntBits(/*vm=*/0, /*lgkm=*/15));
  }
  /// s_waitcnt's gfx9 immediate: vmcnt in bits 3-0 and 15-14, expcnt in
  /// 6-4 (never waited for here: 7), lgkmcnt in 11-8; a counter at its
  /// maximum (vm 63, lgkm 15) is not waited for.
  static int32_t waitcntBits(unsigned vm, unsigned lgkm) {
    return int32_t((vm & 0xf) | (vm >> 4 & 0x3) << 14 | 0x7 << 4 |
                   (lgkm & 0xf) << 8);
  }

  /// Kernels run with the mode register's IEEE bit clear
  /// ("amdgpu-ieee"="false", `.amdhsa_ieee_mode 0`). With it set, min / max
  /// quiet signaling NaNs, so LLVM first quiets every operand of a maxnum
  /// it cannot prove NaN-free (a v_max_f32 x, x each): the row maxima paid
  /// two extra instructions per step and no DPP folding. The kernels never
  /// rely on signaling NaNs being quieted (a NaN score reaches the output
  /// through its probability either way, ChipTuning::rowMaxIgnoresNaN).
  void kernelHints(gpu::GPUFuncOp func, int64_t, bool) const override {
    Builder b(func.getContext());
    func->setAttr(
        "passthrough",
        b.getArrayAttr({b.getArrayAttr(
            {b.getStringAttr("amdgpu-ieee"), b.getStringAttr("false")})}));
  }

  /// ds_read_b64_tr_b8 / _b16 through amdgpu.transpose_load (gfx950 only:
  /// the chip fact transposedLdsReads is set for it alone).
  Value transposedRead(OpBuilder &b, Location loc, Value view, Value row,
                       Value col, unsigned bits) const override {
    return amdgpu::TransposeLoadOp::create(
        b, loc, VectorType::get({64 / bits}, b.getIntegerType(bits)), view,
        ValueRange{row, col});
  }
};

} // namespace

std::unique_ptr<TargetInfo> createCdnaTargetInfo(const ChipInfo &chip,
                                                 const MatrixInstr *mma) {
  return std::make_unique<CdnaTargetInfo>(chip, mma);
}

} // namespace mlir::mla::gpulower
