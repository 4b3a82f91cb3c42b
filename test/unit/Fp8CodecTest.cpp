//===- Fp8CodecTest.cpp - the reference's number codecs -------------------===//
//
// The reference decoders are hand-written; LLVM's APFloat is an independent
// implementation of the same formats, so agreeing on every code is a real
// check.
//
//===----------------------------------------------------------------------===//
#include "mla/Reference.h"

#include "llvm/ADT/APFloat.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace mla_ref;

namespace {

double apfloatValue(const llvm::fltSemantics &sem, unsigned bits,
                    unsigned width) {
  llvm::APFloat v(sem, llvm::APInt(width, bits));
  bool lost;
  v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return v.convertToDouble();
}

struct FormatCase {
  Fp8Format format;
  const llvm::fltSemantics &(*sem)();
};

class Fp8Formats : public ::testing::TestWithParam<int> {
protected:
  FormatCase fc() const {
    return GetParam() == 0
               ? FormatCase{Fp8Format::E4M3FN, llvm::APFloat::Float8E4M3FN}
               : FormatCase{Fp8Format::E4M3FNUZ, llvm::APFloat::Float8E4M3FNUZ};
  }
};

TEST_P(Fp8Formats, DecodeMatchesAPFloatOnEveryCode) {
  FormatCase f = fc();
  for (unsigned code = 0; code < 256; ++code) {
    double mine = decodeFp8(static_cast<uint8_t>(code), f.format);
    double theirs = apfloatValue(f.sem(), code, 8);
    if (std::isnan(theirs))
      EXPECT_TRUE(std::isnan(mine)) << "code " << code;
    else
      EXPECT_EQ(mine, theirs) << "code " << code;
  }
}

TEST_P(Fp8Formats, EncodeRoundTripsEveryFiniteCode) {
  FormatCase f = fc();
  for (unsigned code = 0; code < 256; ++code) {
    double v = decodeFp8(static_cast<uint8_t>(code), f.format);
    if (std::isnan(v))
      continue;
    uint8_t back = encodeFp8(v, f.format);
    // +0 and -0 are one value; FN keeps the sign of zero.
    if (v == 0) {
      EXPECT_EQ(decodeFp8(back, f.format), 0.0);
      continue;
    }
    EXPECT_EQ(back, code) << "value " << v;
  }
}

TEST_P(Fp8Formats, EncodeRoundsToNearestEvenAndSaturates) {
  FormatCase f = fc();
  double max = fp8Max(f.format);
  EXPECT_EQ(decodeFp8(encodeFp8(1e9, f.format), f.format), max);
  EXPECT_EQ(decodeFp8(encodeFp8(-1e9, f.format), f.format), -max);
  // Between 1.0 (mantissa 0, even) and 1.125 (mantissa 1): the tie goes to
  // 1.0; just above it goes up.
  EXPECT_EQ(decodeFp8(encodeFp8(1.0625, f.format), f.format), 1.0);
  EXPECT_EQ(decodeFp8(encodeFp8(1.07, f.format), f.format), 1.125);
  // Between 1.125 (odd) and 1.25 (even): the tie goes to 1.25.
  EXPECT_EQ(decodeFp8(encodeFp8(1.1875, f.format), f.format), 1.25);
  // Compare a sweep against APFloat's own rounding.
  for (double x = -300; x <= 300; x += 0.37) {
    llvm::APFloat ap(x);
    bool lost;
    ap.convert(f.sem(), llvm::APFloat::rmNearestTiesToEven, &lost);
    double expect = std::min(
        std::fabs(apfloatValue(f.sem(), ap.bitcastToAPInt().getZExtValue(), 8)),
        max);
    if (std::fabs(x) > max || std::isnan(expect))
      continue; // APFloat overflows to NaN where we saturate
    EXPECT_EQ(std::fabs(decodeFp8(encodeFp8(x, f.format), f.format)), expect)
        << "x = " << x;
  }
}

INSTANTIATE_TEST_SUITE_P(E4M3, Fp8Formats, ::testing::Values(0, 1),
                         [](const auto &info) {
                           return info.param == 0 ? "FN" : "FNUZ";
                         });

TEST(Fp8Codec, FormatsDifferWhereTheyShould) {
  // 0x7F is NaN in FN and 240 in FNUZ; 0x80 is -0 in FN and NaN in FNUZ.
  EXPECT_TRUE(std::isnan(decodeFp8(0x7F, Fp8Format::E4M3FN)));
  EXPECT_EQ(decodeFp8(0x7F, Fp8Format::E4M3FNUZ), 240.0);
  EXPECT_TRUE(std::isnan(decodeFp8(0x80, Fp8Format::E4M3FNUZ)));
  EXPECT_EQ(decodeFp8(0x7E, Fp8Format::E4M3FN), 448.0);
  // Same bits, half the value: the bias differs by one.
  EXPECT_EQ(decodeFp8(0x40, Fp8Format::E4M3FN), 2.0);
  EXPECT_EQ(decodeFp8(0x40, Fp8Format::E4M3FNUZ), 1.0);
}

TEST(Bf16Codec, MatchesAPFloat) {
  for (float x : {0.0f, -0.0f, 1.0f, 3.14159265f, -2.5e-3f, 1e30f, 65504.0f,
                  1.00390625f /* tie: exactly half an ulp above 1 */,
                  1.01171875f /* tie above an odd mantissa */}) {
    llvm::APFloat ap(x);
    bool lost;
    ap.convert(llvm::APFloat::BFloat(), llvm::APFloat::rmNearestTiesToEven,
               &lost);
    uint16_t expect = static_cast<uint16_t>(ap.bitcastToAPInt().getZExtValue());
    EXPECT_EQ(floatToBf16(x), expect) << x;
    EXPECT_EQ(bf16ToFloat(expect), static_cast<float>(apfloatValue(
                                       llvm::APFloat::BFloat(), expect, 16)));
  }
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(std::nanf("")))));
}

// Every f16 code decodes as APFloat's IEEEhalf does; rounding f32 to f16
// agrees with APFloat on normals, subnormals, ties, the overflow edge and
// random bit patterns.
TEST(F16Codec, MatchesAPFloat) {
  for (unsigned code = 0; code < 0x10000; ++code) {
    double want = apfloatValue(llvm::APFloat::IEEEhalf(), code, 16);
    float got = f16ToFloat(static_cast<uint16_t>(code));
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(got)) << code;
    else
      EXPECT_EQ(static_cast<double>(got), want) << code;
  }
  auto expectRound = [](float x) {
    llvm::APFloat ap(x);
    bool lost;
    ap.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven,
               &lost);
    EXPECT_EQ(floatToF16(x),
              static_cast<uint16_t>(ap.bitcastToAPInt().getZExtValue()))
        << x;
  };
  for (float x :
       {0.0f, -0.0f, 1.0f, -3.14159265f, 65504.0f, 65519.0f, 65520.0f, 1e30f,
        6.1035156e-5f /* 2^-14 */, 6.0e-5f, 5.96e-8f /* 2^-24 */, 2.98e-8f,
        1.00048828125f /* tie above 1 */, 1.00146484375f /* tie, odd */})
    expectRound(x);
  uint32_t state = 12345;
  for (int i = 0; i < 200000; ++i) {
    state = state * 1664525u + 1013904223u;
    uint32_t bits = (state & 0x8FFFFFFF) | 0x30000000; // |x| in 2^-31 .. 2
    float x;
    std::memcpy(&x, &bits, 4);
    expectRound(x);
  }
  EXPECT_TRUE(std::isnan(f16ToFloat(floatToF16(std::nanf("")))));
}

} // namespace
