//===- Mxfp4CodecTest.cpp - the reference's mxfp4 / e8m0 codecs -----------===//
//
// Issue #18's reference side: every fp4 e2m1 code and every e8m0 code
// against LLVM's APFloat (an independent implementation of the OCP MX
// formats), the encoder's rounding, the task's cache layout (low nibble =
// even element, scale rows with a padded stride), and the format's own
// error on attention (the mxfp4 cache against the values it quantised).
//
//===----------------------------------------------------------------------===//
#include "mla/Reference.h"

#include "llvm/ADT/APFloat.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <random>

using namespace mla_ref;

namespace {

double apfloat(const llvm::fltSemantics &sem, unsigned bits, unsigned width) {
  llvm::APFloat v(sem, llvm::APInt(width, bits));
  bool lost;
  v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return v.convertToDouble();
}

TEST(Mxfp4Codec, EveryFp4CodeMatchesAPFloat) {
  for (unsigned c = 0; c < 16; ++c) {
    double want = apfloat(llvm::APFloat::Float4E2M1FN(), c, 4);
    double got = decodeFp4E2M1(uint8_t(c));
    EXPECT_EQ(want, got) << "code " << c;
    EXPECT_EQ(std::signbit(want), std::signbit(got)) << "code " << c;
    // Every code is its own nearest value.
    EXPECT_EQ(c, encodeFp4E2M1(got)) << "code " << c;
  }
  // High bits of the byte are not part of the code.
  EXPECT_EQ(decodeFp4E2M1(0x37), decodeFp4E2M1(0x07));
}

TEST(Mxfp4Codec, EncoderRoundsToNearestEvenAndSaturates) {
  struct {
    double in;
    uint8_t code;
  } cases[] = {
      {0.25, 0x0},  {0.2501, 0x1}, {0.75, 0x2},     {1.25, 0x2}, {1.75, 0x4},
      {2.5, 0x4},   {3.5, 0x6},    {5.0, 0x6},      {5.01, 0x7}, {6.0, 0x7},
      {7.0, 0x7},   {1e30, 0x7},   {-0.0, 0x8},     {-0.3, 0x9}, {-5.0, 0xE},
      {-1e30, 0xF}, {NAN, 0x0},    {INFINITY, 0x7},
  };
  for (auto c : cases)
    EXPECT_EQ(c.code, encodeFp4E2M1(c.in)) << c.in;
}

TEST(Mxfp4Codec, EveryE8M0CodeMatchesAPFloat) {
  for (unsigned c = 0; c < 256; ++c) {
    double want = apfloat(llvm::APFloat::Float8E8M0FNU(), c, 8);
    double got = decodeE8M0(uint8_t(c));
    if (c == 0xFF) {
      // (APFloat converts its E8M0 NaN to an infinite double: ask it
      // directly.)
      EXPECT_TRUE(std::isnan(got));
      EXPECT_TRUE(
          llvm::APFloat(llvm::APFloat::Float8E8M0FNU(), llvm::APInt(8, c))
              .isNaN());
      continue;
    }
    EXPECT_EQ(want, got) << "code " << c;
    EXPECT_EQ(std::ldexp(1.0, int(c) - 127), got) << "code " << c;
  }
}

// The task's layout: 576 values = 288 bytes a row, low nibble the even
// element; 18 scales a row at a padded stride; padding never read.
TEST(Mxfp4Codec, DequantizesTheTaskLayoutWithAPaddedScaleStride) {
  const int64_t rows = 3, cols = 576, stride = 20;
  std::vector<uint8_t> data(rows * cols / 2, 0), scales(rows * stride, 0xFF);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < 18; ++b)
      scales[r * stride + b] = uint8_t(127 + b - 9 + r); // 2^(b - 9 + r)
  data[0] = 0x2D;         // row 0: element 0 = 0xD (-3), element 1 = 0x2 (1)
  data[15] = 0x70;        // row 0: element 30 = 0, element 31 = 6
  data[16] = 0x01;        // row 0: element 32 = 0.5 (block 1)
  data[288 + 143] = 0x50; // row 1: element 287 = 3 (block 8)
  data[2 * 288 + 287] = 0xF0; // row 2: element 575 = -6 (block 17)
  std::vector<double> v =
      dequantizeMxfp4(data.data(), scales.data(), rows, cols, stride);
  EXPECT_EQ(-3.0 * std::ldexp(1.0, -9), v[0]);
  EXPECT_EQ(1.0 * std::ldexp(1.0, -9), v[1]);
  EXPECT_EQ(0.0, v[30]);
  EXPECT_EQ(6.0 * std::ldexp(1.0, -9), v[31]);
  EXPECT_EQ(0.5 * std::ldexp(1.0, -8), v[32]);
  EXPECT_EQ(3.0 * std::ldexp(1.0, 8 - 9 + 1), v[cols + 287]);
  EXPECT_EQ(-6.0 * std::ldexp(1.0, 17 - 9 + 2), v[2 * cols + 575]);
  for (double x : v)
    EXPECT_FALSE(std::isnan(x)); // the 0xFF padding was never read
}

