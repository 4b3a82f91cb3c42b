//===- LauncherTest.cpp - the C launcher against a recording backend ------===//
//
// The launcher's validation, planning and argument packing, through the
// descriptors mla-compile generated for gfx950 (deepseek_r1_decode_fp8.h,
// built by this test's CMake rule) and a fake backend that records what
// would have been launched. Every error path must return its status with a
// message and launch nothing.
//
//===----------------------------------------------------------------------===//
#include "RecordingBackend.h"
#include "deepseek_r1_decode_fp8.h"
#include "mla/SplitCostModel.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

extern "C" int mla_c_header_target_count(void); // GeneratedHeaderC.c

namespace {

using mlatest::Launch;

/// The recording backend, which must only ever be given ELF code objects
/// and whole 8-byte argument words.
struct FakeBackend : mlatest::RecordingBackend {
  ~FakeBackend() {
    EXPECT_TRUE(loadedElf || !loadedBytes);
    EXPECT_FALSE(oddArgBytes);
  }
};

/// 16-byte aligned fake device pointers (never dereferenced).
template <int N> struct alignas(256) Arena { unsigned char bytes[N]; };

class LauncherTest : public ::testing::Test {
protected:
  FakeBackend backend;
  mla_context *ctx = nullptr;
  Arena<4096> q, kv, out, scale, qo, kvp;
  std::vector<unsigned char> ws = std::vector<unsigned char>(64 << 20);
  int32_t hostIndptr[5] = {0, 4096, 8192, 12288, 16384};

  void SetUp() override {
    const mla_backend *backends[] = {&backend, nullptr};
    ASSERT_EQ(MLA_SUCCESS, mla_context_create(&deepseek_r1_decode_fp8_spec,
                                              "gfx950", 0, backends, &ctx))
        << mla_last_error();
  }
  void TearDown() override { mla_context_destroy(ctx); }

  void *wsAligned() {
    auto p = reinterpret_cast<uintptr_t>(ws.data());
    return reinterpret_cast<void *>((p + 255) / 256 * 256);
  }
  mla_decode_args args(int64_t batch = 4, int64_t maxKv = 1024) {
    mla_decode_args a{};
    a.q = q.bytes;
    a.kv = kv.bytes;
    a.kv_scale = reinterpret_cast<const float *>(scale.bytes);
    a.qo_indptr = reinterpret_cast<const int32_t *>(qo.bytes);
    a.kv_indptr = reinterpret_cast<const int32_t *>(kvp.bytes);
    a.out = out.bytes;
    a.workspace = wsAligned();
    a.workspace_bytes = ws.size() - 256;
    a.batch = batch;
    a.max_kv_len = maxKv;
    a.kv_rows = batch * maxKv + 7; // a cache with rows no sequence uses
    return a;
  }
  /// Asserts `s` failed with `want`, said why, and launched nothing.
  void expectRefused(mla_status s, mla_status want, const char *phrase) {
    EXPECT_EQ(want, s) << mla_status_name(s);
    EXPECT_NE(std::string(mla_last_error()).find(phrase), std::string::npos)
        << mla_last_error();
    EXPECT_NE(std::string(mla_last_error()).find(mla_status_name(want)),
              std::string::npos);
    EXPECT_TRUE(backend.launches.empty());
  }
  int64_t modelSplits(int64_t batch, int64_t kv, int64_t kvRowBytes = 576) {
    const mla_target_desc &t = deepseek_r1_decode_fp8_spec.targets[0];
    int perCu = 1 << 30;
    for (int i = 0; i < t.num_kernels; ++i)
      if (t.kernels[i].stage == 1)
        perCu = std::min(perCu, t.kernels[i].programs_per_cu);
    mlir::mla::SplitProblem p;
    p.batch = batch;
    p.kvLen = kv;
    p.blockN = deepseek_r1_decode_fp8_spec.block_n;
    p.blockM = deepseek_r1_decode_fp8_spec.block_m;
    p.kvRowBytes = kvRowBytes;
    p.computeUnits = int64_t(t.compute_units) * perCu;
    return mlir::mla::chooseSplits(p);
  }
};

TEST_F(LauncherTest, GeneratedHeaderDescribesTheCompiledKernels) {
  const mla_spec_desc &s = deepseek_r1_decode_fp8_spec;
  EXPECT_STREQ("deepseek_r1_decode_fp8", s.name);
  EXPECT_EQ(16, s.num_heads);
  EXPECT_EQ(576, s.qk_dim);
  EXPECT_EQ(512, s.v_dim);
  EXPECT_EQ(1, s.has_kv_scale);
  ASSERT_EQ(1, s.num_targets);
  EXPECT_STREQ("gfx950", s.targets[0].chip);
  EXPECT_EQ(256, s.targets[0].compute_units);
  EXPECT_EQ(s.targets[0].code_size, backend.loadedBytes);
  // Stage 1 masked + mask-free, stage 2; all resolved at create.
  ASSERT_EQ(3, s.targets[0].num_kernels);
  EXPECT_EQ(3u, backend.functions.size());
  EXPECT_EQ(1, mla_c_header_target_count()); // the header also compiles as C99
}

TEST_F(LauncherTest, PlansSplitsByTheCostModelAndMasksByTheRule) {
  for (auto [batch, kv] : {std::pair<int64_t, int64_t>{4, 1024},
                           {64, 1024},
                           {256, 8192},
                           {1, 65536},
                           {128, 0}}) {
    mla_decode_args a = args(batch, kv);
    mla_decode_plan plan;
    ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &a, &plan)) << mla_last_error();
    EXPECT_EQ(modelSplits(batch, kv), plan.splits) << batch << "x" << kv;
    // Without a host copy of kv_indptr the launcher cannot see divisibility.
    EXPECT_STREQ("deepseek_r1_decode_fp8_stage1_masked", plan.stage1);
    EXPECT_EQ(plan.splits > 1, plan.stage2 != nullptr);
    size_t bytes = 0;
    ASSERT_EQ(MLA_SUCCESS, mla_workspace_size(ctx, batch, kv, &bytes));
    EXPECT_EQ(bytes, plan.workspace_bytes);
    EXPECT_EQ(plan.splits > 1, bytes > 0);
  }
  // Lengths that divide splits * 64 -> mask-free; one that does not -> masked.
  mla_decode_args a = args(4, 4096);
  mla_decode_plan plan;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &a, &plan));
  a.kv_indptr_host = hostIndptr;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &a, &plan));
  ASSERT_EQ(0, 4096 % (plan.splits * 64)) << plan.splits;
  EXPECT_STREQ("deepseek_r1_decode_fp8_stage1_mask_free", plan.stage1);
  int32_t ragged[5] = {0, 4096, 8191, 12287, 16383};
  a.kv_indptr_host = ragged;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &a, &plan));
  EXPECT_STREQ("deepseek_r1_decode_fp8_stage1_masked", plan.stage1);
}

