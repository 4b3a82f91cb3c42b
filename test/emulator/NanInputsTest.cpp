//===- NanInputsTest.cpp - a NaN input gives NaN where it reaches ---------===//
//
// What the kernels promise about NaN inputs, on the gfx950 and gfx942 code
// objects (emulator): a NaN in one head's Q makes that head's output NaN
// and leaves the sequence's other heads exact; a NaN in one KV row of a
// sequence (a column read as K and as V) makes every head of that sequence
// NaN; other sequences are unaffected. The row maxima are maxnum on CDNA
// (ChipTuning::rowMaxIgnoresNaN), so a NaN score drops out of the maximum
// and must still reach the output through its probability; with one split
// and with several (stage 2 combines the partial results).
//
//===----------------------------------------------------------------------===//
#include "EmulatedDecode.h"

#include <cmath>

namespace {

using emutest::DecodeCall;
using emutest::DecodeResult;

class NanInputs : public ::testing::TestWithParam<const char *> {};

TEST_P(NanInputs, ReachTheOutputsTheyFeed) {
  emutest::Compiled c = emutest::load(GetParam());
  const int64_t heads = 16, qk = 576, nanHead = 3;
  for (int64_t splits : {1, 4}) {
    DecodeCall call;
    call.kv = {0, 300, 600, 900};
    call.qo = {0, 1, 2, 3};
    call.kvRows = 900;
    call.maxKvLen = 300;
    call.numSplits = splits;
    call.nanQ = (0 * heads + nanHead) * qk + 10; // sequence 0, head 3
    call.nanKv = (300 + 150) * qk + 20;          // sequence 1, row 150
    DecodeResult r = emutest::decode(c, c.code, call);
    ASSERT_EQ(r.err, "");
    int64_t v = r.vDim;
    // Sequence 0: head 3 NaN, the other heads as the reference's.
    std::vector<double> got = emutest::outputRow(r, 0);
    std::vector<double> want = emutest::referenceRow(r, 0, 0, 300);
    for (int64_t h = 0; h < heads; ++h) {
      std::vector<double> g(got.begin() + h * v, got.begin() + (h + 1) * v);
      std::vector<double> w(want.begin() + h * v, want.begin() + (h + 1) * v);
      if (h == nanHead) {
        for (double x : g)
          ASSERT_TRUE(std::isnan(x)) << "head " << h << ", " << splits
                                     << " splits: a NaN in Q must reach it";
        continue;
      }
      EXPECT_LT(mla_ref::relativeFrobeniusError(g, w), 2e-2)
          << "head " << h << ", " << splits << " splits";
    }
    // Sequence 1: every output NaN.
    for (double x : emutest::outputRow(r, 1))
      ASSERT_TRUE(std::isnan(x)) << splits << " splits: a NaN in K / V must "
                                 << "reach every head";
    // Sequence 2: untouched.
    EXPECT_LT(
        mla_ref::relativeFrobeniusError(emutest::outputRow(r, 2),
                                        emutest::referenceRow(r, 2, 600, 900)),
        2e-2)
        << splits << " splits";
  }
}

INSTANTIATE_TEST_SUITE_P(Chips, NanInputs,
                         ::testing::Values("gfx950", "gfx942"));

} // namespace
