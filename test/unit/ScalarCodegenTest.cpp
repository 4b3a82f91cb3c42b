//===- ScalarCodegenTest.cpp - the lowerings' shared element decodes ------===//
//
// mxfp4ToBf16 is the one decode of mla.dequant that the host and GPU
// lowerings emit. Here it is folded to constants for every e2m1 code and
// every e8m0 scale (16 x 256) and compared bit for bit with the float64
// reference codecs rounded to bf16: subnormal results (scales 0 and 1),
// overflow to infinity (scales 253, 254) and NaN (0xFF) included, which
// random test data never reaches. emitQuantScale (mla.quant_scale's power
// of two) is folded likewise for maxima across f32's range.
//
//===----------------------------------------------------------------------===//
#include "ScalarCodegen.h"
#include "mla/Reference.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

using namespace mlir;

namespace {

/// Functions of constants built with the shared scalar code, then folded
/// by the canonicalizer: each returns what the code computes.
class ScalarCodegen : public ::testing::Test {
protected:
  ScalarCodegen() { ctx.loadDialect<arith::ArithDialect, func::FuncDialect>(); }
  ~ScalarCodegen() override { module->erase(); }
  /// Runs the canonicalizer over the module.
  LogicalResult fold() {
    PassManager pm(&ctx);
    pm.addPass(createCanonicalizerPass());
    return pm.run(module);
  }
  MLIRContext ctx;
  OpBuilder b{&ctx};
  Location loc = b.getUnknownLoc();
  ModuleOp module = [this] {
    auto m = ModuleOp::create(loc);
    b.setInsertionPointToEnd(m.getBody());
    return m;
  }();
};

TEST_F(ScalarCodegen, Mxfp4ToBf16EveryCodeAndScale) {
  // One function per scale returning the 16 codes' bits, the normal-only
  // decode's (zero where it does not apply), and whether it applies.
  SmallVector<Type> results(16, b.getI16Type());
  results.append(16, b.getI32Type());
  results.push_back(b.getI1Type());
  for (int scale = 0; scale < 256; ++scale) {
    auto fn = func::FuncOp::create(b, loc, llvm::formatv("s{0}", scale).str(),
                                   b.getFunctionType({}, results));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(fn.addEntryBlock());
    SmallVector<Value> bits;
    for (int code = 0; code < 16; ++code)
      bits.push_back(mla::mxfp4ToBf16(b, loc, mla::cstI32(b, loc, code),
                                      mla::cstI32(b, loc, scale)));
    Value base = mla::mxfp4Base(b, loc, mla::cstI32(b, loc, scale));
    for (int code = 0; code < 16; ++code)
      bits.push_back(
          mla::mxfp4ToBf16Normal(b, loc, mla::cstI32(b, loc, code), base));
    bits.push_back(mla::mxfp4ScaleIsNormal(b, loc, mla::cstI32(b, loc, scale)));
    func::ReturnOp::create(b, loc, bits);
  }
  ASSERT_TRUE(succeeded(fold()));
  int checked = 0;
  for (auto fn : module.getOps<func::FuncOp>()) {
    int scale = std::stoi(fn.getName().drop_front().str());
    auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    for (int code = 0; code < 16; ++code) {
      auto cst = ret.getOperand(code).getDefiningOp<arith::ConstantIntOp>();
      ASSERT_TRUE(cst) << "scale " << scale << " code " << code
                       << " did not fold to a constant";
      uint16_t got = static_cast<uint16_t>(cst.value());
      double want = mla_ref::decodeFp4E2M1(code) * mla_ref::decodeE8M0(scale);
      SCOPED_TRACE("scale " + std::to_string(scale) + " code " +
                   std::to_string(code));
      if (std::isnan(want)) {
        EXPECT_EQ(got & 0x7F80, 0x7F80);
        EXPECT_NE(got & 0x7F, 0);
      } else {
        // Every product is a float (or beyond its range: infinity), and
        // its bf16 rounding is the answer.
        EXPECT_EQ(got, mla_ref::floatToBf16(static_cast<float>(want))) << want;
      }
      ++checked;
    }
    // The normal-only decode: exactly the scales 2 .. 252, and there the
    // same bits as the exact one.
    auto normal = ret.getOperand(32).getDefiningOp<arith::ConstantIntOp>();
    ASSERT_TRUE(normal);
    EXPECT_EQ(normal.value() != 0, scale >= 2 && scale <= 252) << scale;
    if (scale < 2 || scale > 252)
      continue;
    for (int code = 0; code < 16; ++code) {
      auto fast =
          ret.getOperand(16 + code).getDefiningOp<arith::ConstantIntOp>();
      auto exact = ret.getOperand(code).getDefiningOp<arith::ConstantIntOp>();
      ASSERT_TRUE(fast && exact);
      EXPECT_EQ(fast.value(), exact.value() & 0xFFFF)
          << "scale " << scale << " code " << code;
    }
  }
  EXPECT_EQ(checked, 16 * 256);
}

/// mla.dequant into e4m3fn: mxfp4ToE4m3 folded for every e2m1 code and
/// every scale code against row references from the clamp (33) to 255,
/// compared with the reference codecs (e2m1 x 2^(scale - ref + 6) rounded
/// to e4m3fn, NaN for scale 0xFF); and the GPU's byte-permute table
/// (mxfp4E4m3Table, k + 6 = 1 .. 12) equal to it for every magnitude.
TEST_F(ScalarCodegen, Mxfp4ToE4m3EveryCodeScaleAndReference) {
  const int refs[] = {33, 40, 100, 127, 140, 200, 254, 255};
  SmallVector<Type> results(16, b.getI8Type());
  for (int ref : refs)
    for (int scale = 0; scale <= ref; ++scale) {
      auto fn = func::FuncOp::create(
          b, loc, llvm::formatv("r{0}_{1}", ref, scale).str(),
          b.getFunctionType({}, results));
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(fn.addEntryBlock());
      SmallVector<Value> bytes;
      for (int code = 0; code < 16; ++code)
        bytes.push_back(mla::mxfp4ToE4m3(b, loc, mla::cstI32(b, loc, code),
                                         mla::cstI32(b, loc, scale),
                                         mla::cstI32(b, loc, ref)));
      func::ReturnOp::create(b, loc, bytes);
    }
  for (int k6 = 1; k6 <= 12; ++k6) {
    auto fn = func::FuncOp::create(
        b, loc, llvm::formatv("t{0}", k6).str(),
        b.getFunctionType({}, {b.getI32Type(), b.getI32Type()}));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(fn.addEntryBlock());
    auto [lo, hi] = mla::mxfp4E4m3Table(b, loc, mla::cstI32(b, loc, k6));
    func::ReturnOp::create(b, loc, ValueRange{lo, hi});
  }
  ASSERT_TRUE(succeeded(fold()));
  std::map<std::pair<int, int>, std::vector<uint8_t>> decoded;
  int checked = 0, tables = 0;
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto name = fn.getName().str();
    if (name[0] != 'r')
      continue;
    int ref = std::stoi(name.substr(1, name.find('_') - 1));
    int scale = std::stoi(name.substr(name.find('_') + 1));
    auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    for (int code = 0; code < 16; ++code) {
      auto cst = ret.getOperand(code).getDefiningOp<arith::ConstantIntOp>();
      ASSERT_TRUE(cst) << name << " code " << code << ": not a constant";
      uint8_t got = static_cast<uint8_t>(cst.value());
      decoded[{ref, scale}].push_back(got);
      uint8_t want =
          scale == 255
              ? 0x7F
              : mla_ref::encodeFp8(
                    std::ldexp(mla_ref::decodeFp4E2M1(code), scale - ref + 6),
                    mla_ref::Fp8Format::E4M3FN);
      EXPECT_EQ(got, want) << "ref " << ref << " scale " << scale << " code "
                           << code;
      ++checked;
    }
  }
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto name = fn.getName().str();
    if (name[0] != 't')
      continue;
    int k6 = std::stoi(name.substr(1));
    auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    uint32_t words[2];
    for (int j = 0; j < 2; ++j) {
      auto cst = ret.getOperand(j).getDefiningOp<arith::ConstantIntOp>();
      ASSERT_TRUE(cst) << name;
      words[j] = static_cast<uint32_t>(cst.value());
    }
    for (int ref : {127, 254}) {
      const std::vector<uint8_t> &exact = decoded[{ref, ref + k6 - 12}];
      ASSERT_EQ(exact.size(), 16u);
      for (int m = 0; m < 8; ++m) {
        uint8_t byte = (words[m / 4] >> (8 * (m % 4))) & 0xFF;
        EXPECT_EQ(byte, exact[m]) << "k + 6 = " << k6 << " magnitude " << m;
        EXPECT_EQ(byte | 0x80, exact[m + 8]) << "k + 6 = " << k6 << " -" << m;
      }
      ++tables;
    }
  }
  EXPECT_EQ(tables, 24);
  EXPECT_GT(checked, 16 * 1000);
}