// The model prices a tile by its KV bytes: the same kernels reading bf16
// rows (1152 bytes, twice fp8's) split more where stage 2's fixed costs
// then weigh less.
TEST_F(LauncherTest, SplitCountWeighsTheKvRowBytes) {
  mla_spec_desc spec = deepseek_r1_decode_fp8_spec;
  spec.kv_type = "bf16";
  spec.has_kv_scale = 0;
  const mla_backend *backends[] = {&backend, nullptr};
  mla_context *bf16 = nullptr;
  ASSERT_EQ(MLA_SUCCESS,
            mla_context_create(&spec, "gfx950", 0, backends, &bf16))
      << mla_last_error();
  int differ = 0;
  for (int64_t batch : {4, 32, 64, 256})
    for (int64_t kv : {1024, 8192}) {
      mla_decode_args a = args(batch, kv);
      a.kv_scale = nullptr;
      mla_decode_plan plan, fp8;
      ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(bf16, &a, &plan))
          << mla_last_error();
      EXPECT_EQ(modelSplits(batch, kv, 1152), plan.splits)
          << batch << "x" << kv;
      a = args(batch, kv);
      ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &a, &fp8));
      EXPECT_GE(plan.splits, fp8.splits) << batch << "x" << kv;
      differ += plan.splits != fp8.splits;
    }
  EXPECT_GT(differ, 0);
  mla_context_destroy(bf16);
}

TEST_F(LauncherTest, LaunchesBothStagesWithPackedMemrefDescriptors) {
  mla_decode_args a = args(4, 1024);
  int stream = 0;
  ASSERT_EQ(MLA_SUCCESS, mla_decode(ctx, &a, &stream)) << mla_last_error();
  mla_decode_plan plan;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &a, &plan));
  ASSERT_GT(plan.splits, 1);
  ASSERT_EQ(2u, backend.launches.size());
  const Launch &s1 = backend.launches[0], &s2 = backend.launches[1];
  EXPECT_EQ(plan.stage1, s1.kernel);
  EXPECT_EQ(4u, s1.gx);
  EXPECT_EQ(unsigned(plan.splits), s1.gy);
  EXPECT_EQ(256u, s1.block); // 4 waves of 64
  EXPECT_GT(s1.shared, 0u);
  EXPECT_EQ(&stream, s1.stream);
  EXPECT_EQ(plan.stage2, s2.kernel);
  EXPECT_EQ(4u, s2.gx);
  EXPECT_EQ(16u, s2.gy);
  EXPECT_EQ(0u, s2.shared);

  // Stage 1: q (rank 3), kv (2), kv_scale (1), qo_indptr (1), kv_indptr (1),
  // num_splits, partial (4), lse (3), out (3); a memref of rank r is 3 + 2r
  // words.
  const std::vector<uint64_t> &w = s1.words;
  ASSERT_EQ(size_t(9 + 7 + 5 + 5 + 5 + 1 + 11 + 9 + 9), w.size());
  auto ptr = [](const void *p) {
    return uint64_t(reinterpret_cast<uintptr_t>(p));
  };
  // q: [4, 16, 576], strides [9216, 576, 1]
  EXPECT_EQ((std::vector<uint64_t>{ptr(q.bytes), ptr(q.bytes), 0, 4, 16, 576,
                                   9216, 576, 1}),
            std::vector<uint64_t>(w.begin(), w.begin() + 9));
  // kv: [kv_rows, 576], strides [576, 1]: the kernels bound their rows by
  // the descriptor's size (MLAExpandDecode's guardedKvRange).
  EXPECT_EQ((std::vector<uint64_t>{ptr(kv.bytes), ptr(kv.bytes), 0, 4103, 576,
                                   576, 1}),
            std::vector<uint64_t>(w.begin() + 9, w.begin() + 16));
  EXPECT_EQ(uint64_t(plan.splits), w[31]); // num_splits
  // partial: the workspace, [4, S, 16, 512]; lse after it, 256-B aligned.
  EXPECT_EQ(ptr(a.workspace), w[32]);
  EXPECT_EQ(uint64_t(plan.splits), w[32 + 4]);
  uint64_t partialBytes = 4 * plan.splits * 16 * 512 * 4;
  EXPECT_EQ(ptr(a.workspace) + (partialBytes + 255) / 256 * 256, w[43]);
  EXPECT_EQ(ptr(out.bytes), w[52]);
}

TEST_F(LauncherTest, RunReusesThePlanOnNewBuffersAndChangedIndptr) {
  // Plan once (host lengths that divide: the mask-free stage 1).
  mla_decode_args a = args(4, 4096);
  a.kv_indptr_host = hostIndptr;
  mla_decode_plan plan;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &a, &plan)) << mla_last_error();
  ASSERT_TRUE(plan.mask_free);
  ASSERT_EQ(4, plan.batch);
  ASSERT_EQ(4096, plan.max_kv_len);
  // Run on other buffers (a new q and output) after kv_indptr's contents
  // changed (still dividing lengths, in another order): the plan's kernels
  // and split count, the new pointers.
  Arena<4096> q2, out2;
  mla_decode_args b = a;
  b.q = q2.bytes;
  b.out = out2.bytes;
  int32_t reordered[5] = {0, 0, 4096, 8192, 12288}; // 0, 4096, 4096, 4096
  b.kv_indptr_host = reordered;
  ASSERT_EQ(MLA_SUCCESS, mla_decode_run(ctx, &plan, &b, nullptr))
      << mla_last_error();
  // Device contents unknown to the host (no host copy): the plan stands.
  b.kv_indptr_host = nullptr;
  ASSERT_EQ(MLA_SUCCESS, mla_decode_run(ctx, &plan, &b, nullptr))
      << mla_last_error();
  ASSERT_EQ(4u, backend.launches.size());
  for (int i : {0, 2}) {
    EXPECT_EQ(plan.stage1, backend.launches[i].kernel);
    EXPECT_EQ(unsigned(plan.splits), backend.launches[i].gy);
    EXPECT_EQ(uint64_t(reinterpret_cast<uintptr_t>(q2.bytes)),
              backend.launches[i].words[0]);
    EXPECT_EQ(plan.stage2, backend.launches[i + 1].kernel);
  }
  backend.launches.clear();
  // A host copy that no longer divides cannot run the mask-free plan.
  int32_t ragged[5] = {0, 4096, 8191, 12287, 16383};
  b.kv_indptr_host = ragged;
  expectRefused(mla_decode_run(ctx, &plan, &b, nullptr),
                MLA_ERROR_INVALID_ARGUMENT, "plan again");
  // Another shape needs another plan; a plan of another context is refused.
  b = args(8, 4096);
  expectRefused(mla_decode_run(ctx, &plan, &b, nullptr),
                MLA_ERROR_INVALID_ARGUMENT, "the plan was made for batch 4");
  mla_decode_plan foreign = plan;
  foreign.context = nullptr;
  a.kv_indptr_host = nullptr;
  expectRefused(mla_decode_run(ctx, &foreign, &a, nullptr),
                MLA_ERROR_INVALID_ARGUMENT, "another context");
  // The workspace is still checked.
  a = args(4, 4096);
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &a, &plan));
  a.workspace_bytes = 16;
  expectRefused(mla_decode_run(ctx, &plan, &a, nullptr),
                MLA_ERROR_WORKSPACE_TOO_SMALL, "workspace has 16 bytes");
}

