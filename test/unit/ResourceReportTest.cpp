//===- ResourceReportTest.cpp - the compile report's parsers --------------===//
//
// lib/Compile/ResourceReport.cpp on hand-written inputs in the backends'
// formats: kvLoopInstructions (the innermost loop that holds every MFMA),
// the `ptxas -v` report, the AMDHSA metadata block, and the occupancy
// formulas of sm_90 and CDNA.
//
//===----------------------------------------------------------------------===//
#include "mla/ResourceReport.h"

#include <gtest/gtest.h>

namespace {

const char *kIsa = R"(
	.text
other:
	v_mfma_f32_16x16x32_bf16 v[0:3], v[4:7], v[8:11], v[0:3]
	s_endpgm
.Lfunc_end0:
k:
	s_mov_b32 s0, 0
.LBB1_1:
	s_add_u32 s0, s0, 1
.LBB1_2:
	; the inner loop: the KV loop
	; a comment line is no instruction
	v_mfma_f32_16x16x32_bf16 v[0:3], v[4:7], v[8:11], v[0:3]
	v_add_f32_e32 v12, v13, v12
	.p2align 2
	v_mfma_f32_16x16x32_bf16 v[0:3], v[4:7], v[8:11], v[0:3]
	s_cbranch_scc1 .LBB1_2
	s_cmp_lg_u32 s0, 8
	s_cbranch_scc1 .LBB1_1
	s_endpgm
.Lfunc_end1:
)";

TEST(ResourceReport, KvLoopIsTheInnermostLoopHoldingEveryMfma) {
  auto [n, mfma] = mlir::mla::kvLoopInstructions(kIsa, "k");
  // .LBB1_2 .. s_cbranch_scc1 .LBB1_2: 2 MFMAs, 1 VALU, the branch.
  EXPECT_EQ(4, n);
  EXPECT_EQ(2, mfma);
}

// A rotated loop whose body branches back to its header from two places
// (the mxfp4 decode's batches on gfx950): the loop ends at the last of
// them, not at the first one past the MFMAs.
const char *kRotated = R"(
r:
	s_mov_b32 s0, 0
	s_branch .LBB2_2
.LBB2_1:
	v_mfma_f32_16x16x32_bf16 v[0:3], v[4:7], v[8:11], v[0:3]
	s_cbranch_vccz .LBB2_4
.LBB2_2:
	v_add_u32_e32 v1, v2, v1
	s_cbranch_execz .LBB2_1
	v_add_u32_e32 v1, v2, v1
	v_add_u32_e32 v1, v2, v1
	s_branch .LBB2_1
.LBB2_4:
	s_endpgm
.Lfunc_end2:
)";

TEST(ResourceReport, KvLoopEndsAtTheLastBranchBackToItsHeader) {
  auto [n, mfma] = mlir::mla::kvLoopInstructions(kRotated, "r");
  // .LBB2_1 .. the s_branch back to it: 7 instructions.
  EXPECT_EQ(7, n);
  EXPECT_EQ(1, mfma);
}

TEST(ResourceReport, NoLoopOrNoKernelGivesZero) {
  EXPECT_EQ(std::make_pair(int64_t(0), int64_t(0)),
            mlir::mla::kvLoopInstructions(kIsa, "other"));
  EXPECT_EQ(std::make_pair(int64_t(0), int64_t(0)),
            mlir::mla::kvLoopInstructions(kIsa, "absent"));
}

// ptxas -v as CUDA 13's ptxas prints it for two entry functions (from
// mla-compile's <spec>.ptxas.txt, trimmed).
const char *kPtxas = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k_stage2' for 'sm_90'
ptxas info    : Function properties for k_stage2
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 168 registers, used 0 barriers
ptxas info    : Compile time = 94.484 ms
ptxas info    : Compiling entry function 'k_stage1_masked' for 'sm_90'
ptxas info    : Function properties for k_stage1_masked
    24 bytes stack frame, 24 bytes spill stores, 24 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 24 bytes cumulative stack size
)";

TEST(ResourceReport, PtxasReportPerEntryFunction) {
  auto r = mlir::mla::parsePtxasReport(kPtxas);
  ASSERT_EQ(2u, r.size());
  EXPECT_EQ(168, r["k_stage2"].registers);
  EXPECT_EQ(0, r["k_stage2"].spillStoreBytes);
  EXPECT_EQ(0, r["k_stage2"].stackBytes);
  EXPECT_EQ(255, r["k_stage1_masked"].registers);
  EXPECT_EQ(24, r["k_stage1_masked"].spillStoreBytes);
  EXPECT_EQ(24, r["k_stage1_masked"].stackBytes);
  // A report without the figures leaves them absent (-1).
  auto none = mlir::mla::parsePtxasReport(
      "ptxas info    : Compiling entry function 'x' for 'sm_90'\n");
  EXPECT_EQ(-1, none["x"].registers);
  EXPECT_TRUE(mlir::mla::parsePtxasReport("").empty());
}

