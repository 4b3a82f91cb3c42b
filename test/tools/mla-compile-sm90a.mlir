// mla-compile for sm_90a (wgmma): the bf16 specs to PTX -> cubin (ptxas
// from /usr/local/cuda) + manifest + resource report. The PTX has the
// warpgroup MMAs (S^T = K Q^T K-major, O^T = V^T P^T with A MN-major:
// imm-trans-a 1), their fence / commit / wait, and an async-proxy fence
// before every barrier; no spills.
// RUN: rm -rf %t && mla-compile %kernels/deepseek_r1_decode_bf16_sm90a.mlir --chip=sm_90a -o %t | FileCheck %s --check-prefix=REPORT
// RUN: FileCheck %s --check-prefix=PTX < %t/deepseek_r1_decode_bf16_sm90a.ptx
// RUN: FileCheck %s --check-prefix=MF < %t/deepseek_r1_decode_bf16_sm90a.ptx
// RUN: FileCheck %s --check-prefix=ROLLED < %t/deepseek_r1_decode_bf16_sm90a.ptx
// RUN: FileCheck %s --check-prefix=JSON < %t/deepseek_r1_decode_bf16_sm90a.json
// RUN: mla-compile %kernels/deepseek_r1_decode_bf16_sm90a_mtp2.mlir --chip=sm_90a -o %t/mtp2 | FileCheck %s --check-prefix=MTP2
// RUN: FileCheck %s --check-prefix=MTP2-PTX < %t/mtp2/deepseek_r1_decode_bf16_sm90a_mtp2.ptx
// RUN: FileCheck %s --check-prefix=MTP2-LOOP < %t/mtp2/deepseek_r1_decode_bf16_sm90a_mtp2.ptx
// RUN: mla-compile %kernels/deepseek_r1_decode_bf16_sm90a_paged64.mlir --chip=sm_90a -o %t/paged | FileCheck %s --check-prefix=PAGED
// RUN: FileCheck %s --check-prefix=PAGED-PTX < %t/paged/deepseek_r1_decode_bf16_sm90a_paged64.ptx
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_qp16_sm90a.mlir --chip=sm_90a -o %t/fp8 | FileCheck %s --check-prefix=FP8
// RUN: FileCheck %s --check-prefix=FP8-PTX < %t/fp8/deepseek_r1_decode_fp8_qp16_sm90a.ptx
// RUN: FileCheck %s --check-prefix=FP8-TILE < %t/fp8/deepseek_r1_decode_fp8_qp16_sm90a.ptx
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_qp16_sm90a.mlir --chip=sm_90a --kv-evict-first-tiles=0 -o %t/fp8nohint | FileCheck %s --check-prefix=FP8
// RUN: FileCheck %s --check-prefix=FP8-NOHINT < %t/fp8nohint/deepseek_r1_decode_fp8_qp16_sm90a.ptx
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_qp16_sm90a.mlir --chip=sm_90a --wgmma-smem-a -o %t/fp8smema | FileCheck %s --check-prefix=FP8
// RUN: mla-compile --help | FileCheck %s --check-prefix=HELP
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_qp16_sm90a.mlir --chip=sm_90a --wgmma-register-v -o %t/fp8regv | FileCheck %s --check-prefix=FP8-REGV
// RUN: FileCheck %s --check-prefix=FP8-REGV-PTX < %t/fp8regv/deepseek_r1_decode_fp8_qp16_sm90a.ptx
// RUN: FileCheck %s --check-prefix=FP8-SMEMA-PTX < %t/fp8smema/deepseek_r1_decode_fp8_qp16_sm90a.ptx
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_qp16_sm90a_paged64.mlir --chip=sm_90a -o %t/fp8paged | FileCheck %s --check-prefix=FP8-PAGED
// RUN: FileCheck %s --check-prefix=FP8-PAGED-PTX < %t/fp8paged/deepseek_r1_decode_fp8_qp16_sm90a_paged64.ptx
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_qp16_sm90a_kvindices.mlir --chip=sm_90a -o %t/fp8idx | FileCheck %s --check-prefix=FP8-IDX
// RUN: FileCheck %s --check-prefix=FP8-IDX-PTX < %t/fp8idx/deepseek_r1_decode_fp8_qp16_sm90a_kvindices.ptx
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_qp16_sm90a_mtp2.mlir --chip=sm_90a -o %t/fp8mtp2 | FileCheck %s --check-prefix=FP8-MTP2
// RUN: FileCheck %s --check-prefix=FP8-MTP2-PTX < %t/fp8mtp2/deepseek_r1_decode_fp8_qp16_sm90a_mtp2.ptx
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_qp16_sm90a_mtp2_paged64.mlir --chip=sm_90a -o %t/fp8mtp2paged | FileCheck %s --check-prefix=FP8-MTP2-PAGED
// RUN: FileCheck %s --check-prefix=FP8-MTP2-PAGED-PTX < %t/fp8mtp2paged/deepseek_r1_decode_fp8_qp16_sm90a_mtp2_paged64.ptx
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_qp16_sm90a_h128.mlir --chip=sm_90a -o %t/fp8h128 | FileCheck %s --check-prefix=FP8-H128
// RUN: FileCheck %s --check-prefix=FP8-H128-PTX < %t/fp8h128/deepseek_r1_decode_fp8_qp16_sm90a_h128.ptx
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_qp8_sm90a.mlir --chip=sm_90a -o %t/fp8qp8 | FileCheck %s --check-prefix=FP8-QP8
// RUN: FileCheck %s --check-prefix=FP8-QP8-PTX < %t/fp8qp8/deepseek_r1_decode_fp8_qp8_sm90a.ptx
// RUN: FileCheck %s --check-prefix=FP8-QP8-JSON < %t/fp8qp8/deepseek_r1_decode_fp8_qp8_sm90a.json
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_qp8_sm90a_mtp2.mlir --chip=sm_90a -o %t/fp8qp8mtp2 | FileCheck %s --check-prefix=FP8-QP8-MTP2
// RUN: FileCheck %s --check-prefix=FP8-QP8-MTP2-PTX < %t/fp8qp8mtp2/deepseek_r1_decode_fp8_qp8_sm90a_mtp2.ptx
// RUN: mla-compile %kernels/deepseek_r1_decode_mxfp4_sm90a.mlir --chip=sm_90a -o %t/mxfp4 | FileCheck %s --check-prefix=MXFP4
// RUN: FileCheck %s --check-prefix=MXFP4-PTX < %t/mxfp4/deepseek_r1_decode_mxfp4_sm90a.ptx
// RUN: mla-compile %kernels/deepseek_r1_decode_mxfp4_qp8_sm90a.mlir --chip=sm_90a -o %t/mxfp4qp8 | FileCheck %s --check-prefix=MXFP4-QP8
// RUN: FileCheck %s --check-prefix=MXFP4-QP8-PTX < %t/mxfp4qp8/deepseek_r1_decode_mxfp4_qp8_sm90a.ptx

