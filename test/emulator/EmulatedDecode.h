//===- EmulatedDecode.h - one decode on the emulator, for the tests -------===//
//
// The code objects this test binary's CMake rule compiles (gfx950:
// deepseek_r1_decode_fp8, gfx942: deepseek_r1_decode_fp8_mi300x), run
// through the C launcher's emulator backend on
// random inputs (seed printed), with every buffer registered at its real
// size: a kernel access outside them is an emulator fault, not a silent
// read. The indptrs the kernels see are given as they are, valid or not.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_TEST_EMULATOR_EMULATEDDECODE_H
#define MLA_TEST_EMULATOR_EMULATEDDECODE_H

#include "mla/Emulator.h"
#include "mla/ManifestSpec.h"
#include "mla/Reference.h"
#include "mla/launcher_emulator.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace emutest {

struct Compiled {
  std::string spec, chip;
  mla_ref::Fp8Format fp8 = mla_ref::Fp8Format::E4M3FN;
  llvm::json::Object manifest;
  std::string code;
};

/// The fp8 spec's code object for `chip` ("gfx950" or "gfx942"), or that
/// of spec `spec` (gfx950's paged specs).
inline Compiled load(const std::string &chip = "gfx950",
                     const std::string &spec = "") {
  Compiled c;
  c.chip = chip;
  c.spec = !spec.empty()      ? spec
           : chip == "gfx942" ? "deepseek_r1_decode_fp8_mi300x"
                              : "deepseek_r1_decode_fp8";
  c.fp8 = chip == "gfx942" ? mla_ref::Fp8Format::E4M3FNUZ
                           : mla_ref::Fp8Format::E4M3FN;
  std::string dir = std::string(MLA_TEST_CODE_DIR) + "/" + chip;
  auto json = llvm::MemoryBuffer::getFile(dir + "/" + c.spec + ".json");
  auto code =
      llvm::MemoryBuffer::getFile(dir + "/" + c.spec + ".hsaco", false, false);
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

/// What the launcher and the kernels get.
struct DecodeCall {
  std::vector<int32_t> qo, kv; ///< the device indptrs (batch + 1 each)
  int64_t kvRows = 0;          ///< rows of the KV buffer (and kv_rows)
  int64_t maxKvLen = 0;
  const int32_t *kvHost = nullptr; ///< kv_indptr_host, or none
  int64_t numSplits = 0;
  size_t kvRowsShort = 0; ///< register the KV buffer this many rows short
  /// Paged specs: kv_indices (token list; `kv` indexes it) or, with
  /// `seqlens`, a block table of `tableCols` columns.
  std::vector<int32_t> table, seqlens;
  int64_t tableCols = 0;
  /// Inputs made NaN after the random fill: element nanQ of q (bf16) and
  /// element nanKv of the KV cache (the fp8 format's NaN code); -1: none.
  int64_t nanQ = -1, nanKv = -1;
  /// mxfp4 specs: after the quantiser's choice, the e8m0 scale of row r's
  /// block k becomes mxfp4Scale(r, k) where that is 0 .. 255 (-1 keeps
  /// it); a block given a scale of 128 or more has its values zeroed, so
  /// that every finite product stays small.
  std::function<int(int64_t row, int64_t block)> mxfp4Scale;
};

struct DecodeResult {
  std::string err;           ///< "" or the launcher's / emulator's error
  std::vector<uint16_t> out; ///< bf16, poisoned 0xFFFF before the run
  std::vector<double> q, kv; ///< the inputs, decoded
  int64_t heads = 0, qkDim = 0, vDim = 0;
  double softmaxScale = 0;
  std::string stage1;
  int64_t splits = 0;
};

inline DecodeResult decode(const Compiled &c, const std::string &code,
                           const DecodeCall &call) {
  DecodeResult r;
  auto spec = mlir::mla::ManifestSpec::read(c.manifest, code);
  if (!spec) {
    r.err = llvm::toString(spec.takeError());
    return r;
  }
  const mla_spec_desc *d = spec->get()->desc();
  r.heads = d->num_heads, r.qkDim = d->qk_dim, r.vDim = d->v_dim;
  r.softmaxScale = d->softmax_scale;
  int64_t batch = int64_t(call.qo.size()) - 1, qk = r.qkDim;
  unsigned seed = std::random_device{}();
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<uint16_t> q(size_t(batch) * r.heads * qk);
  r.q.resize(q.size());
  for (size_t i = 0; i < q.size(); ++i) {
    q[i] = mla_ref::floatToBf16(float(normal(rng)));
    r.q[i] = mla_ref::bf16ToFloat(q[i]);
  }
  // At least one row's worth of storage, so that kv is never NULL.
  bool mxfp4 = std::string(d->kv_type) == "f4E2M1FN";
  int64_t rowBytes = mxfp4 ? qk / 2 : qk, blocks = qk / 32;
  int64_t scaleStride = blocks + 3; // padded, as the task's quantiser does
  std::vector<uint8_t> kv(size_t(std::max<int64_t>(call.kvRows, 1)) * rowBytes),
      kvScales;
  r.kv.resize(size_t(call.kvRows) * qk);
  float scale = 1.0f / 64;
  if (mxfp4) {
    std::vector<double> raw(r.kv.size());
    for (double &x : raw)
      x = normal(rng);
    mla_ref::quantizeMxfp4(raw, call.kvRows, qk, scaleStride, kv, kvScales);
    for (int64_t row = 0; call.mxfp4Scale && row < call.kvRows; ++row)
      for (int64_t k = 0; k < blocks; ++k) {
        int code = call.mxfp4Scale(row, k);
        if (code < 0)
          continue;
        kvScales[row * scaleStride + k] = uint8_t(code);
        if (code >= 128)
          std::fill_n(&kv[row * rowBytes + k * 16], 16, uint8_t(0));
      }
    r.kv = mla_ref::dequantizeMxfp4(kv.data(), kvScales.data(), call.kvRows, qk,
                                    scaleStride);
    kv.resize(std::max<size_t>(kv.size(), size_t(rowBytes)));
    kvScales.resize(std::max<size_t>(kvScales.size(), size_t(scaleStride)));
  } else {
    for (size_t i = 0; i < r.kv.size(); ++i) {
      kv[i] = mla_ref::encodeFp8(normal(rng) * 64, c.fp8);
      r.kv[i] = mla_ref::decodeFp8(kv[i], c.fp8) * scale;
    }
  }
  if (call.nanQ >= 0) {
    q[call.nanQ] = 0x7FC0;
    r.q[call.nanQ] = std::nan("");
  }
  if (call.nanKv >= 0) {
    kv[call.nanKv] = c.fp8 == mla_ref::Fp8Format::E4M3FNUZ ? 0x80 : 0x7F;
    r.kv[call.nanKv] = std::nan("");
  }
  r.out.assign(size_t(batch) * r.heads * r.vDim, 0xFFFF);
  std::vector<int32_t> qo = call.qo, kvp = call.kv, table = call.table,
                       seqlens = call.seqlens;

  mla::emu::Device dev;
  const mla_backend *backend = mla_backend_emulator(&dev, nullptr, nullptr);
  const mla_backend *backends[] = {backend, nullptr};
  mla_context *ctx = nullptr;
  if (mla_context_create(d, c.chip.c_str(), 0, backends, &ctx)) {
    r.err = mla_last_error();
    mla_backend_emulator_destroy(backend);
    return r;
  }
  mla_decode_args a{};
  a.q = q.data();
  a.kv = kv.data();
  a.kv_scale = &scale;
  a.qo_indptr = qo.data();
  a.kv_indptr = kvp.data();
  a.out = r.out.data();
  a.batch = batch;
  a.max_kv_len = call.maxKvLen;
  a.kv_indptr_host = call.kvHost;
  a.num_splits = call.numSplits;
  a.kv_rows = call.kvRows;
  if (mxfp4) {
    a.kv_scales = kvScales.data();
    a.kv_scales_rows = call.kvRows;
    a.kv_scales_stride = scaleStride;
  }
  bool blockTable = d->kv_layout == MLA_KV_BLOCK_TABLE;
  if (d->kv_layout == MLA_KV_TOKEN_INDICES) {
    a.kv_indices = table.data();
    a.kv_indices_len = table.size();
  } else if (blockTable) {
    a.kv_indptr = nullptr;
    a.block_table = table.data();
    a.block_table_cols = call.tableCols;
    a.cache_seqlens = seqlens.data();
  }
  mla_decode_plan plan{};
  std::vector<uint8_t> ws;
  if (mla_plan_decode(ctx, &a, &plan)) {
    r.err = mla_last_error();
  } else {
    ws.assign(plan.workspace_bytes + 16, 0xFF);
    dev.registerBuffer(q.data(), q.size() * 2, "q", false);
    if (call.kvRows)
      dev.registerBuffer(kv.data(), (call.kvRows - call.kvRowsShort) * rowBytes,
                         "kv", false);
    if (mxfp4 && call.kvRows)
      dev.registerBuffer(kvScales.data(), call.kvRows * scaleStride,
                         "kv_scales", false);
    dev.registerBuffer(&scale, 4, "kv_scale", false);
    dev.registerBuffer(qo.data(), qo.size() * 4, "qo_indptr", false);
    if (!blockTable)
      dev.registerBuffer(kvp.data(), kvp.size() * 4, "kv_indptr", false);
    if (!table.empty())
      dev.registerBuffer(table.data(), table.size() * 4,
                         blockTable ? "block_table" : "kv_indices", false);
    if (!seqlens.empty())
      dev.registerBuffer(seqlens.data(), seqlens.size() * 4, "cache_seqlens",
                         false);
    dev.registerBuffer(r.out.data(), r.out.size() * 2, "out");
    if (plan.workspace_bytes)
      dev.registerBuffer(ws.data(), plan.workspace_bytes, "workspace");
    a.workspace = plan.workspace_bytes ? ws.data() : nullptr;
    a.workspace_bytes = plan.workspace_bytes;
    if (mla_decode_run(ctx, &plan, &a, nullptr))
      r.err = mla_last_error();
    r.stage1 = plan.stage1;
    r.splits = plan.splits;
  }
  mla_context_destroy(ctx);
  mla_backend_emulator_destroy(backend);
  return r;
}

/// The float64 reference of one sequence (Q row `qRow`, KV rows
/// [begin, end)) in `r`'s inputs: heads x vDim values.
inline std::vector<double> referenceRow(const DecodeResult &r, int64_t qRow,
                                        int32_t begin, int32_t end) {
  mla_ref::DecodeProblem p;
  p.batch = 1, p.heads = r.heads, p.qkDim = r.qkDim, p.vDim = r.vDim;
  p.softmaxScale = r.softmaxScale;
  p.qoIndptr = {0, 1};
  p.kvIndptr = {begin, end};
  size_t n = size_t(r.heads) * r.qkDim;
  std::vector<double> q(r.q.begin() + qRow * n, r.q.begin() + (qRow + 1) * n);
  return mla_ref::referenceDecode(p, q, r.kv);
}

/// The float64 reference of Q row `qRow` over the KV rows `rows` of `r`'s
/// cache, in order; a row index outside the cache stands for a row of
/// zeros (what a kernel reads for a page entry that names no row).
inline std::vector<double> referenceGathered(const DecodeResult &r,
                                             int64_t qRow,
                                             const std::vector<int64_t> &rows) {
  std::vector<double> kv(rows.size() * r.qkDim, 0.0);
  int64_t cacheRows = int64_t(r.kv.size()) / r.qkDim;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i] >= 0 && rows[i] < cacheRows)
      std::copy(r.kv.begin() + rows[i] * r.qkDim,
                r.kv.begin() + (rows[i] + 1) * r.qkDim,
                kv.begin() + i * r.qkDim);
  mla_ref::DecodeProblem p;
  p.batch = 1, p.heads = r.heads, p.qkDim = r.qkDim, p.vDim = r.vDim;
  p.softmaxScale = r.softmaxScale;
  p.qoIndptr = {0, 1};
  p.kvIndptr = {0, int32_t(rows.size())};
  size_t n = size_t(r.heads) * r.qkDim;
  std::vector<double> q(r.q.begin() + qRow * n, r.q.begin() + (qRow + 1) * n);
  return mla_ref::referenceDecode(p, q, kv);
}

/// Output row `row` of `r`, as floats.
inline std::vector<double> outputRow(const DecodeResult &r, int64_t row) {
  size_t n = size_t(r.heads) * r.vDim;
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = mla_ref::bf16ToFloat(r.out[row * n + i]);
  return v;
}

} // namespace emutest

#endif // MLA_TEST_EMULATOR_EMULATEDDECODE_H
