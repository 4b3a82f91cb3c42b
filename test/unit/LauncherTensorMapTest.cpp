//===- LauncherTensorMapTest.cpp - tensor-map kernel arguments (ABI 10) ---===//
//
// A stage-1 kernel whose KV tile is copied by the tensor memory accelerator
// (sm_90a) takes a tensor map over kv as its last parameter: 128 bytes at a
// 64-byte aligned place of the packed arguments, built per call by the
// backend. The gfx950 fp8 descriptor, edited as mla-compile writes a bf16
// sm_90a one, on a recording backend; no GPU.
//
//===----------------------------------------------------------------------===//
#include "RecordingBackend.h"
#include "deepseek_r1_decode_fp8.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

/// Records each map it is asked for: its words are the request.
struct MapBackend : mlatest::RecordingBackend {
  bool hasTensorMaps() const override { return true; }
  mla_status tensorMap(const void *base, int64_t rows, int64_t cols,
                       int eltBytes, int boxRows, int boxCols, int boxes,
                       void *out, std::string &) const override {
    uint64_t words[16] = {reinterpret_cast<uintptr_t>(base),
                          uint64_t(rows),
                          uint64_t(cols),
                          uint64_t(eltBytes),
                          uint64_t(boxRows),
                          uint64_t(boxCols),
                          uint64_t(boxes)};
    std::memcpy(out, words, sizeof words);
    return MLA_SUCCESS;
  }
};

/// The descriptor with a tensor map over kv appended to each stage-1
/// kernel's arguments (bf16 KV: a box of 64 rows x 64 columns).
struct MapSpec {
  mla_spec_desc spec = deepseek_r1_decode_fp8_spec;
  mla_target_desc target = spec.targets[0];
  std::vector<mla_kernel_desc> kernels;
  std::vector<std::vector<mla_arg_desc>> args;
  explicit MapSpec(const mla_arg_desc &map) {
    spec.kv_type = "bf16";
    kernels.assign(target.kernels, target.kernels + target.num_kernels);
    args.reserve(kernels.size());
    for (mla_kernel_desc &k : kernels) {
      args.emplace_back(k.args, k.args + k.num_args);
      if (k.stage == 1)
        args.back().push_back(map);
      k.args = args.back().data();
      k.num_args = int(args.back().size());
    }
    target.kernels = kernels.data();
    spec.targets = &target;
  }
};

constexpr mla_arg_desc kMap = {"kv", MLA_ARG_TENSOR_MAP, 2, {64, 64, 0, 0}};
// What mla-compile writes since one copy takes a whole row: 9 boxes of 64
// columns (576).
constexpr mla_arg_desc kMap3 = {"kv", MLA_ARG_TENSOR_MAP, 3, {64, 64, 9, 0}};

/// Runs one call of `m` on `backend` and returns the stage-1 kernel's map
/// words (the last 16 of its packed arguments).
std::vector<uint64_t> mapWords(MapBackend &backend, MapSpec &m) {
  const mla_backend *backends[] = {&backend, nullptr};
  mla_context *ctx = nullptr;
  EXPECT_EQ(MLA_SUCCESS,
            mla_context_create(&m.spec, "gfx950", 0, backends, &ctx))
      << mla_last_error();
  if (!ctx)
    return {};
  int32_t qo[2] = {0, 1}, kvp[2] = {0, 700};
  mlatest::ScratchArgs scratch;
  mla_decode_args a = scratch.args(/*batch=*/1, /*maxKvLen=*/700,
                                   /*kvRows=*/700, /*splits=*/2, qo, kvp);
  mla_decode_plan plan;
  EXPECT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &a, &plan)) << mla_last_error();
  EXPECT_EQ(MLA_SUCCESS, mla_decode_run(ctx, &plan, &a, nullptr))
      << mla_last_error();
  mla_context_destroy(ctx);
  if (backend.launches.empty() || backend.launches[0].words.size() < 16)
    return {};
  const std::vector<uint64_t> &w = backend.launches[0].words;
  return {w.end() - 16, w.end()};
}

TEST(LauncherTensorMap, RankThreeMapsTakeTheirBoxesARow) {
  MapBackend backend;
  MapSpec m3(kMap3);
  std::vector<uint64_t> map = mapWords(backend, m3);
  ASSERT_EQ(16u, map.size());
  EXPECT_EQ(700u, map[1]);
  EXPECT_EQ(576u, map[2]);
  EXPECT_EQ(64u, map[4]);
  EXPECT_EQ(64u, map[5]);
  EXPECT_EQ(9u, map[6]); // a 3-D map, 9 boxes a copy
  // The rank-2 form (specs compiled before) still builds a 2-D map.
  MapBackend backend2;
  MapSpec m2(kMap);
  map = mapWords(backend2, m2);
  ASSERT_EQ(16u, map.size());
  EXPECT_EQ(0u, map[6]);
}