// REPORT: kernel resources (sm_90a, ptxas -v):
// REPORT-NEXT: deepseek_r1_decode_bf16_sm90a_stage1_masked: {{[0-9]+}} registers, 0 B spilled, 0 B stack, {{[0-9]+}} B shared, 128 threads, 1 programs/SM
// REPORT-NEXT: deepseek_r1_decode_bf16_sm90a_stage1_mask_free: {{[0-9]+}} registers, 0 B spilled, 0 B stack, {{[0-9]+}} B shared, 128 threads, 1 programs/SM

// The KV tile by the tensor memory accelerator, double-buffered (one
// program per SM): the map is the last parameter (128 bytes, a grid
// constant addressed in parameter space); two mbarriers, one per buffer;
// before the loop one thread arrives on the first expecting the tile's
// 73 728 bytes and sends the whole tile in one copy of the 3-D map (9
// boxes of 64 x 64 along the row; coordinates innermost first: column in
// the box, row, box); in the loop every thread waits on this tile's phase,
// then the next tile goes out on the other mbarrier; no cp.async. Every
// copy under the program's one L2 policy: evict first where its KV range
// spans at most 16 tiles (1 024 rows), else normal.
// PTX: .target sm_90a
// PTX-LABEL: .entry deepseek_r1_decode_bf16_sm90a_stage1_masked(
// PTX: .param .align 64 .b8 deepseek_r1_decode_bf16_sm90a_stage1_masked_param_56[128]
// PTX-NEXT: )
// PTX: cvta.param.u64 [[MAP:%rd[0-9]+]], %rd{{[0-9]+}};
// PTX: @%p{{[0-9]+}} mbarrier.init.shared.b64 [[[BAR:%r[0-9]+]]], 1;
// PTX: @%p{{[0-9]+}} mbarrier.init.shared.b64 [%r{{[0-9]+}}], 1;
// PTX: setp.lt.s64 [[FEW:%p[0-9]+]], %rd{{[0-9]+}}, 1025;
// PTX-NEXT: selp.b64 [[POL:%rd[0-9]+]], 1364590687093260288, 1152921504606846976, [[FEW]];
// PTX: @[[FIRST:%p[0-9]+]] mbarrier.arrive.expect_tx.shared.b64 _, [[[BAR]]], 73728;
// PTX: @[[FIRST]] cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%rd{{[0-9]+}}], [[[MAP]], {0,[[ROW:%r[0-9]+]],0} ], [[[BAR]]], [[POL]];
// PTX-NOT: cp.async.bulk.tensor
// PTX: mbarrier.try_wait.parity.shared.b64 P1, [%r{{[0-9]+}}], %r{{[0-9]+}}, 10000000;
// PTX: mbarrier.arrive.expect_tx.shared.b64 _, [%r{{[0-9]+}}], 73728;
// PTX: cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%rd{{[0-9]+}}], [[[MAP]], {0,%r{{[0-9]+}},0} ], [%r{{[0-9]+}}], [[POL]];
// PTX-NOT: cp.async.bulk.tensor
// PTX-LABEL: .entry deepseek_r1_decode_bf16_sm90a_stage1_mask_free
// PTX: cp.async.bulk.tensor.3d
// PTX: fence.proxy.async.shared::cta;
// PTX-NEXT: bar.sync 0;
// PTX: wgmma.fence.sync.aligned;
// S^T: K-major A and B (imm-trans-a 0, imm-trans-b 0), N = 16 heads.
// PTX: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0, 0;
// PTX: wgmma.commit_group.sync.aligned;
// PTX-NEXT: wgmma.wait_group.sync.aligned 0;
// PTX: ex2.approx.ftz.f32
// O^T: A = V^T MN-major (imm-trans-a 1).
// PTX: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1, 0;
// PTX: wgmma.wait_group.sync.aligned 0;
// PTX-NOT: mma.sync
// The mask-free stage 1 waits on the tiles' mbarrier, wherever LLVM places
// the loop's blocks, and has no per-thread copies.
// MF-LABEL: .entry deepseek_r1_decode_bf16_sm90a_stage1_mask_free
// MF-NOT: cp.async.cg
// MF: mbarrier.try_wait.parity.shared.b64
// MF-NOT: cp.async.cg
// Each dot's K loop reaches ptxas rolled (LLVM told not to unroll it), its
// descriptors a base plus an add.
// ROLLED-LABEL: .entry deepseek_r1_decode_bf16_sm90a_stage1_masked
// ROLLED: .pragma "nounroll";
// ROLLED-NEXT: add.s64
// ROLLED: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16
// ROLLED: .pragma "nounroll";
// ROLLED: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16
// ROLLED-LABEL: .entry deepseek_r1_decode_bf16_sm90a_stage1_mask_free
// ROLLED: .pragma "nounroll";
// ROLLED: .pragma "nounroll";

