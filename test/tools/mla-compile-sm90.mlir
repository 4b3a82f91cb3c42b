// mla-compile: spec -> PTX -> cubin (ptxas from /usr/local/cuda) + manifest
// + resource report.
// RUN: rm -rf %t && mla-compile %s --chip=sm_90 -o %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t/small.json
// RUN: test -s %t/small.cubin && test -s %t/small.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t/small.ptx
// RUN: FileCheck %s --check-prefix=PDL < %t/small.ptx
// RUN: FileCheck %s --check-prefix=JSON-PDL < %t/small.json
// RUN: FileCheck %s --check-prefix=JSON-CL < %t/small.json
// RUN: cat %S/Inputs/stale-ptxas-report.txt >> %t/small.ptxas.txt
// RUN: mla-compile %s --chip=sm_90 -o %t | FileCheck %s --check-prefix=AGAIN
// RUN: FileCheck %s --check-prefix=AGAIN-FILE < %t/small.ptxas.txt
// RUN: not mla-compile %s --chip=host -o %t 2>&1 | FileCheck %s --check-prefix=HOST
// RUN: not mla-compile %S/Inputs/no-decode.mlir --chip=sm_90 -o %t 2>&1 | FileCheck %s --check-prefix=NO-SPEC
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_qp16.mlir --chip=sm_90 -o %t/qp16 | FileCheck %s --check-prefix=QP16-REPORT
// RUN: FileCheck %s --check-prefix=QP16 < %t/qp16/deepseek_r1_decode_fp8_qp16.ptx
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_qp16_paged64.mlir --chip=sm_90 -o %t/paged | FileCheck %s --check-prefix=PAGED-REPORT
// RUN: mla-compile %kernels/deepseek_r1_decode_mxfp4.mlir --chip=sm_90 -o %t/mxfp4 | FileCheck %s --check-prefix=MXFP4-REPORT
// RUN: FileCheck %s --check-prefix=MXFP4 < %t/mxfp4/deepseek_r1_decode_mxfp4.ptx
// RUN: mla-compile %kernels/deepseek_r1_decode_mxfp4_n32.mlir --chip=sm_90 -o %t/mxfp4n32 | FileCheck %s --check-prefix=MXFP4-N32
// RUN: FileCheck %s --check-prefix=PAGED < %t/paged/deepseek_r1_decode_fp8_qp16_paged64.ptx
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_qp16_mtp2.mlir --chip=sm_90 -o %t/mtp2 | FileCheck %s --check-prefix=MTP2-REPORT
// RUN: mla-compile %kernels/deepseek_r1_decode_bf16_h128.mlir --chip=sm_90 -o %t/h128 | FileCheck %s --check-prefix=H128-REPORT
// RUN: FileCheck %s --check-prefix=BF16-COPY < %t/h128/deepseek_r1_decode_bf16_h128.ptx

mla.decode @small {
  num_heads = 16, num_kv_heads = 1, qk_dim = 96, v_dim = 64, rope_dim = 32,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1, softmax_scale = 0.102062076 : f32,
  block_n = 32, num_warps = 4}

// CHECK: kernel resources (sm_90, ptxas -v):
// CHECK-NEXT: small_stage1_masked: {{[0-9]+}} registers, 0 B spilled, 0 B stack, {{[0-9]+}} B shared, 128 threads
// CHECK-NEXT: small_stage1_mask_free: {{[0-9]+}} registers, 0 B spilled, 0 B stack
// CHECK-NEXT: small_stage2: {{[0-9]+}} registers, 0 B spilled
// CHECK: wrote {{.*}}small.cubin

// Compiled again into the same folder, over a longer report left there:
// the figures (and the report) are this ptxas run's alone.
// AGAIN: small_stage1_masked: {{[0-9]+}} registers, 0 B spilled, 0 B stack
// AGAIN-NOT: 255 registers
// AGAIN-FILE-NOT: 255 registers