TEST(LauncherTensorMap, PackedLastAt64BytesAndBuiltPerCall) {
  MapBackend backend;
  const mla_backend *backends[] = {&backend, nullptr};
  MapSpec m(kMap);
  mla_context *ctx = nullptr;
  ASSERT_EQ(MLA_SUCCESS,
            mla_context_create(&m.spec, "gfx950", 0, backends, &ctx))
      << mla_last_error();
  int32_t qo[3] = {0, 1, 2}, kvp[3] = {0, 1000, 2000};
  mlatest::ScratchArgs scratch;
  mla_decode_args a = scratch.args(/*batch=*/2, /*maxKvLen=*/1000,
                                   /*kvRows=*/2005, /*splits=*/4, qo, kvp);
  mla_decode_plan plan;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &a, &plan)) << mla_last_error();
  ASSERT_EQ(MLA_SUCCESS, mla_decode_run(ctx, &plan, &a, nullptr))
      << mla_last_error();
  ASSERT_EQ(2u, backend.launches.size());
  const std::vector<uint64_t> &w = backend.launches[0].words;
  // The memref fields (8 bytes each), then the map at the next multiple
  // of 64 bytes: the last 16 words, the map of kv's 2005 x 576 bf16.
  ASSERT_EQ(0u, w.size() % 8);
  ASSERT_GE(w.size(), 16u);
  const uint64_t *map = w.data() + w.size() - 16;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(scratch.buf), map[0]);
  EXPECT_EQ(2005u, map[1]);
  EXPECT_EQ(576u, map[2]);
  EXPECT_EQ(2u, map[3]);
  EXPECT_EQ(64u, map[4]);
  EXPECT_EQ(64u, map[5]);
  // Stage 2 has none: its arguments are memref fields only.
  EXPECT_NE(reinterpret_cast<uintptr_t>(scratch.buf),
            backend.launches[1].words.back());
  // A cache of no rows: no tile is copied and no map can be built; the
  // parameter is zeros.
  backend.launches.clear();
  kvp[1] = kvp[2] = 0;
  a.kv_rows = 0;
  a.max_kv_len = 0;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &a, &plan)) << mla_last_error();
  ASSERT_EQ(MLA_SUCCESS, mla_decode_run(ctx, &plan, &a, nullptr))
      << mla_last_error();
  ASSERT_FALSE(backend.launches.empty());
  const std::vector<uint64_t> &z = backend.launches[0].words;
  for (size_t i = z.size() - 16; i < z.size(); ++i)
    EXPECT_EQ(0u, z[i]) << i;
  mla_context_destroy(ctx);
}

TEST(LauncherTensorMap, BackendsWithoutMapsAndMalformedMapsAreRefused) {
  mlatest::RecordingBackend plain; // builds no tensor maps (HIP, emulator)
  MapBackend maps;
  mla_context *ctx = nullptr;
  {
    const mla_backend *backends[] = {&plain, nullptr};
    MapSpec m(kMap);
    EXPECT_EQ(MLA_ERROR_INVALID_SPEC,
              mla_context_create(&m.spec, "gfx950", 0, backends, &ctx));
    EXPECT_NE(std::string(mla_last_error()).find("takes a tensor map"),
              std::string::npos)
        << mla_last_error();
  }
  const mla_backend *backends[] = {&maps, nullptr};
  for (mla_arg_desc bad :
       {mla_arg_desc{"q", MLA_ARG_TENSOR_MAP, 2, {64, 64, 0, 0}},
        mla_arg_desc{"kv", MLA_ARG_TENSOR_MAP, 2, {512, 64, 0, 0}},
        // 16 bf16 columns: rows of 32 bytes (the swizzles take 128 or 64).
        mla_arg_desc{"kv", MLA_ARG_TENSOR_MAP, 2, {64, 16, 0, 0}},
        mla_arg_desc{"kv", MLA_ARG_TENSOR_MAP, 4, {64, 64, 1, 1}},
        // Rank 3: more boxes than a row holds (10 x 64 > 576), or none.
        mla_arg_desc{"kv", MLA_ARG_TENSOR_MAP, 3, {64, 64, 10, 0}},
        mla_arg_desc{"kv", MLA_ARG_TENSOR_MAP, 3, {64, 64, 0, 0}}}) {
    MapSpec m(bad);
    EXPECT_EQ(MLA_ERROR_INVALID_SPEC,
              mla_context_create(&m.spec, "gfx950", 0, backends, &ctx));
    EXPECT_NE(
        std::string(mla_last_error()).find("a tensor map must be the last"),
        std::string::npos)
        << mla_last_error();
  }
  // Not the last argument.
  MapSpec m(kMap);
  for (size_t k = 0; k < m.kernels.size(); ++k)
    if (m.kernels[k].stage == 1) {
      std::swap(m.args[k].back(), m.args[k].front());
      m.kernels[k].args = m.args[k].data();
    }
  EXPECT_EQ(MLA_ERROR_INVALID_SPEC,
            mla_context_create(&m.spec, "gfx950", 0, backends, &ctx));
  // fp8 KV with a box of 128 one-byte columns is well formed (576 = 4.5
  // boxes is not: its rows are not whole boxes).
  MapSpec f(mla_arg_desc{"kv", MLA_ARG_TENSOR_MAP, 2, {64, 128, 0, 0}});
  f.spec.kv_type = "f8E4M3FN";
  EXPECT_EQ(MLA_ERROR_INVALID_SPEC,
            mla_context_create(&f.spec, "gfx950", 0, backends, &ctx));
}

} // namespace