// JSON: "chip": "sm_90a"
// The manifest's last stage-1 argument: the tensor map over kv.
// JSON: "kind": "tensor_map",
// JSON-NEXT: "name": "kv",
// JSON-NEXT: "rank": 3,
// JSON-NEXT: "shape": [
// JSON-NEXT: 64,
// JSON-NEXT: 64,
// JSON-NEXT: 9
// The spec's one_launch, for the launcher: plans combine a small batch's
// splits in stage 1's clusters by default.
// JSON: "one_launch": true,

// Both query tokens in one program: N = 32, the KV tile double-buffered
// (one program per SM either way) by tensor-map copies: two mbarriers, one
// per buffer; the first tile's 9 boxes before the loop; in the loop the
// wait for this tile's phase, then the next tile's copy on the other
// buffer's mbarrier, then the dots.
// MTP2: deepseek_r1_decode_bf16_sm90a_mtp2_stage1_masked: {{[0-9]+}} registers, 0 B spilled, 0 B stack, {{[0-9]+}} B shared, 128 threads, 1 programs/SM
// MTP2-PTX: mbarrier.init.shared.b64 [%r{{[0-9]+}}], 1;
// MTP2-PTX: mbarrier.init.shared.b64 [%r{{[0-9]+}}], 1;
// MTP2-PTX: mbarrier.arrive.expect_tx.shared.b64 _, [%r{{[0-9]+}}], 73728;
// MTP2-PTX: cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes
// MTP2-PTX: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// MTP2-PTX-NOT: cp.async.cg
// (The loop's wait and next boxes, wherever LLVM places its blocks.)
// MTP2-LOOP: mbarrier.try_wait.parity.shared.b64
// MTP2-LOOP: mbarrier.arrive.expect_tx.shared.b64 _, [%r{{[0-9]+}}], 73728;
// MTP2-LOOP: cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes

// Paged by 64-row pages: a 64-row tile lies within one page, so it comes
// as the contiguous spec's does, by tensor-map copies into two buffers (one
// program per SM), each box from the page's row that the block table gives
// (read just before the copy); no per-thread copies, and no L2 policy.
// PAGED: deepseek_r1_decode_bf16_sm90a_paged64_stage1_masked: {{[0-9]+}} registers, 0 B spilled, 0 B stack, 168960 B shared, 128 threads, 1 programs/SM
// PAGED: deepseek_r1_decode_bf16_sm90a_paged64_stage1_mask_free: {{[0-9]+}} registers, 0 B spilled, 0 B stack, 168960 B shared, 128 threads, 1 programs/SM
// PAGED-PTX-LABEL: .entry deepseek_r1_decode_bf16_sm90a_paged64_stage1_masked(
// PAGED-PTX-NOT: cp.async.cg
// PAGED-PTX: ld.global.b32
// PAGED-PTX: mbarrier.arrive.expect_tx.shared.b64 _, [%r{{[0-9]+}}], 73728;
// PAGED-PTX: cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [
// PAGED-PTX: mbarrier.try_wait.parity.shared.b64
// PAGED-PTX-NOT: cp.async.cg
// PAGED-PTX-NOT: L2::cache_hint
// PAGED-PTX-LABEL: .entry deepseek_r1_decode_bf16_sm90a_paged64_stage1_mask_free(

// fp8 KV a tile ahead in registers: the loop's loads of the next tile are
// 16-byte global loads at immediate offsets from one address, its stores of
// the converted tile 16-byte shared stores; no asynchronous copy; 2 programs
// per SM and no spills. Shared memory: Q 16 x 576 bf16 (18432), the f16
// tile 64 x 576 (73728; with register A its rope columns are allocated but
// not written), the row max's 16 x 4 f32 (256), P's swizzled 16 x 64 f16
// (2048) 1024-aligned at 93184, and the finalize's row sums (256) in the
// 768-byte gap that alignment left: 95232. The same with --wgmma-smem-a.
// FP8: deepseek_r1_decode_fp8_qp16_sm90a_stage1_masked: {{[0-9]+}} registers, 0 B spilled, 0 B stack, 95232 B shared, 128 threads, 2 programs/SM
// FP8: deepseek_r1_decode_fp8_qp16_sm90a_stage1_mask_free: {{[0-9]+}} registers, 0 B spilled, 0 B stack, {{[0-9]+}} B shared, 128 threads, 2 programs/SM
// S^T with the tile as wgmma's register A (ChipTuning::wgmmaRegisterA):
// its 36 K steps on wgmma's register form, A the tile's converted chunks,
// one group of 4 per atom with at most two in flight; each adds its step's
// offset to Q's descriptor itself (no loop-invariant descriptor per step).
// O^T keeps its descriptors (A = V^T MN-major: imm-trans-a 1).
// FP8-PTX-LABEL: .entry deepseek_r1_decode_fp8_qp16_sm90a_stage1_masked(
// FP8-PTX-NOT: cp.async
// FP8-PTX: cvt.rn.f16x2.e4m3x2
// FP8-PTX: wgmma.fence.sync.aligned;
// FP8-PTX-COUNT-36: wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, desc, p, 1, 1, 0;
// FP8-PTX: wgmma.wait_group.sync.aligned 0;
// FP8-PTX: wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 1, 0;
// FP8-PTX-NOT: cp.async
// FP8-PTX-LABEL: .entry deepseek_r1_decode_fp8_qp16_sm90a_stage1_mask_free(
// FP8-PTX: .entry deepseek_r1_decode_fp8_qp16_sm90a_stage2
// The option is listed among mla-compile's own (the others are hidden).
// HELP: mla-compile options:
// HELP: --kv-evict-first-tiles
// HELP: --page-entries-ahead
// HELP: --wgmma-register-v
// HELP: --wgmma-smem-a
// --wgmma-smem-a: S^T reads the converted tile from shared memory too (A
// K-major: imm-trans-a 0).
// FP8-SMEMA-PTX-LABEL: .entry deepseek_r1_decode_fp8_qp16_sm90a_stage1_mask_free
// FP8-SMEMA-PTX-NOT: cp.async
// FP8-SMEMA-PTX: wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 0;
// FP8-SMEMA-PTX: wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {{.*}}, p, 1, 1, 1, 0;
// FP8-SMEMA-PTX-NOT: cp.async
// FP8-SMEMA-PTX: .entry deepseek_r1_decode_fp8_qp16_sm90a_stage2
// --wgmma-register-v (ChipTuning::wgmmaRegisterV, opt-in): O^T takes V as
// register A too, so no 16-bit tile: V's bytes in paired columns (64 x 576
// fp8, 36864) replace it, 58368 B in all. Both dots on the register form
// (36 + 32 instructions), O^T's fragments by ldmatrix.x4.trans at one
// address plus constants (two K steps: 2048 bytes on). The masked kernel
// spills (255 registers, 28 B: S^T's two groups in flight); the option
// stays off (slower on the H100: docs/Design.md).
// FP8-REGV: deepseek_r1_decode_fp8_qp16_sm90a_stage1_masked: {{[0-9]+}} registers, {{[0-9]+}} B spilled, {{[0-9]+}} B stack, 58368 B shared, 128 threads, 2 programs/SM
// FP8-REGV: deepseek_r1_decode_fp8_qp16_sm90a_stage1_mask_free: {{[0-9]+}} registers, 0 B spilled, 0 B stack, 58368 B shared, 128 threads, 2 programs/SM
// FP8-REGV-PTX-LABEL: .entry deepseek_r1_decode_fp8_qp16_sm90a_stage1_mask_free(
// FP8-REGV-PTX-NOT: p, 1, 1, 1, 0;
// FP8-REGV-PTX: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd{{[0-9]+}}+2048];
// FP8-REGV-PTX-COUNT-2: wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {{.*}}, desc, p, 1, 1, 0;
// FP8-REGV-PTX-NOT: p, 1, 1, 1, 0;
// FP8-REGV-PTX: .entry deepseek_r1_decode_fp8_qp16_sm90a_stage2

