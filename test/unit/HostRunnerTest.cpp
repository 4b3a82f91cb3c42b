//===- HostRunnerTest.cpp - launch argument checks ------------------------===//
#include "mla/HostRunner.h"
#include "mla/MLAOps.h"
#include "mla/Reference.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/APFloat.h"
#include "gtest/gtest.h"

#include <cmath>
#include <random>

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
    registry
        .insert<mla::MLADialect, arith::ArithDialect, memref::MemRefDialect>();
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
  EXPECT_EQ(launchError("fill", {1}, {buf}),
            "kernel 'fill' takes 2 arguments, got 1");
  EXPECT_EQ(launchError("fill", {1}, {n, n}), "argument #0 must be a buffer");
  EXPECT_EQ(launchError("fill", {1}, {buf, buf}),
            "argument #1 must be an index");
  EXPECT_EQ(
      launchError("fill", {1}, {mla::HostArg::buffer(out.data(), {8}), n}),
      "argument #0 must have rank 2");
  EXPECT_EQ(
      launchError("fill", {1}, {mla::HostArg::buffer(out.data(), {1, 8}), n}),
      "argument #0 dimension 1 must be 4");
  EXPECT_EQ(
      launchError("fill", {1}, {mla::HostArg::buffer(nullptr, {2, 4}), n}),
      "argument #0 is a null buffer");
  EXPECT_EQ(launchError("fill", {-1}, {buf, n}),
            "grid extents must be non-negative");
  EXPECT_EQ(launchError("fill", {1, 1, 1, 1}, {buf, n}),
            "a grid has 1 to 3 extents");
}

TEST_F(HostRunner, NeedsKernels) {
  OwningOpRef<ModuleOp> empty =
      parseSourceString<ModuleOp>("module {}", ctx.get());
  auto h = mla::HostModule::compile(*empty);
  ASSERT_FALSE(static_cast<bool>(h));
  EXPECT_NE(llvm::toString(h.takeError()).find("no mla.kernel"),
            std::string::npos);
}

} // namespace

namespace {

/// Compiles `src` (a one-kernel module whose element type is spelled `xT>`)
/// for element type `typeName` and hands the JIT-compiled module to `run`.
void withConversionKernel(std::string src, const char *typeName,
                          llvm::function_ref<void(mla::HostModule &)> run) {
  for (size_t at; (at = src.find("xT>")) != std::string::npos;)
    src.replace(at, 3, std::string("x") + typeName + ">");
  DialectRegistry registry;
  registry
      .insert<mla::MLADialect, arith::ArithDialect, memref::MemRefDialect>();
  MLIRContext ctx(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(src, &ctx);
  ASSERT_TRUE(module);
  auto host = mla::HostModule::compile(*module);
  ASSERT_TRUE(static_cast<bool>(host)) << llvm::toString(host.takeError());
  run(**host);
}

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
  std::vector<uint8_t> codes(256);
  for (int i = 0; i < 256; ++i)
    codes[i] = static_cast<uint8_t>(i);
  std::vector<float> out(256, 12345.0f);
  withConversionKernel(src, typeName, [&](mla::HostModule &host) {
    ASSERT_FALSE(static_cast<bool>(
        host.launch("decode", {1},
                    {mla::HostArg::buffer(codes.data(), {1, 256}),
                     mla::HostArg::buffer(out.data(), {1, 256})})));
  });
  for (int code = 0; code < 256; ++code) {
    llvm::APFloat v(sem, llvm::APInt(8, code));
    bool lost;
    v.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
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
  checkAllCodes<Float8E4M3FNUZType, 1>(llvm::APFloat::Float8E4M3FNUZ(),
                                       "f8E4M3FNUZ");
}

/// The lowering's f32 -> fp8 encoder (mla.cast, shared with the GPU
/// lowering) against the reference encoder: every code's value, every
/// midpoint between neighbours (ties round to even) and just beside it,
/// values past the largest finite one, infinities, NaN, zeros, subnormals
/// and random values.
void checkEncoder(const char *typeName, mla_ref::Fp8Format format) {
  std::string src = std::string(R"mlir(
mla.kernel @encode(%in: memref<1x4096xf32>, %out: memref<1x4096xT>) attributes {grid = ["batch"], num_warps = 1 : i64} {
  %c0 = arith.constant 0 : index
  %t = mla.load %in[%c0, %c0] : memref<1x4096xf32> -> tensor<1x4096xf32>
  %f = mla.cast %t : tensor<1x4096xf32> -> tensor<1x4096xT>
  mla.store %f, %out[%c0, %c0] : tensor<1x4096xT> -> memref<1x4096xT>
  mla.return
}
)mlir");
  std::vector<float> in;
  std::vector<double> finite;
  for (int c = 0; c < 256; ++c) {
    double v = mla_ref::decodeFp8(static_cast<uint8_t>(c), format);
    if (!std::isnan(v))
      finite.push_back(v);
  }
  std::sort(finite.begin(), finite.end());
  for (size_t i = 0; i < finite.size(); ++i) {
    in.push_back(static_cast<float>(finite[i]));
    if (i + 1 < finite.size()) {
      float mid = static_cast<float>((finite[i] + finite[i + 1]) / 2);
      in.push_back(mid);
      in.push_back(std::nextafter(mid, 1e9f));
      in.push_back(std::nextafter(mid, -1e9f));
    }
  }
  for (float v :
       {0.0f, -0.0f, 449.0f, 463.99f, 464.0f, 500.0f, 241.0f, 1e30f, -1e30f,
        INFINITY, -INFINITY, NAN, 1e-30f, -1e-30f, 1e-3f, 2e-3f})
    in.push_back(v);
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.f, 4.f);
  while (in.size() < 4096)
    in.push_back(in.size() % 2 ? normal(rng) : normal(rng) * 1e-2f);

  std::vector<uint8_t> out(4096, 0x55);
  withConversionKernel(src, typeName, [&](mla::HostModule &host) {
    ASSERT_FALSE(static_cast<bool>(
        host.launch("encode", {1},
                    {mla::HostArg::buffer(in.data(), {1, 4096}),
                     mla::HostArg::buffer(out.data(), {1, 4096})})));
  });
  int mismatches = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    uint8_t want = mla_ref::encodeFp8(in[i], format);
    if (out[i] != want && ++mismatches <= 10)
      ADD_FAILURE() << typeName << ": " << in[i] << " -> 0x" << std::hex
                    << int(out[i]) << ", reference 0x" << int(want);
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(LoweredConversions, Fp8EncodeMatchesReference) {
  checkEncoder("f8E4M3FN", mla_ref::Fp8Format::E4M3FN);
  checkEncoder("f8E4M3FNUZ", mla_ref::Fp8Format::E4M3FNUZ);
}

} // namespace