TEST_F(LauncherTest, OneSplitLaunchesStageOneOnly) {
  mla_decode_args a = args(512, 64);
  mla_decode_plan plan;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &a, &plan));
  ASSERT_EQ(1, plan.splits);
  EXPECT_EQ(0u, plan.workspace_bytes);
  a.workspace = nullptr; // not needed with one split
  a.workspace_bytes = 0;
  ASSERT_EQ(MLA_SUCCESS, mla_decode(ctx, &a, nullptr)) << mla_last_error();
  ASSERT_EQ(1u, backend.launches.size());
}

/// deepseek_r1_decode_fp8_spec (gfx950) with its kernel descriptors copied,
/// for the tests that change them (dependent_launch, cluster_programs).
struct EditableSpec {
  std::vector<mla_kernel_desc> kernels;
  mla_target_desc target;
  mla_spec_desc spec;
  EditableSpec()
      : target(deepseek_r1_decode_fp8_spec.targets[0]),
        spec(deepseek_r1_decode_fp8_spec) {
    kernels.assign(target.kernels, target.kernels + target.num_kernels);
    target.kernels = kernels.data();
    spec.targets = &target;
  }
  EditableSpec(const EditableSpec &) = delete;
  EditableSpec &operator=(const EditableSpec &) = delete;
};

// A kernel whose descriptor says dependent_launch (the manifest's key; sm_90
// stage 2) reaches the backend as a dependent launch, the others do not.
TEST_F(LauncherTest, DependentLaunchFlagReachesTheBackend) {
  EditableSpec e;
  for (mla_kernel_desc &k : e.kernels) {
    EXPECT_EQ(0, k.dependent_launch) << k.name; // gfx950: none
    k.dependent_launch = k.stage == 2;
  }
  const mla_spec_desc &spec = e.spec;
  const mla_backend *backends[] = {&backend, nullptr};
  mla_context *dep = nullptr;
  ASSERT_EQ(MLA_SUCCESS, mla_context_create(&spec, "gfx950", 0, backends, &dep))
      << mla_last_error();
  mla_decode_args a = args(4, 1024);
  ASSERT_EQ(MLA_SUCCESS, mla_decode(dep, &a, nullptr)) << mla_last_error();
  ASSERT_EQ(2u, backend.launches.size());
  EXPECT_FALSE(backend.launches[0].dependent);
  EXPECT_TRUE(backend.launches[1].dependent);
  mla_context_destroy(dep);
}

// The single launch for small batches, asked for with MLA_DECODE_ONE_LAUNCH:
// where stage 1's descriptor says it combines up to cluster_programs splits
// (sm_90) and the backend holds the grid's clusters at once, the plan
// launches stage 1 alone with cluster dims (1, splits, 1); otherwise, or
// without the flag, stage 2 runs as before. A plan whose cluster_splits
// was altered is refused.
TEST_F(LauncherTest, SmallBatchesCombineInOneClusteredLaunch) {
  EditableSpec e;
  std::vector<mla_kernel_desc> &kernels = e.kernels;
  for (mla_kernel_desc &k : kernels) {
    EXPECT_EQ(0, k.cluster_programs) << k.name; // gfx950: no clusters
    k.cluster_programs = k.stage == 1 ? 16 : 0;
  }
  const mla_spec_desc &spec = e.spec;
  backend.clusters = 16;
  const mla_backend *backends[] = {&backend, nullptr};
  mla_context *cl = nullptr;
  ASSERT_EQ(MLA_SUCCESS, mla_context_create(&spec, "gfx950", 0, backends, &cl))
      << mla_last_error();
  // Sizes 2..16 asked once per stage-1 kernel, at creation.
  EXPECT_EQ(15u * (kernels.size() - 1), backend.clusterQueries.size());
  mla_decode_args a = args(4, 1024);
  a.num_splits = 8;
  mla_decode_plan plan;
  // Not asked for: two launches.
  ASSERT_EQ(MLA_SUCCESS, mla_decode(cl, &a, nullptr)) << mla_last_error();
  ASSERT_EQ(2u, backend.launches.size());
  EXPECT_EQ(0u, backend.launches[0].clusterY);
  backend.launches.clear();
  a.flags = MLA_DECODE_ONE_LAUNCH;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(cl, &a, &plan)) << mla_last_error();
  EXPECT_EQ(8, plan.cluster_splits);
  EXPECT_EQ(nullptr, plan.stage2);
  ASSERT_EQ(MLA_SUCCESS, mla_decode_run(cl, &plan, &a, nullptr))
      << mla_last_error();
  ASSERT_EQ(1u, backend.launches.size());
  EXPECT_EQ(8u, backend.launches[0].clusterY);
  EXPECT_EQ(4u, backend.launches[0].gx);
  EXPECT_EQ(8u, backend.launches[0].gy);
  // More splits than a cluster holds, or more clusters than fit at once:
  // stage 2 combines.
  a.num_splits = 32;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(cl, &a, &plan)) << mla_last_error();
  EXPECT_EQ(0, plan.cluster_splits);
  EXPECT_NE(nullptr, plan.stage2);
  a = args(17, 1024);
  a.num_splits = 8;
  a.flags = MLA_DECODE_ONE_LAUNCH;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(cl, &a, &plan)) << mla_last_error();
  EXPECT_EQ(0, plan.cluster_splits); // 17 clusters, 16 at once
  a = args(4, 1024);
  a.num_splits = 8;
  a.flags = MLA_DECODE_ONE_LAUNCH;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(cl, &a, &plan)) << mla_last_error();
  backend.launches.clear();
  plan.cluster_splits = 4;
  expectRefused(mla_decode_run(cl, &plan, &a, nullptr),
                MLA_ERROR_INVALID_ARGUMENT, "cluster_splits 4");
  mla_context_destroy(cl);
  // A stage-2 kernel that claims to combine in a cluster is malformed.
  for (mla_kernel_desc &k : kernels)
    k.cluster_programs = k.stage == 2 ? 16 : 0;
  expectRefused(mla_context_create(&spec, "gfx950", 0, backends, &cl),
                MLA_ERROR_INVALID_SPEC, "cluster_programs 16");
}

