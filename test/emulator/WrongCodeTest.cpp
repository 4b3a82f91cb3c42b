//===- WrongCodeTest.cpp - the emulator rejects wrong kernels -------------===//
//
// The decode kernels as mla-compile writes them for gfx950
// (deepseek_r1_decode_fp8, built by this test's CMake rule), run through the
// C launcher's emulator backend:
//   - unmodified: the output matches a float64 reference of the same inputs;
//   - with one s_waitcnt of stage 1 turned into s_nop: the emulator reports
//     the register read before its load arrived;
//   - with the KV buffer registered one row short: the emulator faults on
//     the instruction that reads past it.
// (The third proof, a wrong MFMA layout failing the reference check, is
// test/tools/mla-run-wrong-layout.test.)
//
//===----------------------------------------------------------------------===//
#include "EmulatedDecode.h"

#include <cstring>

namespace {

using emutest::Compiled;
using emutest::load;

/// One decode of `lengths` on the emulator; returns "" or the launcher's
/// error, and the relative error against the float64 reference.
std::string decode(const Compiled &c, const std::string &code,
                   const std::vector<int> &lengths, size_t kvRowsShort,
                   double *relErr) {
  emutest::DecodeCall call;
  call.qo = {0};
  call.kv = {0};
  for (int l : lengths) {
    call.qo.push_back(call.qo.back() + 1);
    call.kv.push_back(call.kv.back() + l);
    call.maxKvLen = std::max<int64_t>(call.maxKvLen, l);
  }
  call.kvRows = call.kv.back();
  call.kvHost = call.kv.data();
  call.kvRowsShort = kvRowsShort;
  emutest::DecodeResult r = emutest::decode(c, code, call);
  if (r.err.empty() && relErr) {
    std::vector<double> want, got;
    for (size_t b = 0; b < lengths.size(); ++b) {
      std::vector<double> w =
          emutest::referenceRow(r, b, call.kv[b], call.kv[b + 1]);
      std::vector<double> g = emutest::outputRow(r, b);
      want.insert(want.end(), w.begin(), w.end());
      got.insert(got.end(), g.begin(), g.end());
    }
    *relErr = mla_ref::relativeFrobeniusError(got, want);
  }
  return r.err;
}

const std::vector<int> kLengths = {17, 300, 1000};

TEST(EmulatorWrongCode, UnmodifiedKernelsMatchTheReference) {
  Compiled c = load();
  double err = 1;
  EXPECT_EQ(decode(c, c.code, kLengths, 0, &err), "");
  EXPECT_LT(err, 2e-2);
}

TEST(EmulatorWrongCode, RemovedWaitcntIsReported) {
  Compiled c = load();
  auto co = mla::emu::CodeObject::load(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(c.code.data()), c.code.size()));
  ASSERT_TRUE(bool(co)) << llvm::toString(co.takeError());
  const mla::emu::Kernel *k =
      (*co)->kernel("deepseek_r1_decode_fp8_stage1_masked");
  ASSERT_TRUE(k);
  // The kernel's instructions up to the next kernel (or the text's end).
  uint64_t end = (*co)->textAddress() + (1u << 20);
  for (const mla::emu::Kernel &o : (*co)->kernels())
    if (o.entry > k->entry)
      end = std::min(end, o.entry);
  auto listing = (*co)->disassemble(k->entry, end);
  ASSERT_TRUE(bool(listing));
  // The first wait for vector memory (a vmcnt below its maximum, 63).
  uint64_t at = 0;
  std::string text;
  for (auto &[pc, t] : *listing)
    if (llvm::StringRef(t).starts_with("s_waitcnt") &&
        t.find("vmcnt(") != std::string::npos) {
      at = pc, text = t;
      break;
    }
  ASSERT_NE(at, 0u) << "no s_waitcnt vmcnt in stage 1";
  std::string patched = c.code;
  uint64_t off = (*co)->textFileOffset() + (at - (*co)->textAddress());
  const uint32_t sNop0 = 0xBF800000u; // s_nop 0 (SOPP)
  std::memcpy(&patched[off], &sNop0, 4);
  std::string err = decode(c, patched, kLengths, 0, nullptr);
  EXPECT_NE(err.find("before an s_waitcnt"), std::string::npos)
      << "removed '" << text << "' at 0x" << std::hex << at << ": " << err;
}

TEST(EmulatorWrongCode, OutOfBoundsReadFaults) {
  Compiled c = load();
  std::string err = decode(c, c.code, kLengths, 1, nullptr);
  EXPECT_NE(err.find("outside every registered buffer"), std::string::npos)
      << err;
  EXPECT_NE(err.find("past the end of 'kv'"), std::string::npos) << err;
  EXPECT_NE(err.find("_load_"), std::string::npos)
      << err; // the instruction's text
}

} // namespace
