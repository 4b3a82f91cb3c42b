//===- Mxfp4ScalesTest.cpp - every e8m0 scale decodes as the reference's
//---===//
//
// The mxfp4 stage 1 decodes a batch of items by the chip's fast path only
// when every scale of the batch is 2 .. 252 (gfx950: one
// v_cvt_scalef32_pk_bf16_fp4 a byte; gfx942: the integer decode for normal
// products), else the whole batch by the exact integer decode. Random
// caches never leave that range, so here blocks get the extreme scales:
// 0 and 1 (subnormal products), 253 and 254 (zeroed values, whose products
// must stay zero), and the NaN code 255, which must make its sequence's
// outputs NaN and leave the others exact. Batches of the fast path and of
// the exact one both run in each call, against the float64 reference on
// the dequantised cache.
//
//===----------------------------------------------------------------------===//
#include "EmulatedDecode.h"

#include <cmath>

namespace {

using emutest::DecodeCall;
using emutest::DecodeResult;

struct Case {
  const char *chip, *spec;
};

class Mxfp4Scales : public ::testing::TestWithParam<Case> {};

TEST_P(Mxfp4Scales, ExtremeScalesDecodeExactly) {
  emutest::Compiled c = emutest::load(GetParam().chip, GetParam().spec);
  for (int64_t splits : {1, 4}) {
    DecodeCall call;
    call.kv = {0, 300, 600, 1000};
    call.qo = {0, 1, 2, 3};
    call.kvRows = 1000;
    call.maxKvLen = 400;
    call.numSplits = splits;
    const int extreme[] = {0, 1, 253, 254};
    call.mxfp4Scale = [&](int64_t row, int64_t block) -> int {
      if (row == 450 && block == 5)
        return 255; // NaN: sequence 1
      if (row % 7 == 3 && block == row % 18)
        return extreme[(row / 7) % 4];
      return -1;
    };
    DecodeResult r = emutest::decode(c, c.code, call);
    ASSERT_EQ(r.err, "");
    for (int64_t seq : {0, 2}) {
      std::vector<double> got = emutest::outputRow(r, seq);
      for (double x : got)
        ASSERT_TRUE(std::isfinite(x))
            << "sequence " << seq << ", " << splits << " splits";
      EXPECT_LT(mla_ref::relativeFrobeniusError(
                    got, emutest::referenceRow(r, seq, call.kv[seq],
                                               call.kv[seq + 1])),
                2e-2)
          << "sequence " << seq << ", " << splits << " splits";
    }
    for (double x : emutest::outputRow(r, 1))
      ASSERT_TRUE(std::isnan(x))
          << splits << " splits: a NaN scale must reach every head";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Chips, Mxfp4Scales,
    ::testing::Values(Case{"gfx950", "deepseek_r1_decode_mxfp4"},
                      Case{"gfx942", "deepseek_r1_decode_mxfp4_mi300x"}),
    [](const ::testing::TestParamInfo<Case> &i) {
      return std::string(i.param.chip);
    });

} // namespace
