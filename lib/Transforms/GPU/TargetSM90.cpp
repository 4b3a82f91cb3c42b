//===- TargetSM90.cpp - the target interface for sm_90 --------------------===//
//
// Hopper (H100 / H200) through NVVM: mma.sync, ldmatrix.x4 (nvgpu),
// cp.async with groups, griddepcontrol (programmatic dependent launch),
// cluster barriers (the single-launch combine),
// cvt.rn.f16x2.e4m3x2, prmt, ex2.approx / lg2.approx. No bounds-checked
// buffer loads: the chip descriptor says so, and the lowering asks it first.
//
//===----------------------------------------------------------------------===//
#include "TargetInfo.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

namespace mlir::mla::gpulower {
namespace {

/// The prmt nibble selectors of an e2m1 word's 8 codes (code n in nibble
/// n): the magnitudes (0-7, a byte of an 8-byte table each) and the sign
/// bits shifted to bit 0 of their nibbles (0 or 1), codes 0-3 in the low
/// 16 bits (shr16 brings codes 4-7 there).
std::pair<Value, Value> e2m1Selectors(OpBuilder &b, Location loc, Value word) {
  return {arith::AndIOp::create(b, loc, word, cstI32(b, loc, 0x77777777)),
          arith::AndIOp::create(
              b, loc, arith::ShRUIOp::create(b, loc, word, cstI32(b, loc, 3)),
              cstI32(b, loc, 0x11111111))};
}
Value shr16(OpBuilder &b, Location loc, Value v) {
  return arith::ShRUIOp::create(b, loc, v, cstI32(b, loc, 16));
}

/// L2 cache policies (CUTLASS's CacheHintSm90: what
/// createpolicy.fractional makes for fraction 1).
constexpr int64_t kL2EvictFirst = 0x12F0000000000000LL;
constexpr int64_t kL2EvictNormal = 0x1000000000000000LL;

/// Inline PTX with side effects (LLVM keeps it where the lowering put it)
/// whose `n` results of type `t` are $0 .. $n-1, `operands` after them.
SmallVector<Value> inlinePtx(OpBuilder &b, Location loc, Type t, int64_t n,
                             ValueRange operands, StringRef ptx,
                             StringRef constraints) {
  auto st =
      LLVM::LLVMStructType::getLiteral(b.getContext(), SmallVector<Type>(n, t));
  auto asmOp = LLVM::InlineAsmOp::create(
      b, loc, TypeRange{st}, operands, ptx, constraints,
      /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  SmallVector<Value> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0),
                                               ArrayRef<int64_t>{i}));
  return out;
}

class Sm90TargetInfo final : public TargetInfo {
public:
  Sm90TargetInfo(const ChipInfo &chip, const MatrixInstr *mma)
      : TargetInfo(chip, mma) {}