// The spec's one_launch (the manifest key; bf16 sm_90a sets it) makes the
// single launch the plan's default where it applies;
// MLA_DECODE_TWO_LAUNCHES refuses it per call, MLA_DECODE_ONE_LAUNCH asks
// for it whatever the spec says, and the two together are refused naming
// the flags. A descriptor whose one_launch is neither 0 nor 1 is malformed.
TEST_F(LauncherTest, SpecOneLaunchIsThePlansDefault) {
  EditableSpec e;
  EXPECT_EQ(0, e.spec.one_launch); // the fp8 spec keeps two launches
  for (mla_kernel_desc &k : e.kernels)
    k.cluster_programs = k.stage == 1 ? 16 : 0;
  mla_spec_desc &spec = e.spec;
  spec.one_launch = 1;
  backend.clusters = 16;
  const mla_backend *backends[] = {&backend, nullptr};
  mla_context *cl = nullptr;
  ASSERT_EQ(MLA_SUCCESS, mla_context_create(&spec, "gfx950", 0, backends, &cl))
      << mla_last_error();
  mla_decode_args a = args(4, 1024);
  a.num_splits = 8;
  mla_decode_plan plan;
  // No flag: the spec's default, one launch.
  ASSERT_EQ(MLA_SUCCESS, mla_decode(cl, &a, nullptr)) << mla_last_error();
  ASSERT_EQ(1u, backend.launches.size());
  EXPECT_EQ(8u, backend.launches[0].clusterY);
  backend.launches.clear();
  // Where it does not apply (more splits than a cluster holds), two.
  a.num_splits = 32;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(cl, &a, &plan)) << mla_last_error();
  EXPECT_EQ(0, plan.cluster_splits);
  EXPECT_NE(nullptr, plan.stage2);
  // Refused per call.
  a.num_splits = 8;
  a.flags = MLA_DECODE_TWO_LAUNCHES;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(cl, &a, &plan)) << mla_last_error();
  EXPECT_EQ(0, plan.cluster_splits);
  EXPECT_NE(nullptr, plan.stage2);
  ASSERT_EQ(MLA_SUCCESS, mla_decode_run(cl, &plan, &a, nullptr))
      << mla_last_error();
  ASSERT_EQ(2u, backend.launches.size());
  EXPECT_EQ(0u, backend.launches[0].clusterY);
  backend.launches.clear();
  // Both flags contradict each other.
  a.flags = MLA_DECODE_ONE_LAUNCH | MLA_DECODE_TWO_LAUNCHES;
  expectRefused(mla_plan_decode(cl, &a, &plan), MLA_ERROR_INVALID_ARGUMENT,
                "MLA_DECODE_ONE_LAUNCH and MLA_DECODE_TWO_LAUNCHES contradict");
  a.flags = 8;
  expectRefused(mla_decode(cl, &a, nullptr), MLA_ERROR_INVALID_ARGUMENT,
                "flags is 0x8");
  EXPECT_TRUE(backend.launches.empty());
  mla_context_destroy(cl);
  // Without the spec's default, the flag still asks for it.
  spec.one_launch = 0;
  ASSERT_EQ(MLA_SUCCESS, mla_context_create(&spec, "gfx950", 0, backends, &cl))
      << mla_last_error();
  a.flags = 0;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(cl, &a, &plan)) << mla_last_error();
  EXPECT_EQ(0, plan.cluster_splits);
  a.flags = MLA_DECODE_ONE_LAUNCH;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(cl, &a, &plan)) << mla_last_error();
  EXPECT_EQ(8, plan.cluster_splits);
  mla_context_destroy(cl);
  spec.one_launch = 2;
  expectRefused(mla_context_create(&spec, "gfx950", 0, backends, &cl),
                MLA_ERROR_INVALID_SPEC, "one_launch 2");
}

// num_splits overrides the cost model (bench/sweep_splits.py, the host
// numerics tests); a count outside 1..65535 is refused naming the argument.
TEST_F(LauncherTest, ForcedSplitsOverrideTheModel) {
  const mla_spec_desc &s = deepseek_r1_decode_fp8_spec;
  ASSERT_GT(s.num_split_candidates, 1);
  mla_decode_args a = args(4, 1024);
  mla_decode_plan plan;
  for (int i = 0; i < s.num_split_candidates; ++i) {
    a.num_splits = s.split_candidates[i];
    ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &a, &plan)) << mla_last_error();
    EXPECT_EQ(s.split_candidates[i], plan.splits);
    EXPECT_EQ(plan.splits > 1, plan.stage2 != nullptr);
  }
  a.num_splits = 3; // not a candidate: fine with a masked stage 1
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &a, &plan)) << mla_last_error();
  EXPECT_EQ(3, plan.splits);
  EXPECT_STREQ("deepseek_r1_decode_fp8_stage1_masked", plan.stage1);
  for (int64_t bad : {-1, 65536}) {
    a.num_splits = bad;
    expectRefused(mla_plan_decode(ctx, &a, &plan), MLA_ERROR_INVALID_ARGUMENT,
                  "num_splits is");
  }
}

TEST_F(LauncherTest, NullAndNonPositiveArgumentsAreRefused) {
  mla_decode_args a = args();
  a.q = nullptr;
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_INVALID_ARGUMENT,
                "q is NULL");
  a = args();
  a.kv_scale = nullptr; // the fp8 spec has a KV scale
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_INVALID_ARGUMENT,
                "kv_scale is NULL");
  a = args();
  a.kv_indptr = nullptr;
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_INVALID_ARGUMENT,
                "kv_indptr is NULL");
  a = args(0);
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_INVALID_ARGUMENT,
                "batch is 0");
  a = args(-3);
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_INVALID_ARGUMENT,
                "batch is -3");
  a = args(4, -1);
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_INVALID_ARGUMENT,
                "max_kv_len is -1");
  expectRefused(mla_decode(nullptr, &a, nullptr), MLA_ERROR_INVALID_ARGUMENT,
                "NULL");
  expectRefused(mla_decode(ctx, nullptr, nullptr), MLA_ERROR_INVALID_ARGUMENT,
                "NULL");
  size_t bytes;
  expectRefused(mla_workspace_size(ctx, 0, 1024, &bytes),
                MLA_ERROR_INVALID_ARGUMENT, "batch");
  expectRefused(mla_workspace_size(ctx, 4, 1024, nullptr),
                MLA_ERROR_INVALID_ARGUMENT, "NULL");
  // A host indptr that contradicts max_kv_len.
  a = args(4, 4000);
  a.kv_indptr_host = hostIndptr;
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_INVALID_ARGUMENT,
                "kv_indptr_host");
}

