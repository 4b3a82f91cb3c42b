//===- HostRunnerTest.cpp - launch argument checks ------------------------===//
#include "mla/HostRunner.h"
#include "mla/MLAOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/APFloat.h"
#include "gtest/gtest.h"

#include <cmath>

using namespace mlir;

namespace {

const char *kKernel = R"mlir(
mla.kernel @fill(%out: memref<?x4xf32>, %n: index) attributes {grid = ["batch"], num_warps = 1 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %t = mla.fill 2.5 : tensor<1x4xf32>
  mla.store %t, %out[%b, %c0] : tensor<1x4xf32> -> memref<?x4xf32>
  mla.return
}
)mlir";

class HostRunner : public ::testing::Test {
protected:
  void SetUp() override {
    DialectRegistry registry;
    registry.insert<mla::MLADialect, arith::ArithDialect, memref::MemRefDialect>();
    ctx = std::make_unique<MLIRContext>(registry);
    module = parseSourceString<ModuleOp>(kKernel, ctx.get());
    ASSERT_TRUE(module);
    auto h = mla::HostModule::compile(*module);
    ASSERT_TRUE(static_cast<bool>(h)) << llvm::toString(h.takeError());
    host = std::move(*h);
  }
  std::string launchError(llvm::StringRef name, std::vector<int64_t> grid,
                          std::vector<mla::HostArg> args) {
    llvm::Error e = host->launch(name, grid, args);
    return e ? llvm::toString(std::move(e)) : std::string();
  }
  std::unique_ptr<MLIRContext> ctx;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<mla::HostModule> host;
};

TEST_F(HostRunner, RunsEveryProgramOfTheGrid) {
  std::vector<float> out(3 * 4, 0.0f);
  EXPECT_EQ(launchError("fill", {3},
                        {mla::HostArg::buffer(out.data(), {3, 4}),
                         mla::HostArg::scalarIndex(3)}),
            "");
  for (float v : out)
    EXPECT_EQ(v, 2.5f);
}

TEST_F(HostRunner, RejectsBadLaunches) {
  std::vector<float> out(8);
  auto buf = mla::HostArg::buffer(out.data(), {2, 4});
  auto n = mla::HostArg::scalarIndex(2);
  EXPECT_EQ(launchError("nope", {1}, {buf, n}), "no kernel named 'nope'");
  EXPECT_EQ(launchError("fill", {1}, {buf}), "kernel 'fill' takes 2 arguments, got 1");
  EXPECT_EQ(launchError("fill", {1}, {n, n}), "argument #0 must be a buffer");
  EXPECT_EQ(launchError("fill", {1}, {buf, buf}), "argument #1 must be an index");
  EXPECT_EQ(launchError("fill", {1}, {mla::HostArg::buffer(out.data(), {8}), n}),
            "argument #0 must have rank 2");
  EXPECT_EQ(launchError("fill", {1}, {mla::HostArg::buffer(out.data(), {1, 8}), n}),
            "argument #0 dimension 1 must be 4");
  EXPECT_EQ(launchError("fill", {1}, {mla::HostArg::buffer(nullptr, {2, 4}), n}),
            "argument #0 is a null buffer");
  EXPECT_EQ(launchError("fill", {-1}, {buf, n}), "grid extents must be non-negative");
  EXPECT_EQ(launchError("fill", {1, 1, 1, 1}, {buf, n}), "a grid has 1 to 3 extents");
}

TEST_F(HostRunner, NeedsKernels) {
  OwningOpRef<ModuleOp> empty = parseSourceString<ModuleOp>("module {}", ctx.get());
  auto h = mla::HostModule::compile(*empty);
  ASSERT_FALSE(static_cast<bool>(h));
  EXPECT_NE(llvm::toString(h.takeError()).find("no mla.kernel"), std::string::npos);
}

} // namespace

namespace {

/// The lowering's fp8 decoder (shared with the GPU lowering) on all 256
/// codes of both formats, against LLVM's APFloat.
template <typename Fp8, int Format>
void checkAllCodes(const llvm::fltSemantics &sem, const char *typeName) {
  std::string src = std::string(R"mlir(
mla.kernel @decode(%in: memref<1x256xT>, %out: memref<1x256xf32>) attributes {grid = ["batch"], num_warps = 1 : i64} {
  %c0 = arith.constant 0 : index
  %t = mla.load %in[%c0, %c0] : memref<1x256xT> -> tensor<1x256xT>
  %f = mla.cast %t : tensor<1x256xT> -> tensor<1x256xf32>
  mla.store %f, %out[%c0, %c0] : tensor<1x256xf32> -> memref<1x256xf32>
  mla.return
}
)mlir");
  for (size_t at; (at = src.find("xT>")) != std::string::npos;)
    src.replace(at, 3, std::string("x") + typeName + ">");
  DialectRegistry registry;
  registry.insert<mla::MLADialect, arith::ArithDialect, memref::MemRefDialect>();
  MLIRContext ctx(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(src, &ctx);
  ASSERT_TRUE(module);
  auto host = mla::HostModule::compile(*module);
  ASSERT_TRUE(static_cast<bool>(host)) << llvm::toString(host.takeError());
  std::vector<uint8_t> codes(256);
  for (int i = 0; i < 256; ++i)
    codes[i] = static_cast<uint8_t>(i);
  std::vector<float> out(256, 12345.0f);
  ASSERT_FALSE(static_cast<bool>((*host)->launch(
      "decode", {1},
      {mla::HostArg::buffer(codes.data(), {1, 256}),
       mla::HostArg::buffer(out.data(), {1, 256})})));
  for (int code = 0; code < 256; ++code) {
    llvm::APFloat v(sem, llvm::APInt(8, code));
    bool lost;
    v.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven, &lost);
    float expect = v.convertToFloat();
    if (std::isnan(expect)) {
      EXPECT_TRUE(std::isnan(out[code])) << typeName << " code " << code;
      continue;
    }
    EXPECT_EQ(out[code], expect) << typeName << " code " << code;
    EXPECT_EQ(std::signbit(out[code]), std::signbit(expect)) // -0 stays -0
        << typeName << " code " << code;
  }
}

TEST(LoweredConversions, Fp8DecodeEveryCode) {
  checkAllCodes<Float8E4M3FNType, 0>(llvm::APFloat::Float8E4M3FN(), "f8E4M3FN");
  checkAllCodes<Float8E4M3FNUZType, 1>(llvm::APFloat::Float8E4M3FNUZ(), "f8E4M3FNUZ");
}

} // namespace