// quantize -> dequantize: representable values come back exactly, every
// value within 2 x its block's scale (e2m1's top gap is 2, saturation at 6
// costs at most 2 for a block maximum in [4, 8) scaled).
TEST(Mxfp4Codec, QuantizeRoundTripsWithinTheFormatsBound) {
  unsigned seed = std::random_device{}();
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  const int64_t rows = 64, cols = 576, stride = 24;
  std::vector<double> x(rows * cols);
  for (double &v : x)
    v = normal(rng) * std::ldexp(1.0, int(rng() % 20) - 10);
  // A block of representable values and an all-zero block.
  for (int64_t c = 0; c < 32; ++c)
    x[c] = decodeFp4E2M1(uint8_t(c % 16)) * 0.25;
  for (int64_t c = 32; c < 64; ++c)
    x[c] = 0;
  std::vector<uint8_t> data, scales;
  quantizeMxfp4(x, rows, cols, stride, data, scales);
  ASSERT_EQ(size_t(rows * cols / 2), data.size());
  ASSERT_EQ(size_t(rows * stride), scales.size());
  std::vector<double> y =
      dequantizeMxfp4(data.data(), scales.data(), rows, cols, stride);
  for (int64_t c = 0; c < 64; ++c)
    EXPECT_EQ(x[c], y[c]) << c;
  EXPECT_EQ(0, scales[1]); // 2^-127 for the zero block
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      double scale = decodeE8M0(scales[r * stride + c / 32]);
      ASSERT_LE(std::fabs(x[r * cols + c] - y[r * cols + c]), 2 * scale)
          << r << ", " << c;
    }
}

// The format's own error on the decode: the float64 reference on the
// mxfp4-quantised cache against the same reference on the values it
// quantised (N(0, 1) KV and Q). Printed for docs; bounded loosely so that
// a broken layout (a swapped nibble, a wrong block) fails.
TEST(Mxfp4Codec, FormatErrorOnAttention) {
  unsigned seed = std::random_device{}();
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  DecodeProblem p;
  p.batch = 2;
  p.softmaxScale = 1.0 / std::sqrt(576.0);
  p.qoIndptr = {0, 1, 2};
  p.kvIndptr = {0, 300, 1000};
  std::vector<double> q(2 * 16 * 576), kv(1000 * 576);
  for (double &v : q)
    v = normal(rng);
  for (double &v : kv)
    v = normal(rng);
  std::vector<uint8_t> data, scales;
  quantizeMxfp4(kv, 1000, 576, 18, data, scales);
  std::vector<double> kv4 =
      dequantizeMxfp4(data.data(), scales.data(), 1000, 576, 18);
  double kvErr = relativeFrobeniusError(kv4, kv);
  double outErr = relativeFrobeniusError(referenceDecode(p, q, kv4),
                                         referenceDecode(p, q, kv));
  // fp8 e4m3 with a per-tensor scale (amax / 448), for comparison.
  double amax = 0;
  for (double v : kv)
    amax = std::max(amax, std::fabs(v));
  std::vector<double> kv8(kv.size());
  for (size_t i = 0; i < kv.size(); ++i)
    kv8[i] = decodeFp8(encodeFp8(kv[i] / (amax / 448), Fp8Format::E4M3FN),
                       Fp8Format::E4M3FN) *
             (amax / 448);
  double outErr8 = relativeFrobeniusError(referenceDecode(p, q, kv8),
                                          referenceDecode(p, q, kv));
  std::printf("format error (relative Frobenius vs the unquantised values): "
              "mxfp4 KV %.3f, decode output %.3f; fp8 e4m3 per tensor: "
              "output %.3f\n",
              kvErr, outErr, outErr8);
  EXPECT_LT(kvErr, 0.2);
  EXPECT_LT(outErr, 0.3);
}

} // namespace