// One token on 64-row pages and on a token list: the rows' page entries
// (4-byte table loads) or token indices read with the tile's bytes, a tile
// ahead; the same register-A loop, 2 programs per SM, no spills.
// FP8-PAGED: deepseek_r1_decode_fp8_qp16_sm90a_paged64_stage1_masked: {{[0-9]+}} registers, 0 B spilled, 0 B stack, 95232 B shared, 128 threads, 2 programs/SM
// FP8-PAGED: deepseek_r1_decode_fp8_qp16_sm90a_paged64_stage1_mask_free: {{[0-9]+}} registers, 0 B spilled, 0 B stack, 95232 B shared, 128 threads, 2 programs/SM
// FP8-PAGED-PTX-LABEL: .entry deepseek_r1_decode_fp8_qp16_sm90a_paged64_stage1_masked
// FP8-PAGED-PTX-NOT: cp.async
// FP8-PAGED-PTX: ld.global.b32 %r{{[0-9]+}}, [%rd{{[0-9]+}}];
// FP8-PAGED-PTX: ld.global.v4.b32
// FP8-PAGED-PTX: cvt.rn.f16x2.e4m3x2
// FP8-PAGED-PTX: wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {{.*}}, desc, p, 1, 1, 0;
// FP8-PAGED-PTX: .entry deepseek_r1_decode_fp8_qp16_sm90a_paged64_stage2
// FP8-IDX: deepseek_r1_decode_fp8_qp16_sm90a_kvindices_stage1_masked: {{[0-9]+}} registers, 0 B spilled, 0 B stack, 95232 B shared, 128 threads, 2 programs/SM
// FP8-IDX: deepseek_r1_decode_fp8_qp16_sm90a_kvindices_stage1_mask_free: {{[0-9]+}} registers, 0 B spilled, 0 B stack, 95232 B shared, 128 threads, 2 programs/SM
// FP8-IDX-PTX-LABEL: .entry deepseek_r1_decode_fp8_qp16_sm90a_kvindices_stage1_masked
// FP8-IDX-PTX-NOT: cp.async
// FP8-IDX-PTX: ld.global.b32 %r{{[0-9]+}}, [%rd{{[0-9]+}}];
// FP8-IDX-PTX: ld.global.v4.b32
// FP8-IDX-PTX: wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {{.*}}, desc, p, 1, 1, 0;
// FP8-IDX-PTX: .entry deepseek_r1_decode_fp8_qp16_sm90a_kvindices_stage2
// (The loads, conversion and stores, wherever LLVM places the loop's
// blocks.) Q's nine 16-byte loads a thread (the last at +16384) go out
// before the first tile's (ChipTuning::aheadLoadsFirst). The tile's loads
// carry an L2 cache policy, chosen once a program: evict first (CUTLASS's
// EVICT_FIRST) where its KV range is at most 16 tiles (1024 tokens),
// else normal (ChipTuning::kvEvictFirstTiles); with the bound 0, plain
// loads.
// FP8-TILE-LABEL: .entry deepseek_r1_decode_fp8_qp16_sm90a_stage1_mask_free
// FP8-TILE: ld.global.v4.b32 {{.*}}, [{{%rd[0-9]+}}+16384];
// FP8-TILE: setp.lt.s64 [[FEW:%p[0-9]+]], %rd{{[0-9]+}}, 1025;
// FP8-TILE-NEXT: selp.b64 [[POL:%rd[0-9]+]], 1364590687093260288, 1152921504606846976, [[FEW]];
// FP8-TILE: ld.global.L2::cache_hint.v4.b32 {{.*}}, [[[A:%rd[0-9]+]]+0], [[POL]];
// FP8-TILE-NEXT: // end inline asm
// FP8-TILE-NEXT: // begin inline asm
// FP8-TILE-NEXT: ld.global.L2::cache_hint.v4.b32 {{.*}}, [[[A]]+64], [[POL]];
// FP8-TILE: cvt.rn.f16x2.e4m3x2
// FP8-TILE: st.shared.v4.b32 [{{%rd[0-9]+}}+{{[0-9]+}}]
// FP8-NOHINT-NOT: cache_hint
// FP8-NOHINT-LABEL: .entry deepseek_r1_decode_fp8_qp16_sm90a_stage1_mask_free
// FP8-NOHINT: ld.global.v4.b32 {{.*}}, [{{%rd[0-9]+}}+16384];
// FP8-NOHINT: ld.global.v4.b32 {{.*}}, [[[A:%rd[0-9]+]]];
// FP8-NOHINT-NEXT: ld.global.v4.b32 {{.*}}, [[[A]]+64];
// FP8-NOHINT-NOT: cache_hint