// kv_rows and flags are checked on every call; MLA_DECODE_VALIDATE checks
// the host copies of both indptrs entry by entry (issue #16's table) and
// names the entry.
TEST_F(LauncherTest, ValidateFlagRefusesBadIndptrContents) {
  mla_decode_args a = args(4, 4096);
  a.kv_rows = -1;
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_INVALID_ARGUMENT,
                "kv_rows is -1");
  // Rows past int32 (mla-fuzz-launcher: the kv descriptor's size x 576
  // overflowed int64 in the argument packing).
  a.kv_rows = 7668547316942245422;
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_INVALID_ARGUMENT,
                "kv_rows 7668547316942245422 exceeds the int32 indptr range");
  a.kv_rows = INT32_MAX;
  EXPECT_EQ(MLA_SUCCESS, mla_decode(ctx, &a, nullptr)) << mla_last_error();
  backend.launches.clear();
  a = args(4, 4096);
  a.flags = 8; // 1, 2 and 4 are defined
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_INVALID_ARGUMENT,
                "flags is 0x8");
  int32_t qoHost[5] = {0, 1, 2, 3, 4};
  a = args(4, 4096);
  a.flags = MLA_DECODE_VALIDATE;
  a.kv_indptr_host = hostIndptr;
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_INVALID_ARGUMENT,
                "qo_indptr_host is NULL");
  a.kv_indptr_host = nullptr;
  a.qo_indptr_host = qoHost;
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_INVALID_ARGUMENT,
                "kv_indptr_host is NULL");
  struct Case {
    std::vector<int32_t> kv, qo;
    int64_t kvRows;
    const char *phrase;
  } cases[] = {
      {{0, 4096, 100, 8192, 12288},
       {0, 1, 2, 3, 4},
       16384,
       "kv_indptr decreases at sequence 1 (4096 then 100)"},
      {{-5, 4096, 8192, 12288, 16384},
       {0, 1, 2, 3, 4},
       16384,
       "kv_indptr[0] is -5"},
      {{0, 4096, 8192, 12288, 16384},
       {0, 1, 2, 3, 4},
       16000,
       "kv_indptr[4] is 16384, past kv_rows = 16000"},
      {{0, 4096, 8192, 12288, 20000},
       {0, 1, 2, 3, 4},
       1 << 20,
       "sequence 3 length 7712; max_kv_len is 4096"},
      {{0, 4096, 8192, 12288, 16384},
       {0, 1, 1, 3, 4},
       16384,
       "qo_indptr gives sequence 1 0 query rows"},
      {{0, 4096, 8192, 12288, 16384},
       {-1, 0, 1, 2, 3},
       16384,
       "qo_indptr[0] is -1"},
      {{0, 4096, 8192, 12288, 16384},
       {1, 2, 3, 4, 5},
       16384,
       "qo_indptr[4] is 5, past q's 4 rows"},
  };
  for (const Case &c : cases) {
    a = args(4, 4096);
    a.flags = MLA_DECODE_VALIDATE;
    a.kv_indptr_host = c.kv.data();
    a.qo_indptr_host = c.qo.data();
    a.kv_rows = c.kvRows;
    expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_INVALID_ARGUMENT,
                  c.phrase);
    mla_decode_plan plan;
    expectRefused(mla_plan_decode(ctx, &a, &plan), MLA_ERROR_INVALID_ARGUMENT,
                  c.phrase);
  }
  // Good contents pass, and a run after a plan validates again.
  a = args(4, 4096);
  a.flags = MLA_DECODE_VALIDATE;
  a.kv_indptr_host = hostIndptr;
  a.qo_indptr_host = qoHost;
  a.kv_rows = 16384;
  mla_decode_plan plan;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &a, &plan)) << mla_last_error();
  qoHost[2] = 7;
  expectRefused(mla_decode_run(ctx, &plan, &a, nullptr),
                MLA_ERROR_INVALID_ARGUMENT, "qo_indptr gives sequence 1");
  qoHost[2] = 2;
  ASSERT_EQ(MLA_SUCCESS, mla_decode_run(ctx, &plan, &a, nullptr))
      << mla_last_error();
  EXPECT_EQ(2u, backend.launches.size());
}

TEST_F(LauncherTest, MisalignedPointersAreRefused) {
  mla_decode_args a = args();
  a.q = q.bytes + 8;
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_MISALIGNED, "q (");
  a = args();
  a.out = out.bytes + 2;
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_MISALIGNED, "out (");
  a = args();
  a.kv_indptr = reinterpret_cast<const int32_t *>(kvp.bytes + 2);
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_MISALIGNED,
                "kv_indptr (");
  a = args();
  a.workspace = static_cast<char *>(a.workspace) + 4;
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_MISALIGNED,
                "workspace (");
}

TEST_F(LauncherTest, SmallWorkspaceIsRefused) {
  mla_decode_args a = args(4, 1024);
  size_t need = 0;
  ASSERT_EQ(MLA_SUCCESS, mla_workspace_size(ctx, 4, 1024, &need));
  ASSERT_GT(need, 0u);
  a.workspace_bytes = need - 1;
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_WORKSPACE_TOO_SMALL,
                "needs");
  a.workspace = nullptr;
  expectRefused(mla_decode(ctx, &a, nullptr), MLA_ERROR_INVALID_ARGUMENT,
                "workspace is NULL");
  a = args(4, 1024);
  a.workspace_bytes = need;
  EXPECT_EQ(MLA_SUCCESS, mla_decode(ctx, &a, nullptr)) << mla_last_error();
  backend.launches.clear();
  // Planning needs no workspace; running the plan does.
  a.workspace = nullptr;
  a.workspace_bytes = 0;
  mla_decode_plan plan;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &a, &plan)) << mla_last_error();
  EXPECT_EQ(need, plan.workspace_bytes);
  expectRefused(mla_decode_run(ctx, &plan, &a, nullptr),
                MLA_ERROR_INVALID_ARGUMENT, "workspace is NULL");
  a.workspace = wsAligned();
  a.workspace_bytes = need - 1;
  expectRefused(mla_decode_run(ctx, &plan, &a, nullptr),
                MLA_ERROR_WORKSPACE_TOO_SMALL, "needs");
}

TEST_F(LauncherTest, DriverFailureIsReportedWithTheKernel) {
  backend.launchStatus = MLA_ERROR_DRIVER;
  mla_decode_args a = args();
  EXPECT_EQ(MLA_ERROR_DRIVER, mla_decode(ctx, &a, nullptr));
  EXPECT_NE(std::string(mla_last_error())
                .find("launching deepseek_r1_decode_fp8_stage1"),
            std::string::npos)
      << mla_last_error();
}