// The amdhsa.kernels block of LLVM's AMDGPU assembly: argument records nest
// deeper than kernel records; keys in alphabetical order.
const char *kAmdhsa = R"(	.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     0
    .args:
      - .address_space:  generic
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .offset:         8
        .size:           8
        .value_kind:     by_value
    .group_segment_fixed_size: 0
    .name:           k_stage1
    .private_segment_fixed_size: 16
    .sgpr_count:     36
    .sgpr_spill_count: 0
    .vgpr_count:     136
    .vgpr_spill_count: 2
  - .agpr_count:     4
    .args:           []
    .group_segment_fixed_size: 512
    .name:           k_stage2
    .private_segment_fixed_size: 0
    .sgpr_count:     106
    .sgpr_spill_count: 0
    .vgpr_count:     81
    .vgpr_spill_count: 0
amdhsa.target:   amdgcn-amd-amdhsa--gfx950
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
)";

TEST(ResourceReport, AmdhsaMetadataPerKernel) {
  auto r = mlir::mla::parseAmdhsaMetadata(kAmdhsa);
  ASSERT_EQ(2u, r.size());
  const auto &s1 = r["k_stage1"];
  EXPECT_EQ(136, s1.vgprs);
  EXPECT_EQ(0, s1.agprs);
  EXPECT_EQ(36, s1.sgprs);
  EXPECT_EQ(2, s1.vgprSpills);
  EXPECT_EQ(0, s1.sgprSpills);
  EXPECT_EQ(16, s1.scratchBytes);
  EXPECT_EQ(0, s1.ldsStaticBytes);
  const auto &s2 = r["k_stage2"];
  EXPECT_EQ(81, s2.vgprs);
  EXPECT_EQ(4, s2.agprs);
  EXPECT_EQ(106, s2.sgprs);
  EXPECT_EQ(512, s2.ldsStaticBytes);
  // Nothing before the block counts, and no block gives no kernels.
  EXPECT_TRUE(
      mlir::mla::parseAmdhsaMetadata("  - .name: x\n    .vgpr_count: 3\n")
          .empty());
}

TEST(ResourceReport, Sm90ProgramsPerSm) {
  // 128 threads: 213 registers allow 2 (65536 / (213 * 128)); 100 KiB of
  // shared memory also 2.
  EXPECT_EQ(2, mlir::mla::sm90ProgramsPerSm(213, 128, 102400));
  // 168 registers, no shared memory: 3.
  EXPECT_EQ(3, mlir::mla::sm90ProgramsPerSm(168, 128, 0));
  // Few registers and threads: the 32-block limit.
  EXPECT_EQ(32, mlir::mla::sm90ProgramsPerSm(16, 32, 0));
  // Shared memory decides: 60 KiB + 1 KiB reserved -> 3.
  EXPECT_EQ(3, mlir::mla::sm90ProgramsPerSm(32, 128, 60 * 1024));
  // Unknown registers count as 255.
  EXPECT_EQ(2, mlir::mla::sm90ProgramsPerSm(-1, 128, 0));
}

TEST(ResourceReport, CdnaOccupancy) {
  // gfx950 stage 1: 136 VGPRs (granule 136) -> 3 waves / SIMD by registers;
  // 4 waves per group -> 3 groups by registers, LDS 160 KiB / 59904 B -> 2.
  auto o = mlir::mla::cdnaOccupancy(136, 0, 256, 64, 59904, 160 * 1024);
  EXPECT_EQ(2, o.programsPerCu);
  EXPECT_EQ(2, o.wavesPerSimd);
  // Stage 2: 81 VGPRs -> 88 -> 5 waves / SIMD; no LDS: 5 groups of 4 waves.
  o = mlir::mla::cdnaOccupancy(81, 0, 256, 64, 0, 160 * 1024);
  EXPECT_EQ(5, o.programsPerCu);
  EXPECT_EQ(5, o.wavesPerSimd);
  // AGPRs share the budget: 256 + 256 -> 1 wave / SIMD.
  o = mlir::mla::cdnaOccupancy(256, 256, 256, 64, 0, 160 * 1024);
  EXPECT_EQ(1, o.programsPerCu);
  EXPECT_EQ(1, o.wavesPerSimd);
}

} // namespace