// fp8 MTP 2: two warpgroups on 128-token tiles, N = 32 (both tokens); the
// fp8 bytes a tile ahead shared by 256 threads; S^T on register A: no
// spills.
// FP8-MTP2: deepseek_r1_decode_fp8_qp16_sm90a_mtp2_stage1_masked: {{[0-9]+}} registers, 0 B spilled, 0 B stack, {{[0-9]+}} B shared, 256 threads, 1 programs/SM
// FP8-MTP2-PTX-LABEL: .entry deepseek_r1_decode_fp8_qp16_sm90a_mtp2_stage1_masked
// FP8-MTP2-PTX-NOT: cp.async
// FP8-MTP2-PTX: cvt.rn.f16x2.e4m3x2
// FP8-MTP2-PTX: wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {{.*}}, desc, p, 1, 1, 0;
// FP8-MTP2-PTX: wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {{.*}}, p, 1, 1, 1, 0;
// FP8-MTP2-PTX-NOT: cp.async
// FP8-MTP2-PTX: .entry deepseek_r1_decode_fp8_qp16_sm90a_mtp2_stage2

// The same on 64-row pages: the rows' page entries (4-byte loads from the
// table: ld.global.b32) read with the tile's bytes, a tile ahead; no
// asynchronous copy.
// FP8-MTP2-PAGED: deepseek_r1_decode_fp8_qp16_sm90a_mtp2_paged64_stage1_masked: {{[0-9]+}} registers, 0 B spilled, 0 B stack, {{[0-9]+}} B shared, 256 threads, 1 programs/SM
// FP8-MTP2-PAGED-PTX-LABEL: .entry deepseek_r1_decode_fp8_qp16_sm90a_mtp2_paged64_stage1_masked
// FP8-MTP2-PAGED-PTX-NOT: cp.async
// FP8-MTP2-PAGED-PTX: ld.global.b32 %r{{[0-9]+}}, [%rd{{[0-9]+}}];
// FP8-MTP2-PAGED-PTX: ld.global.v4.b32
// FP8-MTP2-PAGED-PTX: cvt.rn.f16x2.e4m3x2
// FP8-MTP2-PAGED-PTX: wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16
// FP8-MTP2-PAGED-PTX-NOT: cp.async
// FP8-MTP2-PAGED-PTX: .entry deepseek_r1_decode_fp8_qp16_sm90a_mtp2_paged64_stage2

// fp8 with 128 heads: MTP 2's schedule on 32 heads a program (N = 32), two
// warpgroups on 128-token tiles, no spills in either variant.
// FP8-H128: deepseek_r1_decode_fp8_qp16_sm90a_h128_stage1_masked: {{[0-9]+}} registers, 0 B spilled, 0 B stack, {{[0-9]+}} B shared, 256 threads, 1 programs/SM
// FP8-H128: deepseek_r1_decode_fp8_qp16_sm90a_h128_stage1_mask_free: {{[0-9]+}} registers, 0 B spilled, 0 B stack, {{[0-9]+}} B shared, 256 threads, 1 programs/SM
// FP8-H128-PTX-LABEL: .entry deepseek_r1_decode_fp8_qp16_sm90a_h128_stage1_mask_free
// FP8-H128-PTX-NOT: cp.async
// FP8-H128-PTX: cvt.rn.f16x2.e4m3x2
// FP8-H128-PTX: wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {{.*}}, desc, p, 1, 1, 0;
// FP8-H128-PTX: wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {{.*}}, p, 1, 1, 1, 0;
// FP8-H128-PTX-NOT: cp.async
// FP8-H128-PTX: .entry deepseek_r1_decode_fp8_qp16_sm90a_h128_stage2