TEST(LauncherCreate, UnknownChipMissingBackendAbsentDeviceAreRefused) {
  FakeBackend backend;
  const mla_backend *backends[] = {&backend, nullptr};
  mla_context *ctx = reinterpret_cast<mla_context *>(1);
  EXPECT_EQ(MLA_ERROR_NO_CODE_FOR_CHIP,
            mla_context_create(&deepseek_r1_decode_fp8_spec, "gfx942", 0,
                               backends, &ctx));
  EXPECT_EQ(nullptr, ctx);
  EXPECT_NE(std::string(mla_last_error())
                .find("no code for 'gfx942' (it has: gfx950)"),
            std::string::npos)
      << mla_last_error();
  const mla_backend *none[] = {nullptr};
  EXPECT_EQ(MLA_ERROR_NO_BACKEND,
            mla_context_create(&deepseek_r1_decode_fp8_spec, "gfx950", 0, none,
                               &ctx));
  EXPECT_NE(std::string(mla_last_error()).find("launcher_hip"),
            std::string::npos);
  backend.loadStatus = MLA_ERROR_NO_DEVICE;
  EXPECT_EQ(MLA_ERROR_NO_DEVICE,
            mla_context_create(&deepseek_r1_decode_fp8_spec, "gfx950", 0,
                               backends, &ctx));
  EXPECT_NE(std::string(mla_last_error()).find("load refused"),
            std::string::npos);
  EXPECT_EQ(nullptr, ctx);
  EXPECT_EQ(MLA_ERROR_INVALID_ARGUMENT,
            mla_context_create(&deepseek_r1_decode_fp8_spec, "gfx950", -1,
                               backends, &ctx));
  EXPECT_EQ(MLA_ERROR_INVALID_ARGUMENT,
            mla_context_create(nullptr, "gfx950", 0, backends, &ctx));
  EXPECT_EQ(MLA_ERROR_INVALID_ARGUMENT,
            mla_context_create(&deepseek_r1_decode_fp8_spec, "gfx950", 0,
                               backends, nullptr));
  EXPECT_TRUE(backend.launches.empty());
  mla_context_destroy(nullptr); // harmless
}

TEST(LauncherCreate, ForeignDescriptorsAreRefused) {
  FakeBackend backend;
  const mla_backend *backends[] = {&backend, nullptr};
  mla_context *ctx = nullptr;
  mla_spec_desc spec = deepseek_r1_decode_fp8_spec;
  spec.abi_version = 99;
  EXPECT_EQ(MLA_ERROR_INVALID_SPEC,
            mla_context_create(&spec, "gfx950", 0, backends, &ctx));
  EXPECT_NE(std::string(mla_last_error()).find("ABI 99"), std::string::npos);
  // A kernel argument the launcher does not know how to bind.
  spec = deepseek_r1_decode_fp8_spec;
  mla_target_desc target = spec.targets[0];
  std::vector<mla_kernel_desc> kernels(target.kernels,
                                       target.kernels + target.num_kernels);
  std::vector<mla_arg_desc> args(kernels[0].args,
                                 kernels[0].args + kernels[0].num_args);
  args[0].name = "mystery";
  kernels[0].args = args.data();
  target.kernels = kernels.data();
  spec.targets = &target;
  EXPECT_EQ(MLA_ERROR_INVALID_SPEC,
            mla_context_create(&spec, "gfx950", 0, backends, &ctx));
  EXPECT_NE(std::string(mla_last_error()).find("'mystery'"), std::string::npos);
  EXPECT_EQ(0u, backend.loadedBytes);
}

// Several query tokens (q_seq_len 2) and head tiles: stage 1 runs
// batch x (q_seq_len x heads / block_m) programs along x, stage 2 one per
// query row, and the workspace holds every row's partials. (The generated
// descriptor, edited as mla-compile would write it for q_seq_len = 2,
// num_heads = 32: 4 row groups per sequence.)
TEST(LauncherRowGroups, GridsAndWorkspaceCountQueryRows) {
  FakeBackend backend;
  const mla_backend *backends[] = {&backend, nullptr};
  mla_spec_desc spec = deepseek_r1_decode_fp8_spec;
  spec.q_seq_len = 2;
  spec.num_heads = 32;
  mla_target_desc target = spec.targets[0];
  std::vector<mla_kernel_desc> kernels(target.kernels,
                                       target.kernels + target.num_kernels);
  for (mla_kernel_desc &k : kernels) {
    if (k.stage == 1)
      k.grid[0] = MLA_GRID_BATCH_ROW_GROUPS;
    else
      k.grid[1] = MLA_GRID_ROWS;
  }
  target.kernels = kernels.data();
  spec.targets = &target;
  mla_context *ctx = nullptr;
  ASSERT_EQ(MLA_SUCCESS, mla_context_create(&spec, "gfx950", 0, backends, &ctx))
      << mla_last_error();
  int32_t qo[4] = {0, 2, 4, 6}, kvp[4] = {0, 100, 200, 300};
  mlatest::ScratchArgs scratch;
  mla_decode_args a = scratch.args(/*batch=*/3, /*maxKvLen=*/100,
                                   /*kvRows=*/300, /*splits=*/4, qo, kvp);
  mla_decode_plan plan;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &a, &plan)) << mla_last_error();
  EXPECT_EQ(4, plan.splits);
  // partials 3 x 4 x 64 rows x 512 f32, then 3 x 4 x 64 LSEs (256-B aligned)
  EXPECT_EQ(size_t(3 * 4 * 64 * 512 * 4 + 3 * 4 * 64 * 4),
            plan.workspace_bytes);
  ASSERT_EQ(MLA_SUCCESS, mla_decode_run(ctx, &plan, &a, nullptr))
      << mla_last_error();
  ASSERT_EQ(2u, backend.launches.size());
  EXPECT_EQ(3u * 4u, backend.launches[0].gx); // 3 sequences x 4 row groups
  EXPECT_EQ(4u, backend.launches[0].gy);
  EXPECT_EQ(3u, backend.launches[1].gx);
  EXPECT_EQ(64u, backend.launches[1].gy); // 2 tokens x 32 heads
  // q and out: [batch x q_seq_len, ...]
  EXPECT_EQ(6u, backend.launches[0].words[3]);
  mla_context_destroy(ctx);

  // A block_m that does not divide the heads is a malformed descriptor.
  spec.block_m = 24;
  EXPECT_EQ(MLA_ERROR_INVALID_SPEC,
            mla_context_create(&spec, "gfx950", 0, backends, &ctx));
}

/// The gfx950 fp8 spec's descriptor turned into a paged one (`layout`):
/// stage 1 takes kv_indices beside kv_indptr, or cache_seqlens and
/// block_table in its place, as mla-expand-decode writes them.
/// The fp8 descriptor with its kernels' arguments rewritten: `rewrite`
/// appends what argument `a` becomes (itself, others, or both).
struct DerivedSpec {
  mla_spec_desc spec = deepseek_r1_decode_fp8_spec;
  mla_target_desc target = spec.targets[0];
  std::vector<mla_kernel_desc> kernels;
  std::vector<std::vector<mla_arg_desc>> args;

  void rewriteArgs(
      const std::function<void(mla_arg_desc, std::vector<mla_arg_desc> &)>
          &rewrite) {
    kernels.assign(target.kernels, target.kernels + target.num_kernels);
    args.resize(kernels.size());
    for (size_t i = 0; i < kernels.size(); ++i) {
      for (int j = 0; j < kernels[i].num_args; ++j)
        rewrite(kernels[i].args[j], args[i]);
      kernels[i].args = args[i].data();
      kernels[i].num_args = int(args[i].size());
    }
    target.kernels = kernels.data();
    spec.targets = &target;
  }
};

