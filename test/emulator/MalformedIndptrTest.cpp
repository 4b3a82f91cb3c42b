//===- MalformedIndptrTest.cpp - no indptr content leaves the buffers -----===//
//
// Issue #16's memory-safety rule on the gfx950 and gfx942 code objects, run
// on the emulator with every buffer registered at its real size: whatever
// kv_indptr and qo_indptr hold (decreasing, negative, past the cache, past
// q's rows, lengths a lying host copy says divide), no kernel touches
// memory outside its buffers, a sequence with an invalid KV range gets
// zeros, one with an invalid output row writes nothing, and every other
// row matches the float64 reference. The launcher never reads the device
// indptrs, so these reach the kernels as they would on a GPU.
//
//===----------------------------------------------------------------------===//
#include "EmulatedDecode.h"

#include <cmath>

namespace {

using emutest::DecodeCall;
using emutest::DecodeResult;

/// What sequence b must give: its KV range if valid, else an empty one;
/// nothing at all if its output row is not a row of out.
void expectGuarded(const DecodeResult &r, const DecodeCall &call) {
  ASSERT_EQ(r.err, "");
  int64_t batch = int64_t(call.qo.size()) - 1;
  std::vector<bool> written(batch, false);
  for (int64_t b = 0; b < batch; ++b) {
    int32_t row = call.qo[b], begin = call.kv[b], end = call.kv[b + 1];
    if (row < 0 || row >= batch)
      continue; // writes nothing
    written[row] = true;
    bool valid = begin >= 0 && begin <= end && end <= call.kvRows;
    std::vector<double> got = emutest::outputRow(r, row);
    if (!valid) {
      for (double v : got)
        ASSERT_EQ(v, 0.0) << "sequence " << b << " (invalid range [" << begin
                          << ", " << end << ")) must give zeros";
      continue;
    }
    std::vector<double> want = emutest::referenceRow(r, row, begin, end);
    EXPECT_LT(mla_ref::relativeFrobeniusError(got, want), 2e-2)
        << "sequence " << b << " [" << begin << ", " << end << "), " << r.stage1
        << ", " << r.splits << " splits";
  }
  // Rows no valid qo_indptr entry names keep their poison.
  for (int64_t row = 0; row < batch; ++row) {
    if (written[row])
      continue;
    for (double v : emutest::outputRow(r, row)) {
      ASSERT_TRUE(std::isnan(v)) << "row " << row << " was written";
    }
  }
}

// The masked stage 1, one split (stage 1 writes out) and several (stage 2
// combines): decreasing, negative and past-the-cache ranges next to valid
// ones, and output rows outside out.
class MalformedIndptr : public ::testing::TestWithParam<const char *> {};

TEST_P(MalformedIndptr, MaskedKernelsStayInsideTheirBuffers) {
  emutest::Compiled c = emutest::load(GetParam());
  for (int64_t splits : {1, 4}) {
    DecodeCall call;
    //          ok   ok    decr. ok    ok     past  ok
    call.kv = {0, 17, 317, 100, 1100, 1400, 99999, 1000};
    // sequence 5 (past the cache) would read rows up to 99999;
    // sequence 6 starts past the cache and ends inside it.
    call.qo = {0, 1, 2, 3, 4, 5, 6, 7};
    call.kvRows = 1400;
    call.maxKvLen = 1000;
    call.numSplits = splits;
    DecodeResult r = emutest::decode(c, c.code, call);
    expectGuarded(r, call);
    EXPECT_EQ(r.stage1, c.spec + "_stage1_masked");

    call.kv = {-64, 10, 300, -5, 900, 900, 1400, 1401};
    call.qo = {0, 7, -1, 3, 1 << 30, 5, 6, 2};
    r = emutest::decode(c, c.code, call);
    expectGuarded(r, call);
  }
}

// The mask-free stage 1 runs when the host copy says every length divides;
// a device copy that disagrees (lengths 36 and 100, a range past the cache)
// must still stay inside the buffers: its exact split ranges are empty for
// lengths that do not divide.
TEST_P(MalformedIndptr, MaskFreeKernelTrustsNoLength) {
  emutest::Compiled c = emutest::load(GetParam());
  std::vector<int32_t> host = {0, 128, 256, 384, 512};
  for (int64_t splits : {1, 2}) {
    DecodeCall call;
    call.kv = {0, 128, 164, 264, 640};
    call.qo = {0, 1, 2, 3, 4};
    call.kvRows = 512;
    call.maxKvLen = 128;
    call.kvHost = host.data();
    call.numSplits = splits;
    DecodeResult r = emutest::decode(c, c.code, call);
    ASSERT_EQ(r.stage1, c.spec + "_stage1_mask_free") << r.err;
    ASSERT_EQ(r.err, "");
    // Sequence 0 is whole tiles and correct; 1 and 2 do not divide and
    // give zeros like the invalid range of 3.
    std::vector<double> want = emutest::referenceRow(r, 0, 0, 128);
    EXPECT_LT(mla_ref::relativeFrobeniusError(emutest::outputRow(r, 0), want),
              2e-2);
    for (int64_t b = 1; b < 4; ++b)
      for (double v : emutest::outputRow(r, b))
        ASSERT_EQ(v, 0.0) << "sequence " << b;
  }
}

INSTANTIATE_TEST_SUITE_P(Chips, MalformedIndptr,
                         ::testing::Values("gfx950", "gfx942"));

} // namespace
