//===- ResourceReportTest.cpp - the compile report's KV-loop figure -------===//
//
// kvLoopInstructions on hand-written AMDGPU assembly: the innermost loop
// that holds every MFMA of the kernel, its instruction and MFMA counts.
//
//===----------------------------------------------------------------------===//
#include "mla/ChipCompiler.h"

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

TEST(ResourceReport, NoLoopOrNoKernelGivesZero) {
  EXPECT_EQ(std::make_pair(int64_t(0), int64_t(0)), mlir::mla::kvLoopInstructions(kIsa, "other"));
  EXPECT_EQ(std::make_pair(int64_t(0), int64_t(0)), mlir::mla::kvLoopInstructions(kIsa, "absent"));
}

} // namespace