struct PagedSpec : DerivedSpec {
  PagedSpec(int layout, int pageSize) {
    spec.kv_layout = layout;
    spec.page_size = pageSize;
    rewriteArgs([&](mla_arg_desc a, std::vector<mla_arg_desc> &out) {
      if (!std::strcmp(a.name, "kv_indptr") && layout == MLA_KV_BLOCK_TABLE) {
        a.name = "cache_seqlens";
        out.push_back(a);
        a.name = "block_table";
        a.rank = 2;
        a.shape[0] = a.shape[1] = -1;
      } else if (!std::strcmp(a.name, "kv_indptr") &&
                 layout == MLA_KV_TOKEN_INDICES) {
        out.push_back(a);
        a.name = "kv_indices";
      }
      out.push_back(a);
    });
  }
};

TEST(LauncherPaging, BlockTableArgumentsAreCheckedAndBound) {
  FakeBackend backend;
  const mla_backend *backends[] = {&backend, nullptr};
  PagedSpec paged(MLA_KV_BLOCK_TABLE, 64);
  mla_context *ctx = nullptr;
  ASSERT_EQ(MLA_SUCCESS,
            mla_context_create(&paged.spec, "gfx950", 0, backends, &ctx))
      << mla_last_error();
  int32_t qo[3] = {0, 1, 2}, seqlens[2] = {128, 256};
  int32_t table[2 * 4] = {3, 0, 9, 9, 1, 2, 4, 5};
  mlatest::ScratchArgs scratch;
  mla_decode_args a = scratch.args(/*batch=*/2, /*maxKvLen=*/256,
                                   /*kvRows=*/6 * 64, /*splits=*/2);
  a.qo_indptr = qo;
  a.block_table = table;
  a.block_table_cols = 4;
  a.cache_seqlens = seqlens;
  a.cache_seqlens_host = seqlens;
  auto refused = [&](mla_decode_args bad, mla_status want, const char *phrase) {
    mla_decode_plan plan;
    EXPECT_EQ(want, mla_plan_decode(ctx, &bad, &plan));
    EXPECT_NE(std::string(mla_last_error()).find(phrase), std::string::npos)
        << mla_last_error();
  };
  // kv_indptr is not needed; the table and the lengths are.
  mla_decode_args bad = a;
  bad.block_table = nullptr;
  refused(bad, MLA_ERROR_INVALID_ARGUMENT, "block_table is NULL");
  bad = a;
  bad.cache_seqlens = nullptr;
  refused(bad, MLA_ERROR_INVALID_ARGUMENT, "cache_seqlens is NULL");
  bad = a;
  bad.block_table = table + 0; // fine
  bad.cache_seqlens = reinterpret_cast<const int32_t *>(scratch.buf + 2);
  refused(bad, MLA_ERROR_MISALIGNED, "cache_seqlens");
  bad = a;
  bad.block_table_cols = -1;
  refused(bad, MLA_ERROR_INVALID_ARGUMENT, "block_table_cols is -1");
  // Validation reads the host copies: the lengths, then the pages in use.
  bad = a;
  bad.flags = MLA_DECODE_VALIDATE;
  bad.qo_indptr_host = qo;
  refused(bad, MLA_ERROR_INVALID_ARGUMENT, "page_table_host is NULL");
  bad.page_table_host = table; // sequence 1's page 0 ... fine; entry 9 unused
  int32_t longer[2] = {257, 256};
  bad.cache_seqlens_host = longer;
  refused(bad, MLA_ERROR_INVALID_ARGUMENT, "cache_seqlens[0] is 257");
  bad.cache_seqlens_host = seqlens;
  int32_t outside[2 * 4] = {3, 0, 9, 9, 6, 2, 4, 5}; // 6 pages: 0 .. 5
  bad.page_table_host = outside;
  refused(bad, MLA_ERROR_INVALID_ARGUMENT,
          "block_table[1][0] is 6, not a page of kv");
  bad.page_table_host = table;
  mla_decode_plan plan;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &bad, &plan)) << mla_last_error();
  // The host lengths (cache_seqlens_host) decide the mask-free stage 1.
  EXPECT_TRUE(plan.mask_free);
  int32_t ragged[2] = {100, 256};
  bad.flags = 0;
  bad.cache_seqlens_host = ragged;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &bad, &plan)) << mla_last_error();
  EXPECT_FALSE(plan.mask_free);
  EXPECT_TRUE(backend.launches.empty());
  // Launched: block_table's descriptor is [batch, block_table_cols].
  ASSERT_EQ(MLA_SUCCESS, mla_decode_run(ctx, &plan, &a, nullptr))
      << mla_last_error();
  ASSERT_EQ(2u, backend.launches.size());
  const std::vector<uint64_t> &w = backend.launches[0].words;
  bool found = false;
  for (size_t i = 0; i + 4 < w.size(); ++i)
    if (w[i] == reinterpret_cast<uintptr_t>(table) && w[i + 1] == w[i] &&
        w[i + 2] == 0 && w[i + 3] == 2 && w[i + 4] == 4)
      found = true;
  EXPECT_TRUE(found) << "block_table packed as [2, 4]";
  mla_context_destroy(ctx);

  // A page size that is not a power of two, or a page size > 1 without a
  // block table, is a malformed descriptor; so is a kernel argument of
  // another layout.
  PagedSpec odd(MLA_KV_BLOCK_TABLE, 48);
  EXPECT_EQ(MLA_ERROR_INVALID_SPEC,
            mla_context_create(&odd.spec, "gfx950", 0, backends, &ctx));
  PagedSpec wrong(MLA_KV_BLOCK_TABLE, 64);
  wrong.spec.kv_layout = MLA_KV_TOKEN_INDICES;
  wrong.spec.page_size = 1;
  EXPECT_EQ(MLA_ERROR_INVALID_SPEC,
            mla_context_create(&wrong.spec, "gfx950", 0, backends, &ctx));
  EXPECT_NE(std::string(mla_last_error()).find("does not belong"),
            std::string::npos)
      << mla_last_error();
  PagedSpec pages(MLA_KV_CONTIGUOUS, 1);
  pages.spec.page_size = 16;
  EXPECT_EQ(MLA_ERROR_INVALID_SPEC,
            mla_context_create(&pages.spec, "gfx950", 0, backends, &ctx));
}

