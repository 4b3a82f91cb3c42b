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
#include "mla/Emulator.h"
#include "mla/ManifestSpec.h"
#include "mla/Reference.h"
#include "mla/launcher_emulator.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace {

struct Compiled {
  llvm::json::Object manifest;
  std::string code;
};

Compiled load() {
  Compiled c;
  std::string dir = MLA_TEST_CODE_DIR;
  auto json = llvm::MemoryBuffer::getFile(dir + "/deepseek_r1_decode_fp8.json");
  auto code = llvm::MemoryBuffer::getFile(dir + "/deepseek_r1_decode_fp8.hsaco",
                                          false, false);
  EXPECT_TRUE(json && code) << "run the build first (" << dir << ")";
  if (!json || !code)
    return c;
  auto parsed = llvm::json::parse((*json)->getBuffer());
  EXPECT_TRUE(bool(parsed));
  if (parsed)
    c.manifest = std::move(*parsed->getAsObject());
  c.code = (*code)->getBuffer().str();
  return c;
}

/// One decode of `lengths` on the emulator; returns "" or the launcher's
/// error, and the relative error against the float64 reference.
std::string decode(const Compiled &c, const std::string &code,
                   const std::vector<int> &lengths, size_t kvRowsShort,
                   double *relErr) {
  auto spec = mlir::mla::ManifestSpec::read(c.manifest, code);
  if (!spec)
    return llvm::toString(spec.takeError());
  const mla_spec_desc *d = spec->get()->desc();
  int heads = d->num_heads, qk = d->qk_dim, dv = d->v_dim;
  int64_t batch = lengths.size(), maxLen = 0;
  std::vector<int32_t> qo{0}, kvp{0};
  for (int l : lengths) {
    qo.push_back(qo.back() + 1);
    kvp.push_back(kvp.back() + l);
    maxLen = std::max<int64_t>(maxLen, l);
  }
  unsigned seed = std::random_device{}();
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<uint16_t> q(size_t(batch) * heads * qk);
  std::vector<double> qd(q.size()), kvd(size_t(kvp.back()) * qk);
  for (size_t i = 0; i < q.size(); ++i) {
    q[i] = mla_ref::floatToBf16(float(normal(rng)));
    qd[i] = mla_ref::bf16ToFloat(q[i]);
  }
  std::vector<uint8_t> kv(kvd.size());
  float scale = 1.0f / 64;
  for (size_t i = 0; i < kv.size(); ++i) {
    kv[i] = mla_ref::encodeFp8(normal(rng) * 64, mla_ref::Fp8Format::E4M3FN);
    kvd[i] = mla_ref::decodeFp8(kv[i], mla_ref::Fp8Format::E4M3FN) * scale;
  }
  std::vector<uint16_t> out(size_t(batch) * heads * dv, 0xFFFF);

  mla::emu::Device dev;
  const mla_backend *backend = mla_backend_emulator(&dev, nullptr, nullptr);
  const mla_backend *backends[] = {backend, nullptr};
  mla_context *ctx = nullptr;
  std::string err;
  if (mla_context_create(d, "gfx950", 0, backends, &ctx)) {
    err = mla_last_error();
    mla_backend_emulator_destroy(backend);
    return err;
  }
  size_t wsBytes = 0;
  mla_workspace_size(ctx, batch, maxLen, &wsBytes);
  std::vector<uint8_t> ws(wsBytes + 16, 0xFF);
  dev.registerBuffer(q.data(), q.size() * 2, "q", false);
  dev.registerBuffer(kv.data(), kv.size() - kvRowsShort * qk, "kv", false);
  dev.registerBuffer(&scale, 4, "kv_scale", false);
  dev.registerBuffer(qo.data(), qo.size() * 4, "qo_indptr", false);
  dev.registerBuffer(kvp.data(), kvp.size() * 4, "kv_indptr", false);
  dev.registerBuffer(out.data(), out.size() * 2, "out");
  dev.registerBuffer(ws.data(), wsBytes, "workspace");
  mla_decode_args a{q.data(),
                    kv.data(),
                    &scale,
                    qo.data(),
                    kvp.data(),
                    out.data(),
                    wsBytes ? ws.data() : nullptr,
                    wsBytes,
                    batch,
                    maxLen,
                    kvp.data()};
  if (mla_decode(ctx, &a, nullptr))
    err = mla_last_error();
  mla_context_destroy(ctx);
  mla_backend_emulator_destroy(backend);
  if (err.empty() && relErr) {
    mla_ref::DecodeProblem p;
    p.batch = batch, p.heads = heads, p.qkDim = qk, p.vDim = dv;
    p.softmaxScale = d->softmax_scale;
    p.qoIndptr = qo, p.kvIndptr = kvp;
    std::vector<double> want = mla_ref::referenceDecode(p, qd, kvd),
                        got(out.size());
    for (size_t i = 0; i < out.size(); ++i)
      got[i] = mla_ref::bf16ToFloat(out[i]);
    *relErr = mla_ref::relativeFrobeniusError(got, want);
  }
  return err;
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