// fp8 Q and P: the fp8 KV tile by the tensor memory accelerator (boxes of
// 64 x 64 bytes, 36 864 bytes a tile, the map's swizzle 64 bytes), S^T on
// the e4m3 form straight from it (a rolled loop of 6 steps of K = 32),
// V^T transposed from it by byte permutes while S^T runs, the next tile
// sent once both have read this one (after the wait and a barrier), then
// O^T on the e4m3 form too; one buffer, two programs per SM.
// FP8-QP8: deepseek_r1_decode_fp8_qp8_sm90a_stage1_mask_free: {{[0-9]+}} registers, 0 B spilled, 0 B stack, {{[0-9]+}} B shared, 128 threads, 2 programs/SM
// FP8-QP8-PTX-LABEL: .entry deepseek_r1_decode_fp8_qp8_sm90a_stage1_masked
// The first KV tile goes out after Q's nine 16-byte loads a thread and
// before Q's quantisation and stores (ChipTuning::aheadLoadsFirst).
// FP8-QP8-PTX-COUNT-9: ld.global.v4
// FP8-QP8-PTX-NOT: ld.global.v4
// FP8-QP8-PTX: mbarrier.arrive.expect_tx.shared.b64 _, [%r{{[0-9]+}}], 36864;
// FP8-QP8-PTX: cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes
// Q is rounded once, by the pair rounding (no software e4m3 rounding first),
// in registers on its way from global memory: 8 elements a 16-byte load,
// one 8-byte store of fp8, and no 16-bit copy in shared memory to read back.
// Before the rounding, the program's largest |q| (mla.quant_scale): 16-lane
// butterflies, one value a 16-lane group through shared memory.
// FP8-QP8-PTX-NOT: cvt.rzi.u32.f32
// FP8-QP8-PTX-NOT: cvt.rn.satfinite
// FP8-QP8-PTX-COUNT-4: shfl.sync.bfly.b32
// FP8-QP8-PTX-NEXT: max.f32
// FP8-QP8-PTX: st.shared.b32
// FP8-QP8-PTX: bar.sync
// FP8-QP8-PTX-COUNT-2: ld.shared.v4.b32
// FP8-QP8-PTX-NOT: ld.shared
// FP8-QP8-PTX-COUNT-4: cvt.rn.satfinite.e4m3x2.f32
// FP8-QP8-PTX-NOT: ld.shared
// FP8-QP8-PTX: st.shared.v2.b32
// FP8-QP8-PTX: mbarrier.try_wait.parity.shared.b64
// FP8-QP8-PTX-COUNT-6: wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3
// FP8-QP8-PTX: ld.shared.b32
// FP8-QP8-PTX: prmt.b32
// FP8-QP8-PTX: st.shared.v4.b32
// One barrier after the transpose and S^T's wait, not one after each: it
// publishes V^T and frees K for the next tile's copy.
// FP8-QP8-PTX-NOT: bar.sync
// FP8-QP8-PTX: wgmma.wait_group.sync.aligned 0;
// FP8-QP8-PTX-NEXT: fence.proxy.async.shared::cta;
// FP8-QP8-PTX-NEXT: bar.sync
// FP8-QP8-PTX: cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes
// FP8-QP8-PTX-NOT: cvt.rn.f16x2.e4m3x2
// FP8-QP8-PTX: wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3
// FP8-QP8-PTX-NOT: cvt.rn.f16x2.e4m3x2
// FP8-QP8-PTX: .entry deepseek_r1_decode_fp8_qp8_sm90a_stage2
// fp8 Q and P with MTP 2: both tokens' 32 rows (N = 32) on two
// warpgroups and 128-token tiles (72 KiB a tile, 128 x 64-byte boxes), the
// first tile sent after Q's loads and before its rounding and stores; one
// program per SM, no spills.
// FP8-QP8-MTP2: deepseek_r1_decode_fp8_qp8_sm90a_mtp2_stage1_masked: {{[0-9]+}} registers, 0 B spilled, 0 B stack, {{[0-9]+}} B shared, 256 threads, 1 programs/SM
// FP8-QP8-MTP2-PTX-LABEL: .entry deepseek_r1_decode_fp8_qp8_sm90a_mtp2_stage1_masked
// FP8-QP8-MTP2-PTX-COUNT-9: ld.global.v4
// FP8-QP8-MTP2-PTX-NOT: ld.global.v4
// FP8-QP8-MTP2-PTX: mbarrier.arrive.expect_tx.shared.b64 _, [%r{{[0-9]+}}], 73728;
// FP8-QP8-MTP2-PTX: cp.async.bulk.tensor.3d
// FP8-QP8-MTP2-PTX: cvt.rn.satfinite.e4m3x2.f32
// FP8-QP8-MTP2-PTX: wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3
// FP8-QP8-MTP2-PTX: prmt.b32
// FP8-QP8-MTP2-PTX-NOT: cvt.rn.f16x2.e4m3x2
// FP8-QP8-MTP2-PTX: .entry deepseek_r1_decode_fp8_qp8_sm90a_mtp2_stage2
// FP8-QP8-JSON: "kind": "tensor_map",
// FP8-QP8-JSON-NEXT: "name": "kv"
// FP8-QP8-JSON-NEXT: "rank": 3
// FP8-QP8-JSON-NEXT: "shape": [
// FP8-QP8-JSON-NEXT: 64,
// FP8-QP8-JSON-NEXT: 64,
// FP8-QP8-JSON-NEXT: 9