  Attribute moduleTarget(MLIRContext *ctx) const override {
    return NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/3, "nvptx64-nvidia-cuda",
                                     chip.name);
  }

  Value exp2(OpBuilder &b, Location loc, Value x) const override {
    return unaryF32Intrinsic(b, loc, "llvm.nvvm.ex2.approx.ftz.f", x);
  }
  Value log2(OpBuilder &b, Location loc, Value x) const override {
    return unaryF32Intrinsic(b, loc, "llvm.nvvm.lg2.approx.ftz.f", x);
  }

  /// One prmt.b32, from a 4-byte vector shuffle (which NVPTX selects as
  /// prmt).
  Value bytePerm(OpBuilder &b, Location loc, Value lo, Value hi,
                 std::array<int64_t, 4> sel) const override {
    auto v4 = VectorType::get({4}, b.getI8Type());
    Value v = vector::ShuffleOp::create(b, loc, bitcastToVector(b, loc, lo, v4),
                                        bitcastToVector(b, loc, hi, v4), sel);
    Value w = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI32Type()), v);
    return vector::ExtractOp::create(b, loc, w, ArrayRef<int64_t>{0});
  }

  void asyncProxyFence(OpBuilder &b, Location loc) const override {
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  }
  // bar.red.or.pred: the CTA barrier that ORs a predicate over its
  // threads.
  Value barrierAny(OpBuilder &b, Location loc,
                   Value pred) const override {
    Value p32 = arith::ExtUIOp::create(b, loc, b.getI32Type(), pred);
    auto bar = NVVM::BarrierOp::create(
        b, loc, b.getI32Type(), /*barrierId=*/Value(),
        /*numberOfThreads=*/Value(),
        NVVM::BarrierReductionAttr::get(b.getContext(),
                                        NVVM::BarrierReduction::OR),
        p32);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                 bar.getRes(), cstI32(b, loc, 0));
  }
  void warpgroupFence(OpBuilder &b, Location loc) const override {
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
  }
  /// nvvm.wgmma.mma_async on a struct of the accumulators. Its layoutA
  /// `row` is K-major A (imm-trans-a 0), `col` MN-major (1); layoutB `col`
  /// is K-major B (imm-trans-b 0).
  SmallVector<Value> warpgroupMma(OpBuilder &b, Location loc,
                                  const MatrixInstr *mi, int64_t n, Value descA,
                                  bool aMnMajor, Value descB,
                                  ArrayRef<Value> acc) const override {
    assert(mi->smemOperands && int64_t(acc.size()) == n / 2);
    Type f32 = b.getF32Type();
    auto st = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(acc.size(), f32));
    Value s = LLVM::PoisonOp::create(b, loc, st);
    for (auto [i, v] : llvm::enumerate(acc))
      s = LLVM::InsertValueOp::create(b, loc, s, v,
                                      ArrayRef<int64_t>{int64_t(i)});
    NVVM::WGMMATypes ty = mi->abType == MatrixElem::F16 ? NVVM::WGMMATypes::f16
                          : mi->abType == MatrixElem::F8E4M3FN
                              ? NVVM::WGMMATypes::e4m3
                              : NVVM::WGMMATypes::bf16;
    Value d = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, st, s, descA, descB,
        NVVM::MMAShapeAttr::get(b.getContext(), 64, n, mi->k), ty, ty,
        NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
        aMnMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        NVVM::MMALayout::col, NVVM::MMAIntOverflowAttr());
    SmallVector<Value> out;
    for (int64_t i = 0; i < int64_t(acc.size()); ++i)
      out.push_back(
          LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{i}));
    return out;
  }
  /// MLIR 22's nvvm.wgmma.mma_async takes A through a descriptor only, so
  /// the register form is the inline PTX that op itself lowers to, with A
  /// as four 32-bit registers: D (tied to the accumulators), A, B's
  /// descriptor (plus the offset, added in the block), scale-d = 1,
  /// scale-a = scale-b = 1, B K-major (PTX ISA, wgmma.mma_async, "register
  /// A" form; the operand order and the `setp` for scale-d are the
  /// upstream op's).
  SmallVector<Value> warpgroupMmaRegisterA(OpBuilder &b, Location loc,
                                           const MatrixInstr *mi, int64_t n,
                                           ArrayRef<Value> a, Value descB,
                                           int64_t descBOffset,
                                           ArrayRef<Value> acc) const override {
    assert(!mi->aRegisters.laneBases.empty() && a.size() == 4 &&
           int64_t(acc.size()) == n / 2);
    int64_t nd = acc.size();
    std::string ptx;
    llvm::raw_string_ostream os(ptx);
    StringRef ty = mi->abType == MatrixElem::F16 ? "f16" : "bf16";
    os << "{\n.reg .pred p;\n.reg .b64 desc;\nsetp.ne.b32 p, 1, 0;\n"
       << "add.s64 desc, $" << nd + 4 << ", " << descBOffset << ";\n"
       << "wgmma.mma_async.sync.aligned.m64n" << n << "k" << mi->k << ".f32."
       << ty << "." << ty << " {";
    for (int64_t i = 0; i < nd; ++i)
      os << (i ? ", " : "") << "$" << i;
    os << "}, {";
    for (int64_t i = 0; i < 4; ++i)
      os << (i ? ", " : "") << "$" << nd + i;
    os << "}, desc, p, 1, 1, 0;\n}";
    std::string constraints;
    for (int64_t i = 0; i < nd; ++i)
      constraints += "=f,";
    for (int64_t i = 0; i < 4; ++i)
      constraints += "r,";
    constraints += "l";
    for (int64_t i = 0; i < nd; ++i)
      constraints += "," + std::to_string(i);
    SmallVector<Value> operands(a);
    operands.push_back(descB);
    operands.append(acc.begin(), acc.end());
    return inlinePtx(b, loc, b.getF32Type(), nd, operands, ptx, constraints);
  }
  Value bytePermute(OpBuilder &b, Location loc, Value lo, Value hi,
                    Value selector) const override {
    return NVVM::PermuteOp::create(b, loc, b.getI32Type(), lo, hi, selector,
                                   NVVM::PermuteMode::DEFAULT);
  }
  void warpgroupCommitAndWait(OpBuilder &b, Location loc,
                              int64_t pending) const override {
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, pending);
  }

  /// mma.sync takes bf16 / f16 pairs packed in 32-bit registers, element
  /// 2r in the low half of register r.
  SmallVector<Value> matrixOp(OpBuilder &b, Location loc, const MatrixInstr *mi,
                              Type elt, ArrayRef<Value> a, ArrayRef<Value> bv,
                              ArrayRef<Value> c) const override {
    Type f32 = b.getF32Type();
    auto pack = [&](ArrayRef<Value> elems) {
      SmallVector<Value> regs;
      if (elt.isF16()) { // NVVM spells f16 registers vector<2 x f16>
        for (size_t i = 0; i + 1 < elems.size(); i += 2) {
          Value v = vector::FromElementsOp::create(
              b, loc, VectorType::get({2}, b.getI16Type()),
              ValueRange{elems[i], elems[i + 1]});
          regs.push_back(vector::BitCastOp::create(
              b, loc, VectorType::get({2}, b.getF16Type()), v));
        }
        return regs;
      }
      for (size_t i = 0; i + 1 < elems.size(); i += 2) {
        Value lo = arith::ExtUIOp::create(b, loc, b.getI32Type(), elems[i]);
        Value hi = arith::ExtUIOp::create(b, loc, b.getI32Type(), elems[i + 1]);
        hi = arith::ShLIOp::create(b, loc, hi, cstI32(b, loc, 16));
        regs.push_back(arith::OrIOp::create(b, loc, lo, hi));
      }
      return regs;
    };
    auto resT = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(c.size(), f32));
    assert((elt.isBF16() || elt.isF16()) &&
           "mma.sync takes bf16 or f16 operands here");
    NVVM::MMATypes ty =
        elt.isF16() ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
    auto op = NVVM::MmaOp::create(
        b, loc, resT, pack(a), pack(bv), c, {mi->m, mi->n, mi->k}, std::nullopt,
        std::nullopt, std::array<NVVM::MMATypes, 2>{ty, ty},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> d;
    for (size_t i = 0; i < c.size(); ++i)
      d.push_back(LLVM::ExtractValueOp::create(b, loc, op,
                                               ArrayRef<int64_t>{(int64_t)i}));
    return d;
  }

  /// Two e4m3 codes packed in an i16 (low byte first) through
  /// cvt.rn.f16x2.e4m3x2: as is for an f16 operand, else widened and cut to
  /// bf16 (exact).
  static std::pair<Value, Value> f16PairToOperand(OpBuilder &b, Location loc,
                                                  Value packed, Type op) {
    Value h2 =
        LLVM::CallIntrinsicOp::create(
            b, loc, VectorType::get({2}, b.getF16Type()),
            b.getStringAttr("llvm.nvvm.e4m3x2.to.f16x2.rn"), ValueRange{packed})
            .getResult(0);
    if (op.isF16()) {
      Value bits = vector::BitCastOp::create(
          b, loc, VectorType::get({2}, b.getI16Type()), h2);
      return {vector::ExtractOp::create(b, loc, bits, ArrayRef<int64_t>{0}),
              vector::ExtractOp::create(b, loc, bits, ArrayRef<int64_t>{1})};
    }
    auto half = [&](int64_t i) {
      Value h = vector::ExtractOp::create(b, loc, h2, ArrayRef<int64_t>{i});
      return f32HighHalf(b, loc,
                         arith::ExtFOp::create(b, loc, b.getF32Type(), h));
    };
    return {half(0), half(1)};
  }

  std::optional<Value> fp8ToOperand(OpBuilder &b, Location loc, Value stored,
                                    Type, Type op) const override {
    if (chip.facts.fp8Decode != Fp8Decode::PackedToF16)
      return std::nullopt;
    return f16PairToOperand(
               b, loc, arith::ExtUIOp::create(b, loc, b.getI16Type(), stored),
               op)
        .first;
  }

  std::optional<std::pair<Value, Value>>
  fp8PairToOperand(OpBuilder &b, Location loc, Value pair, Type,
                   Type op) const override {
    if (chip.facts.fp8Decode != Fp8Decode::PackedToF16)
      return std::nullopt;
    Value w = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI16Type()), pair);
    return f16PairToOperand(
        b, loc, vector::ExtractOp::create(b, loc, w, ArrayRef<int64_t>{0}), op);
  }

  /// Two prmt on the magnitudes' nibble selectors (0-7: bytes of the
  /// table) and one on the sign bits shifted to bit 0 of their nibbles
  /// (selecting 0x00 or 0x80) for every 4 codes.
  std::pair<Value, Value> mxfp4WordToE4m3(OpBuilder &b, Location loc,
                                          Value word, Value lo,
                                          Value hi) const override {
    auto [mag, sgn] = e2m1Selectors(b, loc, word);
    Value out[2];
    for (int64_t half = 0; half < 2; ++half) {
      Value m = half ? shr16(b, loc, mag) : mag,
            s = half ? shr16(b, loc, sgn) : sgn;
      out[half] =
          arith::OrIOp::create(b, loc, bytePermute(b, loc, lo, hi, m),
                               bytePermute(b, loc, cstI32(b, loc, 0x00008000),
                                           cstI32(b, loc, 0), s));
    }
    return {out[0], out[1]};
  }

  /// No e2m1 conversion before sm_100: byte tables. The bf16 bytes of the
  /// 8 e2m1 magnitudes (0, 0.5, 1, 1.5, 2, 3, 4, 6) are two 8-byte tables
  /// (low and high bytes); a prmt whose selector is 4 of the word's
  /// magnitude nibbles picks 4 values' low bytes, another their high
  /// bytes, a third (on the sign bits, shifted to bit 0 of their nibbles)
  /// the sign bytes 0x00 / 0x80; two more interleave low and high bytes
  /// into bf16 pairs; one mul.rn.bf16x2 a pair by 2^(scale - 127) then
  /// gives the value, exact (scale 2 .. 252: normal products).
  Value mxfp4WordToBf16(OpBuilder &b, Location loc, Value word,
                        Value scale) const override {
    Type i32 = b.getI32Type();
    auto c = [&](uint32_t v) { return cstI32(b, loc, int64_t(int32_t(v))); };
    auto prmt = [&](Value lo, Value hi, Value sel) {
      return bytePermute(b, loc, lo, hi, sel);
    };
    auto [mag, sgn] = e2m1Selectors(b, loc, word);
    // 2^(scale - 127) as a bf16 pair: the code in both exponent fields.
    auto pairT = VectorType::get({2}, b.getBF16Type());
    Value mul = vector::BitCastOp::create(
        b, loc, pairT,
        vector::BroadcastOp::create(
            b, loc, VectorType::get({1}, i32),
            arith::MulIOp::create(b, loc, scale, c(0x00800080))));
    SmallVector<Value> pairs;
    for (int64_t half = 0; half < 2; ++half) {
      Value m = half ? shr16(b, loc, mag) : mag,
            s = half ? shr16(b, loc, sgn) : sgn;
      Value lo = prmt(c(0xC0800000), c(0xC0804000), m);
      Value hi =
          arith::OrIOp::create(b, loc, prmt(c(0x3F3F3F00), c(0x40404040), m),
                               prmt(c(0x00008000), c(0), s));
      for (uint32_t sel : {0x5140u, 0x7362u}) {
        Value v = vector::BitCastOp::create(
            b, loc, pairT,
            vector::BroadcastOp::create(b, loc, VectorType::get({1}, i32),
                                        prmt(lo, hi, c(sel))));
        v = arith::MulFOp::create(b, loc, v, mul);
        pairs.push_back(vector::ExtractOp::create(
            b, loc,
            vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), v),
            ArrayRef<int64_t>{0}));
      }
    }
    return bf16PairsToVector8(b, loc, pairs);
  }

  /// sm_90 has no f32 pair -> e4m3 pair instruction the lowering uses.
  /// cvt.rn.satfinite.e4m3x2.f32 (round to nearest even, saturating like
  /// the software rounding); its first operand lands in the high byte.
  std::optional<std::array<Value, 2>> f32PairToFp8(OpBuilder &b, Location loc,
                                                   Value x, Value y,
                                                   Type elt) const override {
    if (!chip.facts.fp8PairEncode || !isa<Float8E4M3FNType>(elt))
      return std::nullopt;
    Value pair = LLVM::CallIntrinsicOp::create(
                     b, loc, b.getI16Type(),
                     b.getStringAttr("llvm.nvvm.ff.to.e4m3x2.rn"),
                     ValueRange{y, x})
                     .getResult(0);
    Type i8 = b.getI8Type();
    return std::array<Value, 2>{
        arith::TruncIOp::create(b, loc, i8, pair).getResult(),
        arith::TruncIOp::create(
            b, loc, i8,
            arith::ShRUIOp::create(
                b, loc, pair, arith::ConstantIntOp::create(b, loc, 8, 16)))
            .getResult()};
  }

  /// With a double-buffered KV tile, registers should not cut occupancy
  /// below what shared memory allows: ask ptxas to fit that many programs
  /// per SM (nvvm.minctasm). It leaves room for 2 programs of 8 warps on
  /// sm_90, which 134 registers per thread would halve (measured: the hint
  /// costs 24 B of spills in the masked variant, nothing else).
  void kernelHints(gpu::GPUFuncOp func, int64_t smemBytes,
                   bool asyncCopies) const override {
    if (!asyncCopies)
      return;
    int64_t programs = chip.facts.sharedMemBytes / (smemBytes + 1024);
    if (programs >= 2)
      func->setAttr("nvvm.minctasm",
                    IntegerAttr::get(IntegerType::get(func.getContext(), 32),
                                     std::min<int64_t>(programs, 32)));
  }

  /// cp.async.cg.shared.global, 16 bytes.
  void asyncCopy16(OpBuilder &b, Location loc, Value dst, Value src,
                   Value srcBytes) const override {
    auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
    auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
    NVVM::CpAsyncOp::create(
        b, loc, LLVM::IntToPtrOp::create(b, loc, sharedPtr, dst),
        LLVM::IntToPtrOp::create(b, loc, globalPtr, src),
        b.getI32IntegerAttr(16),
        NVVM::LoadCacheModifierKindAttr::get(b.getContext(),
                                             NVVM::LoadCacheModifierKind::CG),
        srcBytes);
  }
  void asyncCommitGroup(OpBuilder &b, Location loc) const override {
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  }
  void asyncWaitGroups(OpBuilder &b, Location loc,
                       int64_t pending) const override {
    NVVM::CpAsyncWaitGroupOp::create(b, loc, pending);
  }

  // The tensor memory accelerator (bulkTensorCopies; chip facts give it
  // to sm_90a only, whose swizzled tiles are the layout it writes).
  static Value sharedPtr(OpBuilder &b, Location loc, Value addr) {
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), addr);
  }
  void mbarrierInit(OpBuilder &b, Location loc, Value mbar,
                    Value pred) const override {
    NVVM::MBarrierInitOp::create(b, loc, sharedPtr(b, loc, mbar),
                                 cstI32(b, loc, 1), pred);
  }
  void mbarrierExpectBytes(OpBuilder &b, Location loc, Value mbar,
                           int64_t bytes, Value pred) const override {
    NVVM::MBarrierArriveExpectTxOp::create(
        b, loc, Type(), sharedPtr(b, loc, mbar), cstI32(b, loc, bytes),
        NVVM::MemScopeKind::CTA, /*relaxed=*/false, pred);
  }
  /// cp.async.bulk.tensor.Nd.shared::cluster.global.tile: the program's own
  /// shared memory as a cluster address (also right inside a cluster).
  /// With `policy`: .L2::cache_hint (kvReadPolicy's choice; the bf16
  /// tile's copies carried the evict-first policy on every program from
  /// 2026-12-03, docs/PerformanceLog.md).
  void tensorTileCopy(OpBuilder &b, Location loc, Value dst, Value map,
                      ValueRange coords, Value mbar, Value pred,
                      Value policy) const override {
    Value cta = sharedPtr(b, loc, dst);
    Value cluster = LLVM::AddrSpaceCastOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 7), cta);
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, cluster, map, coords, sharedPtr(b, loc, mbar), ValueRange{},
        /*multicastMask=*/Value(), /*l2CacheHint=*/policy,
        NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
        /*group=*/NVVM::CTAGroupKindAttr(), pred);
  }
  /// mbarrier.try_wait.parity in a loop (the op's own lowering).
  void mbarrierWait(OpBuilder &b, Location loc, Value mbar,
                    Value parity) const override {
    NVVM::MBarrierTryWaitParityOp::create(b, loc, sharedPtr(b, loc, mbar),
                                          parity, cstI32(b, loc, 10000000));
  }

  SmallVector<Value> ldmatrixX4(OpBuilder &b, Location loc, Value view,
                                Value row, Value col,
                                Type storage) const override {
    Value m = nvgpu::LdMatrixOp::create(
        b, loc, VectorType::get({4, 2}, storage), view, ValueRange{row, col},
        /*transpose=*/false, /*numTiles=*/4);
    SmallVector<Value> out;
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t h = 0; h < 2; ++h)
        out.push_back(
            vector::ExtractOp::create(b, loc, m, ArrayRef<int64_t>{j, h}));
    return out;
  }

  /// Inline PTX, as warpgroupMmaRegisterA: MLIR 22's nvvm.ldmatrix takes
  /// the address as one operand, and LLVM hoisted each (base + constant)
  /// of the KV loop's 16 reads out of the loop into a 64-bit register of
  /// its own (the fp8 program: 255 registers and spills); here the
  /// instruction adds the constant ([addr+offset]).
  SmallVector<Value> ldmatrixX4Trans(OpBuilder &b, Location loc, Value addr,
                                     int64_t offset) const override {
    std::string ptx =
        "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0, $1, $2, $3}, "
        "[$4+" +
        std::to_string(offset) + "];";
    return inlinePtx(b, loc, b.getI32Type(), 4, addr, ptx, "=r,=r,=r,=r,l");
  }

  /// kL2EvictFirst or kL2EvictNormal. Evict first: the streamed KV lines
  /// become the L2's first victims, not the lines already there (after
  /// the benches' zeroing flush: dirty ones, whose write-back a call
  /// paid).
  Value l2ReadPolicy(OpBuilder &b, Location loc,
                     Value evictFirst) const override {
    auto c = [&](int64_t v) {
      return LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                      b.getI64IntegerAttr(v));
    };
    return arith::SelectOp::create(b, loc, evictFirst, c(kL2EvictFirst),
                                   c(kL2EvictNormal));
  }
  /// Inline PTX: LLVM 22's NVPTX back end has no load with a cache policy
  /// operand (it ignores !mem.cache_hint). The asm has side effects so
  /// that LLVM keeps it where the tile-ahead schedule put it.
  Value globalLoadWithPolicy(OpBuilder &b, Location loc, VectorType type,
                             Value addr, int64_t offset,
                             Value policy) const override {
    Type i32 = b.getI32Type();
    assert(type.getNumElements() *
                   type.getElementType().getIntOrFloatBitWidth() ==
               128 &&
           "16-byte loads");
    std::string ptx = "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, "
                      "[$4+" +
                      std::to_string(offset) + "], $5;";
    SmallVector<Value> words = inlinePtx(
        b, loc, i32, 4, ValueRange{addr, policy}, ptx, "=r,=r,=r,=r,l,l");
    Value v = vector::FromElementsOp::create(b, loc, VectorType::get({4}, i32),
                                             words);
    return vector::BitCastOp::create(b, loc, type, v);
  }

  void waitForPrerequisiteGrid(OpBuilder &b, Location loc) const override {
    NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
  }
  void launchDependents(OpBuilder &b, Location loc) const override {
    NVVM::GriddepcontrolOp::create(b, loc,
                                   NVVM::GridDepActionKind::launch_dependents);
  }
  Value clusterPrograms(OpBuilder &b, Location loc) const override {
    Value n = NVVM::ClusterDim::create(b, loc, b.getI32Type());
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), n);
  }
  // barrier.cluster.arrive / wait: release and acquire at cluster scope
  // (their default semantics), so the partial outputs the cluster's
  // programs stored before it are visible to its combine after it.
  void clusterBarrier(OpBuilder &b, Location loc) const override {
    NVVM::ClusterArriveOp::create(b, loc, /*aligned=*/UnitAttr());
    NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/UnitAttr());
  }
};

} // namespace

std::unique_ptr<TargetInfo> createSm90TargetInfo(const ChipInfo &chip,
                                                 const MatrixInstr *mma) {
  return std::make_unique<Sm90TargetInfo>(chip, mma);
}

} // namespace mlir::mla::gpulower