TEST(LauncherPaging, TokenListIsValidatedAgainstTheListAndTheCache) {
  FakeBackend backend;
  const mla_backend *backends[] = {&backend, nullptr};
  PagedSpec paged(MLA_KV_TOKEN_INDICES, 1);
  mla_context *ctx = nullptr;
  ASSERT_EQ(MLA_SUCCESS,
            mla_context_create(&paged.spec, "gfx950", 0, backends, &ctx))
      << mla_last_error();
  Arena<4096> buf;
  int32_t qo[3] = {0, 1, 2}, kvp[3] = {0, 3, 5};
  int32_t indices[5] = {7, 2, 9, 0, 1};
  mla_decode_args a{};
  a.q = a.kv = a.out = buf.bytes;
  a.kv_scale = reinterpret_cast<const float *>(buf.bytes);
  a.qo_indptr = qo;
  a.kv_indptr = kvp;
  a.batch = 2;
  a.max_kv_len = 3;
  a.kv_rows = 10;
  a.kv_indices = indices;
  a.kv_indices_len = 5;
  a.num_splits = 1;
  mla_decode_plan plan;
  mla_decode_args bad = a;
  bad.kv_indices = nullptr;
  EXPECT_EQ(MLA_ERROR_INVALID_ARGUMENT, mla_plan_decode(ctx, &bad, &plan));
  EXPECT_NE(std::string(mla_last_error()).find("kv_indices is NULL"),
            std::string::npos);
  bad = a;
  bad.flags = MLA_DECODE_VALIDATE;
  bad.kv_indptr_host = kvp;
  bad.qo_indptr_host = qo;
  bad.page_table_host = indices;
  bad.kv_indices_len = 4; // kv_indptr ends at 5
  EXPECT_EQ(MLA_ERROR_INVALID_ARGUMENT, mla_plan_decode(ctx, &bad, &plan));
  EXPECT_NE(std::string(mla_last_error()).find("past kv_indices_len = 4"),
            std::string::npos)
      << mla_last_error();
  bad.kv_indices_len = 5;
  bad.kv_rows = 9; // index 9 is no row
  EXPECT_EQ(MLA_ERROR_INVALID_ARGUMENT, mla_plan_decode(ctx, &bad, &plan));
  EXPECT_NE(std::string(mla_last_error()).find("kv_indices[2] is 9"),
            std::string::npos)
      << mla_last_error();
  bad.kv_rows = 10;
  EXPECT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &bad, &plan)) << mla_last_error();
  ASSERT_EQ(MLA_SUCCESS, mla_decode_run(ctx, &plan, &a, nullptr))
      << mla_last_error();
  EXPECT_EQ(1u, backend.launches.size());
  mla_context_destroy(ctx);
}

TEST(LauncherStatus, EveryStatusHasAName) {
  for (int s = MLA_SUCCESS; s <= MLA_ERROR_DRIVER; ++s)
    EXPECT_EQ(0, std::strncmp("MLA_",
                              mla_status_name(static_cast<mla_status>(s)), 4));
  EXPECT_STREQ("MLA_ERROR_UNKNOWN",
               mla_status_name(static_cast<mla_status>(42)));
}

} // namespace

/// The fp8 descriptor made an mxfp4 one (kv_type f4E2M1FN): kv rows of 288
/// bytes and, in place of the per-tensor scale, the e8m0 array kv_scales
/// [rows, stride] (ABI 8).
struct Mxfp4Spec : DerivedSpec {
  Mxfp4Spec() {
    spec.kv_type = "f4E2M1FN";
    spec.has_kv_scale = 0;
    rewriteArgs([](mla_arg_desc a, std::vector<mla_arg_desc> &out) {
      if (!std::strcmp(a.name, "kv"))
        a.shape[1] = 288;
      if (!std::strcmp(a.name, "kv_scale")) {
        a.name = "kv_scales";
        a.rank = 2;
        a.shape[0] = a.shape[1] = -1;
      }
      out.push_back(a);
    });
  }
};

TEST(LauncherMxfp4, ScaleArrayIsCheckedAndBoundAtItsStride) {
  FakeBackend backend;
  const mla_backend *backends[] = {&backend, nullptr};
  Mxfp4Spec mx;
  mla_context *ctx = nullptr;
  ASSERT_EQ(MLA_SUCCESS,
            mla_context_create(&mx.spec, "gfx950", 0, backends, &ctx))
      << mla_last_error();
  Arena<4096> buf;
  uint8_t scales[3 * 32] = {};
  int32_t qo[3] = {0, 1, 2}, kvp[3] = {0, 100, 300};
  mla_decode_args a{};
  a.q = a.kv = a.out = buf.bytes;
  a.qo_indptr = qo;
  a.kv_indptr = kvp;
  a.batch = 2;
  a.max_kv_len = 200;
  a.kv_rows = 300;
  a.kv_scales = scales + 1; // byte-aligned is fine
  a.kv_scales_rows = 300;
  a.kv_scales_stride = 32;
  a.num_splits = 1;
  auto refused = [&](mla_decode_args bad, const char *phrase) {
    mla_decode_plan plan;
    EXPECT_EQ(MLA_ERROR_INVALID_ARGUMENT, mla_plan_decode(ctx, &bad, &plan));
    EXPECT_NE(std::string(mla_last_error()).find(phrase), std::string::npos)
        << mla_last_error();
  };
  mla_decode_args bad = a;
  bad.kv_scales = nullptr;
  refused(bad, "kv_scales is NULL");
  bad = a;
  bad.kv_scales_stride = 17;
  refused(bad, "kv_scales_stride is 17; a row holds 18 e8m0 scales");
  bad = a;
  bad.kv_scales_rows = -1;
  refused(bad, "kv_scales_rows is -1");
  // Validation: every kv row needs its scales.
  bad = a;
  bad.flags = MLA_DECODE_VALIDATE;
  bad.kv_indptr_host = kvp;
  bad.qo_indptr_host = qo;
  bad.kv_scales_rows = 299;
  refused(bad, "kv_scales_rows (299) is less than kv_rows (300)");
  bad.kv_scales_rows = 300;
  mla_decode_plan plan;
  ASSERT_EQ(MLA_SUCCESS, mla_plan_decode(ctx, &bad, &plan)) << mla_last_error();
  // Launched: kv_scales is packed as [kv_scales_rows, stride], strides
  // [stride, 1], so the kernel's row r starts at r x stride.
  ASSERT_EQ(MLA_SUCCESS, mla_decode_run(ctx, &plan, &a, nullptr))
      << mla_last_error();
  ASSERT_EQ(1u, backend.launches.size());
  const std::vector<uint64_t> &w = backend.launches[0].words;
  bool found = false;
  for (size_t i = 0; i + 6 < w.size(); ++i)
    if (w[i] == reinterpret_cast<uintptr_t>(scales + 1) && w[i + 1] == w[i] &&
        w[i + 2] == 0 && w[i + 3] == 300 && w[i + 4] == 32 && w[i + 5] == 32 &&
        w[i + 6] == 1)
      found = true;
  EXPECT_TRUE(found) << "kv_scales packed as [300, 32] with strides [32, 1]";
  mla_context_destroy(ctx);
}