// mxfp4 KV a tile ahead in registers (bytes and scales), decoded into the
// swizzled bf16 tile; 2 programs per SM (the bytes take no shared memory)
// and no spills.
// MXFP4: deepseek_r1_decode_mxfp4_sm90a_stage1_masked: {{[0-9]+}} registers, 0 B spilled, 0 B stack, {{[0-9]+}} B shared, 128 threads, 2 programs/SM
// MXFP4: deepseek_r1_decode_mxfp4_sm90a_stage1_mask_free: {{[0-9]+}} registers, 0 B spilled, 0 B stack, {{[0-9]+}} B shared, 128 threads, 2 programs/SM
// MXFP4-PTX-LABEL: .entry deepseek_r1_decode_mxfp4_sm90a_stage1_mask_free
// MXFP4-PTX-NOT: cp.async
// MXFP4-PTX: ld.global.v4.b32
// MXFP4-PTX: ld.global.b8
// MXFP4-PTX: prmt.b32
// MXFP4-PTX: mul.rn.bf16x2
// MXFP4-PTX: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16
// MXFP4-PTX-NOT: cp.async
// MXFP4-PTX: .entry deepseek_r1_decode_mxfp4_sm90a_stage2

// mxfp4 KV on the e4m3 form (fp8 Q and P): the bytes copied asynchronously;
// a lane's scales, the row's reference by a butterfly over its two lanes,
// each block decoded through its byte-permute table into an
// e4m3 tile (no bf16 anywhere in the loop), both products e4m3 wgmma, the
// softmax's two exp2 a score (probabilities and the row sum's true
// weights); 2 programs per SM, no spills.
// MXFP4-QP8: deepseek_r1_decode_mxfp4_qp8_sm90a_stage1_masked: {{[0-9]+}} registers, 0 B spilled, 0 B stack, {{[0-9]+}} B shared, 128 threads, 2 programs/SM
// MXFP4-QP8: deepseek_r1_decode_mxfp4_qp8_sm90a_stage1_mask_free: {{[0-9]+}} registers, 0 B spilled, 0 B stack, {{[0-9]+}} B shared, 128 threads, 2 programs/SM
// MXFP4-QP8-PTX-LABEL: .entry deepseek_r1_decode_mxfp4_qp8_sm90a_stage1_mask_free
// MXFP4-QP8-PTX-NOT: bf16
// MXFP4-QP8-PTX: cp.async.cg.shared.global
// MXFP4-QP8-PTX: cp.async.wait_group 0
// MXFP4-QP8-PTX: ld.shared.b8
// MXFP4-QP8-PTX: shfl.sync.bfly.b32
// MXFP4-QP8-PTX: ld.shared.v4.b32
// MXFP4-QP8-PTX: prmt.b32
// MXFP4-QP8-PTX: st.shared.v4.b32
// The one byte buffer's next tile goes out as soon as the decode has read
// it, before the dots (no wait until the next iteration's top).
// MXFP4-QP8-PTX: bar.sync
// MXFP4-QP8-PTX: cp.async.cg.shared.global
// MXFP4-QP8-PTX: cp.async.commit_group
// MXFP4-QP8-PTX-NOT: cp.async.wait_group
// MXFP4-QP8-PTX: wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3
// The row maxima's vote (ChipTuning::rescaleSlackLog2). Past it the block
// order is the backend's (P^T's e4m3 dot sits above the loop's top), so
// no bf16 anywhere in the kernel is checked instead.
// MXFP4-QP8-PTX: bar.red.or.pred
// MXFP4-QP8-PTX-NOT: bf16
// MXFP4-QP8-PTX: .entry deepseek_r1_decode_mxfp4_qp8_sm90a_stage2