// JSON: "binary": "small.cubin"
// JSON: "compute_units": 132
// JSON: "kernels": [
// JSON: "name": "q"
// JSON: "name": "kv"
// JSON: "name": "kv_scale"
// JSON: "kind": "i64",
// JSON-NEXT: "name": "num_splits"
// JSON: "dispatch_kv_multiple": 32
// JSON: "variant": "mask_free"
// JSON: "split_candidates": [

// fp8 K and V become bf16 through the hardware conversion to f16 pairs
// (exact), widened: K's pairs one per instruction, V's single elements with
// a zero partner. No other way in: the stage-1 kernels use it.
// PTX-LABEL: .entry small_stage1_masked(
// PTX: cvt.rn.f16x2.e4m3x2
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-LABEL: .entry small_stage1_mask_free(
// PTX: cvt.rn.f16x2.e4m3x2
// PTX-LABEL: .entry small_stage2(
// PTX-NOT: cvt.rn.f16x2.e4m3x2

// Programmatic dependent launch (ChipInfo::dependentLaunch): stage 1 lets
// its dependents start once a program is past its KV loop; stage 2 waits
// for stage 1's stores before its first memory access, and says so in the
// manifest.
// PDL-LABEL: .entry small_stage1_masked(
// PDL: griddepcontrol.launch_dependents;
// PDL-NOT: griddepcontrol.wait
// The single-launch combine after the partial stores (docs/Design.md, "One
// launch for small batches"): the cluster's size, its barrier (arrive with
// release, wait with acquire), then the combine's loads, with no grid wait.
// PDL: mov.u32 %r{{[0-9]+}}, %cluster_nctarank;
// PDL: barrier.cluster.arrive;
// PDL-NEXT: barrier.cluster.wait;
// PDL-NOT: griddepcontrol.wait
// PDL: ld.global
// PDL-NOT: griddepcontrol.wait
// PDL-LABEL: .entry small_stage1_mask_free(
// PDL: griddepcontrol.launch_dependents;
// PDL-NOT: griddepcontrol.wait
// PDL-LABEL: .entry small_stage2(
// qo_indptr is an input, not stage 1's output: its entry is read and
// checked against out's rows before the wait; nothing stage 1 writes is.
// PDL-NOT: st.global
// PDL: ld.global.s32
// PDL-NOT: {{ld.global|st.global}}
// PDL: griddepcontrol.wait;
// PDL-NOT: griddepcontrol.launch_dependents
// PDL: ld.global
// JSON-PDL-NOT: "dependent_launch"
// JSON-PDL: "name": "small_stage1_mask_free"
// JSON-PDL: "dependent_launch": true
// JSON-PDL-NOT: "name": "small_stage1
// JSON-PDL: "name": "small_stage2"
// JSON-CL: "cluster_programs": 16,
// JSON-CL: "name": "small_stage1_masked"
// JSON-CL: "cluster_programs": 16,
// JSON-CL: "name": "small_stage1_mask_free"
// JSON-CL-NOT: "cluster_programs"
// JSON-CL: "name": "small_stage2"

// HOST: mla-compile: error: 'host' is not a GPU chip
// NO-SPEC: mla-compile: error: no mla.decode in {{.*}}no-decode.mlir

// qp_type = f16 on the full spec: both products on the f16 mma.sync, K and
// V pairs straight from cvt.rn.f16x2.e4m3x2 into the operand registers (no
// widening to f32 and cutting to bf16 anywhere in stage 1), P rounded two
// at a time with cvt.rn.f16x2.f32. The loops stay rolled on sm_90: with the
// spec's 8 warps the V loop's body is one K step of 16 tokens over the
// warp's 8 O tiles, 2 pairs of tokens per tile = 16 conversions, after P's
// rounding. 8 warps of 32 threads; the two row-reduction arrays (row-major
// over the warps, 16-byte reads) grow to 16 x (8 + 4) f32, the KV tile is
// double-buffered (asynchronous copies), and S's warp pairs swap 8 warps x
// 4 accumulators x (32 + 4) lanes of f32: 59904 + 512 + 37888 + 4608 =
// 102912 bytes, 2 programs per SM,
// registers held to 128 for that (nvvm.minctasm). The KV tile's async
// copies address a chunk as the tile's base plus the chunk's 32-bit offset
// in the tile (invariant across tiles), which keeps both variants well
// within it (about 110 / 122 registers), without spills.
// QP16-REPORT: deepseek_r1_decode_fp8_qp16_stage1_masked: {{(1[01][0-9]|12[0-8])}} registers, 0 B spilled, 0 B stack, 102912 B shared, 256 threads, 2 programs/SM
// QP16-REPORT-NEXT: deepseek_r1_decode_fp8_qp16_stage1_mask_free: {{(1[01][0-9]|12[0-8])}} registers, 0 B spilled, 0 B stack, 102912 B shared, 256 threads, 2 programs/SM
// S = Q K^T runs in groups of 4 K steps with K permuted alike in Q and K
// (groupKSteps), K split across warp pairs (each warp computes its own and
// its partner's 8 columns over 5 or 4 of the 9 groups). Q is stored in the
// grouping's K order by its copy (kOrderFor: 4-byte pieces of each 16-byte
// chunk to their places), so its fragments are the instruction's own A
// layout: per group 4 ldmatrix.x4 for Q, one 16-byte load of K per tile,
// 16 pair conversions, 8 mma; no register moves to pair Q's rows. P's A
// fragments (f16 in shared
// memory, rows 16-byte aligned) come with one ldmatrix.x4 per K step
// (MatrixInstr::aByLdmatrix).
// The prologue: the first KV tile's async copies go out first (one group),
// then Q's 5 rounds of 16-byte loads (1152 chunks over 256 threads, the
// last round guarded) before any of its stores, rounded to f16 in
// registers and stored at Q's region (byte 75776, after the two KV
// buffers) in 4-byte pieces.
// QP16-LABEL: .entry deepseek_r1_decode_fp8_qp16_stage1_masked(
// QP16: cp.async.commit_group
// QP16-COUNT-4: ld.global.v4.b32
// QP16-NOT: st.shared
// QP16: ld.global.v4.b32
// QP16: cvt.rn.f16x2.f32
// QP16: st.shared.b32 [%rd[[QDST:[0-9]+]]+75776], %r{{[0-9]+}};
// QP16-NEXT: st.shared.b32 [%rd[[QDST]]+75792], %r{{[0-9]+}};
// QP16-NEXT: st.shared.b32 [%rd[[QDST]]+75808], %r{{[0-9]+}};
// QP16-NEXT: st.shared.b32 [%rd[[QDST]]+75824], %r{{[0-9]+}};
// QP16-NOT: cvt.f32.f16
// QP16: cp.async.wait_group 0;
// QP16-NEXT: bar.sync 0;
// QP16: cp.async.commit_group;
// S, straight-line: per group 4 ldmatrix.x4 of Q, a 16-byte K load per
// 8-column tile (2), 16 pair conversions, 8 mma; 4 groups for each warp of a
// pair, the fifth for the first warp under a branch (no loop back).
// QP16-NOT: bar.sync
// QP16-COUNT-32: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// QP16-NOT: bar.sync
// QP16-COUNT-8: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// QP16-NOT: mma.sync
// QP16: bar.sync 0;
// QP16-NOT: cvt.f32.f16
// QP16: cvt.rn.f16x2.f32
// QP16-NOT: cvt.f32.f16
// QP16: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// QP16-NOT: cvt.f32.f16
// QP16-COUNT-16: cvt.rn.f16x2.e4m3x2
// QP16-NOT: cvt.f32.f16
// QP16-LABEL: .entry deepseek_r1_decode_fp8_qp16_stage1_mask_free(
// In the loop, the next tile's 9 copies per thread: the tile's first byte
// once (its row x 576 + kv's address), the buffer's, then one 64-bit add
// per chunk of the chunk's offset in the tile, which stays in a register
// from tile to tile.
// QP16: cp.async.wait_group 0;
// QP16-NEXT: bar.sync 0;
// QP16: mad.lo.s64 %rd[[BASE:[0-9]+]], %rd{{[0-9]+}}, 576, %rd{{[0-9]+}};
// QP16-NEXT: mad.lo.s64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, 37888, %rd{{[0-9]+}};
// QP16-NEXT: add.s64 %rd[[SRC0:[0-9]+]], %rd[[BASE]], %rd{{[0-9]+}};
// QP16-NEXT: add.s64 %rd[[DST0:[0-9]+]], %rd{{[0-9]+}}, %rd{{[0-9]+}};
// QP16-NEXT: cp.async.cg.shared.global [%rd[[DST0]]], [%rd[[SRC0]]], 16;
// QP16-NEXT: add.s64 %rd[[SRC1:[0-9]+]], %rd[[BASE]], %rd{{[0-9]+}};
// QP16-NEXT: add.s64 %rd[[DST1:[0-9]+]], %rd{{[0-9]+}}, %rd{{[0-9]+}};
// QP16-NEXT: cp.async.cg.shared.global [%rd[[DST1]]], [%rd[[SRC1]]], 16;
// QP16-NEXT: add.s64 %rd[[SRC2:[0-9]+]], %rd[[BASE]], %rd{{[0-9]+}};
// QP16-NEXT: add.s64 %rd[[DST2:[0-9]+]], %rd{{[0-9]+}}, %rd{{[0-9]+}};
// QP16-NEXT: cp.async.cg.shared.global [%rd[[DST2]]], [%rd[[SRC2]]], 16;
// QP16-NEXT: add.s64 %rd[[SRC3:[0-9]+]], %rd[[BASE]], %rd{{[0-9]+}};
// QP16-NEXT: add.s64 %rd[[DST3:[0-9]+]], %rd{{[0-9]+}}, %rd{{[0-9]+}};
// QP16-NEXT: cp.async.cg.shared.global [%rd[[DST3]]], [%rd[[SRC3]]], 16;
// QP16-NEXT: add.s64 %rd[[SRC4:[0-9]+]], %rd[[BASE]], %rd{{[0-9]+}};
// QP16-NEXT: add.s64 %rd[[DST4:[0-9]+]], %rd{{[0-9]+}}, %rd{{[0-9]+}};
// QP16-NEXT: cp.async.cg.shared.global [%rd[[DST4]]], [%rd[[SRC4]]], 16;
// QP16-NEXT: add.s64 %rd[[SRC5:[0-9]+]], %rd[[BASE]], %rd{{[0-9]+}};
// QP16-NEXT: add.s64 %rd[[DST5:[0-9]+]], %rd{{[0-9]+}}, %rd{{[0-9]+}};
// QP16-NEXT: cp.async.cg.shared.global [%rd[[DST5]]], [%rd[[SRC5]]], 16;
// QP16-NEXT: add.s64 %rd[[SRC6:[0-9]+]], %rd[[BASE]], %rd{{[0-9]+}};
// QP16-NEXT: add.s64 %rd[[DST6:[0-9]+]], %rd{{[0-9]+}}, %rd{{[0-9]+}};
// QP16-NEXT: cp.async.cg.shared.global [%rd[[DST6]]], [%rd[[SRC6]]], 16;
// QP16-NEXT: add.s64 %rd[[SRC7:[0-9]+]], %rd[[BASE]], %rd{{[0-9]+}};
// QP16-NEXT: add.s64 %rd[[DST7:[0-9]+]], %rd{{[0-9]+}}, %rd{{[0-9]+}};
// QP16-NEXT: cp.async.cg.shared.global [%rd[[DST7]]], [%rd[[SRC7]]], 16;
// QP16-NEXT: add.s64 %rd[[SRC8:[0-9]+]], %rd[[BASE]], %rd{{[0-9]+}};
// QP16-NEXT: add.s64 %rd[[DST8:[0-9]+]], %rd{{[0-9]+}}, %rd{{[0-9]+}};
// QP16-NEXT: cp.async.cg.shared.global [%rd[[DST8]]], [%rd[[SRC8]]], 16;
// QP16: cp.async.commit_group;
// QP16-NOT: cvt.f32.f16
// QP16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// QP16-NOT: cvt.f32.f16
// The split-K combine: 128 threads over 512 columns, each a run of 4
// adjacent ones of its head. The output row (qo_indptr, an input) is read
// and checked against out's rows before the wait for stage 1's stores, with
// no other memory access; then one branch per width of the
// split loop, with one 16-byte load per split of a round: up to 8 splits
// (one straight-line round), up to 16, else a loop of 32 per round.
// Stage 1's own combine at its end (one cluster of splits), first the 4
// splits' case: 4 rows x 512 columns over 256 threads, 2 runs of 4 a
// thread, all 4 splits' loads in one round (8 16-byte loads), no stage-2
// widths (the 16 / 32 branches).
// QP16: barrier.cluster.wait;
// QP16-NOT: griddepcontrol.wait
// QP16-COUNT-8: ld.global.v4.b32
// QP16-NOT: setp.lt.u64 %p{{[0-9]+}}, %rd{{[0-9]+}}, 17;
// QP16-LABEL: .entry deepseek_r1_decode_fp8_qp16_stage2(
// QP16-NOT: griddepcontrol.wait
// QP16: ld.global.s32
// QP16-NOT: {{ld|st}}.global
// QP16: griddepcontrol.wait;
// QP16-NOT: ld.global
// QP16: setp.gt.u64 %p{{[0-9]+}}, %rd[[SPLITS:[0-9]+]], 8;
// QP16-COUNT-8: ld.global.v4.b32
// QP16-NOT: ld.global.v4
// QP16: setp.lt.u64 %p{{[0-9]+}}, %rd[[SPLITS]], 17;
// QP16-COUNT-16: ld.global.v4.b32
// QP16-NOT: ld.global.v4
// QP16: setp.lt.u64 %p{{[0-9]+}}, %rd{{[0-9]+}}, %rd[[SPLITS]];
// QP16-COUNT-32: ld.global.v4.b32
// QP16-NOT: ld.global.v4
// QP16: st.global.b16


// Serving shapes (issue 17), the specs python/mla_torch.py picks on the H200:
// no spills, no stack.
// MTP2-REPORT: deepseek_r1_decode_fp8_qp16_mtp2_stage1_masked: {{.*}} 0 B spilled, 0 B stack
// MTP2-REPORT-NOT: mask_free
// MTP2-REPORT: deepseek_r1_decode_fp8_qp16_mtp2_stage2: {{.*}} 0 B spilled, 0 B stack
// H128-REPORT: deepseek_r1_decode_bf16_h128_stage1_masked: {{.*}} 0 B spilled, 0 B stack
// H128-REPORT: deepseek_r1_decode_bf16_h128_stage1_mask_free: {{.*}} 0 B spilled, 0 B stack
// H128-REPORT: deepseek_r1_decode_bf16_h128_stage2: {{.*}} 0 B spilled, 0 B stack

// bf16 KV (not prefetched): the KV tile of both stage-1 variants goes to
// shared memory by zero-filling cp.async copies (source size 0 past the
// bound), one group waited for at once, not by branchy synchronous loads.
// BF16-COPY-LABEL: .entry deepseek_r1_decode_bf16_h128_stage1_masked
// BF16-COPY: cp.async.cg.shared.global [%{{.*}}], [%{{.*}}], 16, %r{{[0-9]+}};
// BF16-COPY: cp.async.wait_group 0;
// BF16-COPY-LABEL: .entry deepseek_r1_decode_bf16_h128_stage1_mask_free
// BF16-COPY: cp.async.cg.shared.global [%{{.*}}], [%{{.*}}], 16;
// BF16-COPY: cp.async.wait_group 0;

// Paged KV (issue 17), 64-row pages: a tile starts at a multiple of 64 and
// lies within one page, so it reads one block-table entry and is then the
// contiguous tile at that page's row (the double-buffered copies stay,
// 16 bytes each with a source size: zeros past the bound, or everywhere
// for an entry that names no page of the cache).
// PAGED-REPORT: deepseek_r1_decode_fp8_qp16_paged64_stage1_masked: {{.*}} 0 B spilled, 0 B stack
// PAGED-REPORT: deepseek_r1_decode_fp8_qp16_paged64_stage1_mask_free: {{.*}} 0 B spilled, 0 B stack
// PAGED-LABEL: .entry deepseek_r1_decode_fp8_qp16_paged64_stage1_mask_free
// PAGED: cp.async.wait_group 0;
// PAGED: ld.global.b32 [[ENTRY:%r[0-9]+]], [%rd{{[0-9]+}}];
// PAGED-NOT: ld.global.b32
// PAGED: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// PAGED-NOT: ld.global.b32
// PAGED: cp.async.commit_group;

// mxfp4 KV (issue 18): the packed tile by the prefetched asynchronous
// copies, the 18-byte scale rows by byte loads issued together, the bf16
// decoding stored 16 bytes a lane; no spills. The decode of a 4-byte read:
// byte-table prmt lookups (low bytes, sign bytes, high bytes of 4 values),
// two prmt interleaving them into bf16 pairs, one mul.rn.bf16x2 a pair by
// the block's scale.
// MXFP4-REPORT: deepseek_r1_decode_mxfp4_stage1_masked: {{.*}} 0 B spilled, 0 B stack
// MXFP4-REPORT: deepseek_r1_decode_mxfp4_stage1_mask_free: {{.*}} 0 B spilled, 0 B stack
// The H200's mxfp4 spec, 32-token tiles: 3 programs per SM.
// MXFP4-N32: deepseek_r1_decode_mxfp4_n32_stage1_masked: {{.*}} 0 B spilled, 0 B stack, {{[0-9]+}} B shared, 128 threads, 3 programs/SM
// MXFP4-N32: deepseek_r1_decode_mxfp4_n32_stage1_mask_free: {{.*}} 0 B spilled, 0 B stack, {{[0-9]+}} B shared, 128 threads, 3 programs/SM
// MXFP4-LABEL: .entry deepseek_r1_decode_mxfp4_stage1_masked
// MXFP4: cp.async.cg.shared.global
// MXFP4: ld.global.b8
// MXFP4: ld.global.b8
// MXFP4: prmt.b32 [[LO:%r[0-9]+]], -1065353216, -1065336832, [[M:%r[0-9]+]];
// MXFP4-NEXT: prmt.b32 [[S:%r[0-9]+]], 32768, 0, {{%r[0-9]+}};
// MXFP4-NEXT: prmt.b32 [[HI:%r[0-9]+]], 1061109504, 1077952576, [[M]];
// MXFP4-NEXT: or.b32 [[HS:%r[0-9]+]], [[S]], [[HI]];
// MXFP4-NEXT: prmt.b32 [[P0:%r[0-9]+]], [[LO]], [[HS]], 0x5140U;
// MXFP4-NEXT: mul.rn.bf16x2 {{%r[0-9]+}}, [[SC:%r[0-9]+]], [[P0]];
// MXFP4-NEXT: prmt.b32 [[P1:%r[0-9]+]], [[LO]], [[HS]], 0x7362U;
// MXFP4-NEXT: mul.rn.bf16x2 {{%r[0-9]+}}, [[SC]], [[P1]];
// MXFP4: st.shared.v4.b32
// MXFP4: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