/// mla.quant_scale's power of two (emitQuantScale), folded to constants for
/// magnitudes across f32's range: amax * scale lands in [2^(E-1), 2^E), so
/// below the narrow type's largest value, scale * inverse is exactly 1, and
/// zero, subnormal and infinite maxima give the clamped exponents the op's
/// description names.
TEST_F(ScalarCodegen, QuantScaleFitsTheTopBinade) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> amaxes = {
      0.0f,    1e-45f,  1e-39f, 1.2e-38f, 1e-30f, 1.0f / 64, 0.5f,    1.0f,
      1.5f,    127.9f,  128.0f, 255.9f,   256.0f, 448.0f,    449.0f,  4.4e3f,
      6.5e4f,  1e20f,   3e38f,  inf};
  for (int e : {8, 7, 15}) // f8E4M3FN, f8E4M3FNUZ, f16
    for (size_t i = 0; i < amaxes.size(); ++i) {
      auto fn = func::FuncOp::create(
          b, loc, llvm::formatv("e{0}_{1}", e, i).str(),
          b.getFunctionType({}, {b.getF32Type(), b.getF32Type()}));
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(fn.addEntryBlock());
      auto [scale, inverse] =
          mla::emitQuantScale(b, loc, mla::cstF32(b, loc, amaxes[i]), e);
      func::ReturnOp::create(b, loc, ValueRange{scale, inverse});
    }
  ASSERT_TRUE(succeeded(fold()));
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto name = fn.getName().drop_front().str();
    int e = std::stoi(name.substr(0, name.find('_')));
    float amax = amaxes[std::stoi(name.substr(name.find('_') + 1))];
    SCOPED_TRACE(llvm::formatv("E {0}, amax {1}", e, amax).str());
    auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    float got[2];
    for (int j = 0; j < 2; ++j) {
      auto cst = ret.getOperand(j).getDefiningOp<arith::ConstantFloatOp>();
      ASSERT_TRUE(cst) << "did not fold to a constant";
      got[j] = cst.value().convertToFloat();
    }
    float scale = got[0], inverse = got[1];
    ASSERT_TRUE(std::isnormal(scale) && std::isnormal(inverse));
    EXPECT_EQ(scale * inverse, 1.0f);
    int k = std::ilogb(scale);
    EXPECT_EQ(scale, std::ldexp(1.0f, k));
    if (amax == 0 || !std::isnormal(amax)) {
      // zero and subnormals count as 2^-127 (k clamps at 126); infinity's
      // exponent field is 2^128's.
      EXPECT_EQ(k, std::isinf(amax) ? e - 129 : 126);
      continue;
    }
    int want = std::clamp(e - 1 - std::ilogb(amax), -126, 126);
    EXPECT_EQ(k, want);
    if (want == e - 1 - std::ilogb(amax)) {
      double scaled = double(amax) * scale;
      EXPECT_GE(scaled, std::ldexp(1.0, e - 1));
      EXPECT_LT(scaled, std::ldexp(1.0, e));
    }
  }
}

} // namespace
