// AMDGPU code objects for gfx950 (MI355X) from the shipped specs, checked on
// the assembly mla-compile writes beside the code object.
// RUN: rm -rf %t && mla-compile %kernels/deepseek_r1_decode_fp8.mlir --chip=gfx950 -o %t | FileCheck %s --check-prefix=REPORT
// RUN: FileCheck %s < %t/deepseek_r1_decode_fp8.s
// RUN: FileCheck %s --check-prefix=CVTPK < %t/deepseek_r1_decode_fp8.s
// RUN: FileCheck %s --check-prefix=CVT < %t/deepseek_r1_decode_fp8.s
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_qp8.mlir --chip=gfx950 -o %t/qp8 | FileCheck %s --check-prefix=QP8-REPORT
// RUN: FileCheck %s --check-prefix=QP8 --implicit-check-not=v_mfma_f32_16x16x32_bf16 --implicit-check-not=v_cvt_scalef32_pk_bf16_fp8 --implicit-check-not=v_cvt_f32_fp8 --implicit-check-not=scratch_ < %t/qp8/deepseek_r1_decode_fp8_qp8.s
// The qp16 spec is tuned for sm_90 (8 warps); CDNA takes it with 4 waves,
// and says why not with 8.
// RUN: not mla-compile %kernels/deepseek_r1_decode_fp8_qp16.mlir --chip=gfx950 -o %t/qp16w8 2>&1 | FileCheck %s --check-prefix=QP16-W8
// RUN: sed -e 's/num_warps = 8/num_warps = 4/' %kernels/deepseek_r1_decode_fp8_qp16.mlir > %t.qp16w4.mlir
// RUN: mla-compile %t.qp16w4.mlir --chip=gfx950 -o %t/qp16 | FileCheck %s --check-prefix=QP16-REPORT
// RUN: FileCheck %s --check-prefix=QP16 --implicit-check-not=v_mfma_f32_16x16x32_bf16 --implicit-check-not=v_cvt_scalef32_pk_bf16_fp8 --implicit-check-not=v_cvt_f32_fp8 --implicit-check-not=scratch_ < %t/qp16/deepseek_r1_decode_fp8_qp16.s
// RUN: FileCheck %s --check-prefix=QP16CVT < %t/qp16/deepseek_r1_decode_fp8_qp16.s
// RUN: FileCheck %s --check-prefix=TR < %t/qp8/deepseek_r1_decode_fp8_qp8.s
// RUN: mla-compile %kernels/deepseek_r1_decode_bf16.mlir --chip=gfx950 -o %t/bf16 | FileCheck %s --check-prefix=BF16-REPORT
// RUN: FileCheck %s --check-prefix=TR16 --implicit-check-not=scratch_ < %t/bf16/deepseek_r1_decode_bf16.s
// RUN: FileCheck %s --check-prefix=PK8 < %t/qp8/deepseek_r1_decode_fp8_qp8.s
// RUN: FileCheck %s --check-prefix=DMA < %t/qp8/deepseek_r1_decode_fp8_qp8.s
// RUN: FileCheck %s --check-prefix=DPP --implicit-check-not=ds_swizzle --implicit-check-not=ds_bpermute < %t/qp8/deepseek_r1_decode_fp8_qp8.s
// RUN: llvm-readelf --notes %t/deepseek_r1_decode_fp8.hsaco | FileCheck %s --check-prefix=ELF
// RUN: FileCheck %s --check-prefix=JSON < %t/deepseek_r1_decode_fp8.json
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_mtp2.mlir --chip=gfx950 -o %t/mtp2 | FileCheck %s --check-prefix=MTP2-REPORT
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_h128.mlir --chip=gfx950 -o %t/h128 | FileCheck %s --check-prefix=H128-REPORT
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_paged64.mlir --chip=gfx950 -o %t/paged | FileCheck %s --check-prefix=PAGED-REPORT -DSPEC=deepseek_r1_decode_fp8_paged64
// RUN: mla-compile %kernels/deepseek_r1_decode_fp8_kvindices.mlir --chip=gfx950 -o %t/indices | FileCheck %s --check-prefix=PAGED-REPORT -DSPEC=deepseek_r1_decode_fp8_kvindices
// RUN: mla-compile %kernels/deepseek_r1_decode_mxfp4.mlir --chip=gfx950 -o %t/mxfp4 | FileCheck %s --check-prefix=MXFP4-REPORT -DSPEC=deepseek_r1_decode_mxfp4
// RUN: FileCheck %s --check-prefix=MXFP4 --implicit-check-not=scratch_ < %t/mxfp4/deepseek_r1_decode_mxfp4.s

// REPORT: kernel resources (gfx950, AMDHSA metadata):
// REPORT-NEXT: deepseek_r1_decode_fp8_stage1_masked: {{[0-9]+}} VGPRs, 0 AGPRs, {{[0-9]+}} SGPRs, 0 VGPR spills, 59392 B LDS, 0 B scratch, {{[1-8]}} waves/SIMD, 256 threads
// REPORT-NEXT: KV loop: {{[0-9]+}} instructions (34 MFMA) per 64 tokens x 4 waves = {{[0-9.]+}} wave-instructions per KV token
// REPORT-NEXT: deepseek_r1_decode_fp8_stage1_mask_free: {{.*}} 0 VGPR spills, 59392 B LDS, 0 B scratch
// REPORT-NEXT: KV loop: {{[0-9]+}} instructions (34 MFMA)
// REPORT-NEXT: deepseek_r1_decode_fp8_stage2: {{.*}} 0 B scratch
// REPORT: wrote {{.*}}deepseek_r1_decode_fp8.hsaco

// CHECK: .amdhsa_code_object_version 6
// Stage 1, 4 waves of 64 lanes. Per wave and KV tile of 64 tokens: S is
// 16 x 64, each wave owns 16 columns: one 16x16x32 MFMA per K step of 32,
// 576 / 32 = 18 steps; O is 16 x 512, each wave owns 128 columns: 8 MFMAs
// per K step of 32 tokens, 64 / 32 = 2 steps. The inner loops are unrolled
// on CDNA: 18 + 16 = 34 MFMA instructions in the KV loop.
// CHECK-LABEL: deepseek_r1_decode_fp8_stage1_masked:
// 16-byte global loads of Q, stored to LDS. The KV tile goes straight
// from memory to LDS (ChipFacts::ldsDmaLoads16; no VGPR holds it, no
// ds_write stores it): 37 wave-loads of 1 KiB fill the 64 padded rows of
// 592 bytes, 9 per wave (10 for wave 0), four to an M0 value (M0 + the
// instruction offset + 16 x lane), through a buffer that ends at the
// sequence's last row: rows past it, and the pad chunks (offset 2^31),
// read as zeros (ChipInfo::boundsCheckedLoads). The loop waits for them
// (s_waitcnt vmcnt(0), then a barrier) before the tile is read; the next
// LDS write is the row maxima's exchange.
// CHECK: global_load_dwordx4
// CHECK: ds_write_b128
// The masked variant's score mask (between S's 18 MFMAs and O's 16; the
// REPORT lines count the loop's 34): the token index of each column a lane
// holds against the bound, -inf where past it:
// CHECK: v_mfma_f32_16x16x32_bf16
// CHECK: v_cmp_gt_i64_e{{32|64}} [[MASK:vcc|s\[[0-9]+:[0-9]+\]]], s{{\[[0-9]+:[0-9]+\]}}, v{{\[[0-9]+:[0-9]+\]}}
// CHECK: v_cndmask_b32_e{{32|64}} v{{[0-9]+}}, v{{[0-9]+}}, v{{[0-9]+}}, [[MASK]]
// CHECK: v_mfma_f32_16x16x32_bf16
// The KV loop's LDS DMA loads (LLVM lays their block out at the loop's end):
// CHECK: s_{{add_i32|mov_b32}} m0,
// CHECK: buffer_load_dwordx4 v{{[0-9]+}}, s{{\[[0-9]+:[0-9]+\]}}, 0 offen lds
// CHECK-NEXT: buffer_load_dwordx4 v{{[0-9]+}}, s{{\[[0-9]+:[0-9]+\]}}, 0 offen offset:1024 lds
// CHECK-NEXT: buffer_load_dwordx4 v{{[0-9]+}}, s{{\[[0-9]+:[0-9]+\]}}, 0 offen offset:2048 lds
// CHECK-NEXT: buffer_load_dwordx4 v{{[0-9]+}}, s{{\[[0-9]+:[0-9]+\]}}, 0 offen offset:3072 lds
// CHECK-NOT: ds_write_b128
// CHECK: ds_write_b32
// CHECK-NOT: scratch_
// CHECK-LABEL: deepseek_r1_decode_fp8_stage1_mask_free:
// CHECK: global_load_dwordx4
// CHECK-NOT: v_cmp_gt_i64
// CHECK-COUNT-34: v_mfma_f32_16x16x32_bf16
// CHECK-NOT: v_cmp_gt_i64
// CHECK: buffer_load_dwordx4 {{.*}} lds
// CHECK-NOT: v_cmp_gt_i64
// CHECK-NOT: scratch_
// CHECK-LABEL: deepseek_r1_decode_fp8_stage2:
// CHECK-NOT: v_mfma
// CHECK-NOT: scratch_
// No scratch in any kernel's metadata:
// CHECK: amdhsa.kernels:
// CHECK: .name: deepseek_r1_decode_fp8_stage1_masked
// CHECK: .private_segment_fixed_size: 0
// CHECK: .name: deepseek_r1_decode_fp8_stage1_mask_free
// CHECK: .private_segment_fixed_size: 0
// CHECK: .name: deepseek_r1_decode_fp8_stage2
// CHECK: .private_segment_fixed_size: 0
// CHECK: amdhsa.target: amdgcn-amd-amdhsa--gfx950

// fp8 K and V reach the bf16 MFMAs through the hardware pair conversion.
// A lane's 8 K elements of a 16x16x32 step are adjacent along the row: 4
// pairs per MFMA x 18 MFMAs = 72 per KV tile. Its 8 V elements of one MFMA
// are 8 tokens (rows) apart: one transposing LDS read (ds_read_b64_tr_b8)
// hands it its column's 8 tokens, then pairs of tokens: 4 pairs x 8 tiles x
// 2 K steps = 64. 72 + 64 = 136, and no single-element conversion
// (v_cvt_f32_fp8) left.
// CVTPK-LABEL: deepseek_r1_decode_fp8_stage1_masked:
// CVTPK-COUNT-136: v_cvt_scalef32_pk_bf16_fp8
// CVTPK-NOT: v_cvt_scalef32_pk_bf16_fp8
// CVTPK-LABEL: deepseek_r1_decode_fp8_stage1_mask_free:
// CVTPK-COUNT-136: v_cvt_scalef32_pk_bf16_fp8
// CVTPK-NOT: v_cvt_scalef32_pk_bf16_fp8
// CVTPK-LABEL: deepseek_r1_decode_fp8_stage2:
// CVT-LABEL: deepseek_r1_decode_fp8_stage1_masked:
// CVT-NOT: v_cvt_f32_fp8
// CVT-LABEL: deepseek_r1_decode_fp8_stage1_mask_free:
// CVT-NOT: v_cvt_f32_fp8
// CVT-LABEL: deepseek_r1_decode_fp8_stage2:

// qp_type = f8E4M3FN: Q and P are fp8 too, so both products run on fp8
// MFMAs with the operands as stored (no conversion instruction anywhere).
// The spec's 128-token tiles let P V (K = 128 tokens) take the 16x16x128
// f8f6f4 instruction: 8 per tile (one per 16-column O tile of a wave). Q K^T
// (K = 576 = 4.5 x 128) runs its first 512 on f8f6f4 (4 per S tile) and the
// last 64 on the 16x16x32 fp8 one (2 per S tile; TargetInfo::kRanges): 2 S
// tiles of a wave = 8 + 4, against 36 fp8 ones over the whole 576.
// P is rounded to fp8 two values at a time by the hardware
// (v_cvt_pk_fp8_f32 after a clamp: ChipInfo::fp8PairEncode): 4 P elements
// per lane and S tile, 2 instructions per tile. Both loops read the KV tile
// through a per-tile buffer (32-bit offsets; the masked one's ends at the
// bound, so its loads need no compare) and meet issue 21's figure: at most
// 12 wave-instructions per KV token (384 instructions per 128-token tile
// and 4 waves).
// QP8-REPORT: deepseek_r1_decode_fp8_qp8_stage1_masked: {{.*}} 0 VGPR spills, {{[0-9]+}} B LDS, 0 B scratch
// QP8-REPORT-NEXT: KV loop: {{([0-2][0-9][0-9]|3[0-7][0-9]|38[0-4])}} instructions (20 MFMA) per 128 tokens x 4 waves = {{([0-9]|1[01])\.[0-9]|12\.0}} wave-instructions per KV token
// QP8-REPORT-NEXT: deepseek_r1_decode_fp8_qp8_stage1_mask_free: {{.*}} 0 VGPR spills, {{[0-9]+}} B LDS, 0 B scratch
// QP8-REPORT-NEXT: KV loop: {{([0-2][0-9][0-9]|3[0-7][0-9]|38[0-4])}} instructions (20 MFMA) per 128 tokens x 4 waves = {{([0-9]|1[01])\.[0-9]|12\.0}} wave-instructions per KV token
// PK8-LABEL: deepseek_r1_decode_fp8_qp8_stage1_masked:
// PK8-COUNT-4: v_cvt_pk_fp8_f32
// PK8-LABEL: deepseek_r1_decode_fp8_qp8_stage1_mask_free:
// PK8-COUNT-4: v_cvt_pk_fp8_f32
// PK8-LABEL: deepseek_r1_decode_fp8_qp8_stage2:
// PK8-NOT: v_cvt_pk_fp8_f32
// The KV tile straight to LDS (ChipFacts::ldsDmaLoads16): 74 wave-loads
// of 1 KiB fill the 128 padded rows of 592 bytes (pad chunks read past the
// buffer: zeros), 18 per wave and one more for waves 0 and 1, four to an
// M0 value. No VGPR holds KV data and no ds_write stores it. One buffer:
// two beside Q and P do not fit in 160 KiB (Lowering::canPrefetch).
// DMA-LABEL: deepseek_r1_decode_fp8_qp8_stage1_mask_free:
// DMA-COUNT-19: buffer_load_dwordx4 v{{[0-9]+}}, s[{{[0-9]+}}:{{[0-9]+}}], 0 offen {{(offset:[0-9]+ )?}}lds
// DMA-NOT: buffer_load_dwordx4 {{.*}} lds
// DMA-LABEL: deepseek_r1_decode_fp8_qp8_stage2:
// QP8-LABEL: deepseek_r1_decode_fp8_qp8_stage1_masked:
// QP8-COUNT-8: v_mfma_f32_16x16x128_f8f6f4
// QP8-COUNT-4: v_mfma_f32_16x16x32_fp8_fp8
// QP8-COUNT-8: v_mfma_f32_16x16x128_f8f6f4 v{{\[[0-9]+:[0-9]+\]}}, v{{\[[0-9]+:[0-9]+\]}}, v{{\[[0-9]+:[0-9]+\]}}, v{{\[[0-9]+:[0-9]+\]}}
// QP8-NOT: v_mfma
// QP8-LABEL: deepseek_r1_decode_fp8_qp8_stage1_mask_free:
// QP8-COUNT-8: v_mfma_f32_16x16x128_f8f6f4
// QP8-COUNT-4: v_mfma_f32_16x16x32_fp8_fp8
// QP8-COUNT-8: v_mfma_f32_16x16x128_f8f6f4
// QP8-NOT: v_mfma
// QP8-LABEL: deepseek_r1_decode_fp8_qp8_stage2:
// QP8: .private_segment_fixed_size: 0

// ELF: AMDGPU Metadata
// ELF: deepseek_r1_decode_fp8_stage1_masked

// JSON: "binary": "deepseek_r1_decode_fp8.hsaco"
// JSON: "chip": "gfx950"
// JSON: "compute_units": 256
// JSON: "kv_loop_mfma": 34
// JSON: "wave_instructions_per_kv_token":

// qp_type = f16: both products on the f16 MFMA of the same shape (34 per
// KV tile), K and V pairs converted by v_cvt_scalef32_pk_f16_fp8 straight
// into operand halves (72 + 64 = 136, as for bf16 above).
// QP16-REPORT: deepseek_r1_decode_fp8_qp16_stage1_masked: {{.*}} 0 VGPR spills, 59392 B LDS, 0 B scratch
// QP16-REPORT-NEXT: KV loop: {{[0-9]+}} instructions (34 MFMA) per 64 tokens x 4 waves
// QP16-LABEL: deepseek_r1_decode_fp8_qp16_stage1_masked:
// QP16-COUNT-34: v_mfma_f32_16x16x32_f16
// QP16-LABEL: deepseek_r1_decode_fp8_qp16_stage1_mask_free:
// QP16-COUNT-34: v_mfma_f32_16x16x32_f16
// QP16-LABEL: deepseek_r1_decode_fp8_qp16_stage2:
// QP16CVT-LABEL: deepseek_r1_decode_fp8_qp16_stage1_masked:
// QP16CVT-COUNT-136: v_cvt_scalef32_pk_f16_fp8
// QP16CVT-NOT: v_cvt_scalef32_pk_f16_fp8
// QP16CVT-LABEL: deepseek_r1_decode_fp8_qp16_stage1_mask_free:
// QP16CVT-COUNT-136: v_cvt_scalef32_pk_f16_fp8
// QP16CVT-NOT: v_cvt_scalef32_pk_f16_fp8
// QP16CVT-LABEL: deepseek_r1_decode_fp8_qp16_stage2:

// V's bytes reach the fp8 MFMA through gfx950's transposing LDS read
// (ChipFacts::transposedLdsReads): each lane addresses 8 bytes of one token
// row and receives one column's 8 tokens; the f8f6f4 B operand (32 tokens
// per lane, K interleaved) takes 4 reads, so 8 O tiles x 4 = 32 per KV
// tile. The accumulator columns stay in natural order for it, and no byte
// transpose (v_perm_b32) is left in the loop (gfx942 keeps it:
// mla-compile-gfx942.mlir).
// TR-LABEL: deepseek_r1_decode_fp8_qp8_stage1_masked:
// TR-COUNT-32: ds_read_b64_tr_b8 v{{\[[0-9]+:[0-9]+\]}}, v{{[0-9]+}}
// TR-NOT: ds_read_b64_tr_b8
// TR-LABEL: deepseek_r1_decode_fp8_qp8_stage1_mask_free:
// One v_perm_b32 is left, in the prologue's copy of Q, before the loop:
// TR-COUNT-1: v_perm_b32
// TR-NOT: v_perm_b32
// TR-COUNT-32: ds_read_b64_tr_b8
// TR-NOT: v_perm_b32
// TR-NOT: ds_read_b64_tr_b8
// TR-LABEL: deepseek_r1_decode_fp8_qp8_stage2:

// bf16 KV: V's B operand of the bf16 MFMA (8 tokens of one column per
// lane) in two ds_read_b64_tr_b16 of 4 tokens each: 2 x 8 tiles x 2 K
// steps = 32 per KV tile, and no half-word packing (v_perm_b32) from the
// first of them to the loop's branch back.
// BF16-REPORT: deepseek_r1_decode_bf16_stage1_masked: {{.*}} 0 VGPR spills, {{[0-9]+}} B LDS, 0 B scratch
// BF16-REPORT: deepseek_r1_decode_bf16_stage1_mask_free: {{.*}} 0 VGPR spills, {{[0-9]+}} B LDS, 0 B scratch
// TR16-LABEL: deepseek_r1_decode_bf16_stage1_masked:
// TR16-COUNT-32: ds_read_b64_tr_b16 v{{\[[0-9]+:[0-9]+\]}}, v{{[0-9]+}}
// TR16-NOT: ds_read_b64_tr_b16
// (The prologue's copy of Q still packs with v_perm_b32.)
// TR16-LABEL: deepseek_r1_decode_bf16_stage1_mask_free:
// TR16: ds_read_b64_tr_b16
// TR16-NOT: v_perm_b32
// TR16: s_cbranch_vccnz
// TR16-LABEL: deepseek_r1_decode_bf16_stage2:

// QP16-W8: error: 'mla.dot' op a tile of 64 columns cannot be split across 8 warps of 16-column instructions


// Serving shapes (issue 17): several query tokens give only a masked stage 1
// (causal edges inside tiles); MTP 2 and 128 heads run 32-row programs
// (block_m = 32).
// Neither spills or uses scratch.
// MTP2-REPORT: deepseek_r1_decode_fp8_mtp2_stage1_masked: {{.*}} 0 VGPR spills, {{.*}} 0 B scratch
// Both tokens' 32 rows in one program (block_m = 32): 2 x 34 MFMAs.
// MTP2-REPORT-NEXT: KV loop: {{[0-9]+}} instructions (68 MFMA) per 64 tokens
// MTP2-REPORT-NOT: mask_free
// MTP2-REPORT: deepseek_r1_decode_fp8_mtp2_stage2: {{.*}} 0 VGPR spills, {{.*}} 0 B scratch
// H128-REPORT: deepseek_r1_decode_fp8_h128_stage1_masked: {{.*}} 0 VGPR spills, {{.*}} 0 B scratch
// Two 16-row MFMA blocks (block_m = 32) per K / V fragment: 2 x 34 MFMAs.
// H128-REPORT-NEXT: KV loop: {{[0-9]+}} instructions (68 MFMA) per 64 tokens
// H128-REPORT: deepseek_r1_decode_fp8_h128_stage1_mask_free: {{.*}} 0 VGPR spills, {{.*}} 0 B scratch
// H128-REPORT: deepseek_r1_decode_fp8_h128_stage2: {{.*}} 0 VGPR spills, {{.*}} 0 B scratch

// Paged KV (issue 17), a block table of 64-row pages and a token list:
// both stage-1 variants, no spills, no scratch. The gathered rows are
// plain global loads, each guarded by its page entry (no per-tile buffer
// resource: its rows are not one range), hence the higher loop figure.
// PAGED-REPORT: [[SPEC]]_stage1_masked: {{.*}} 0 VGPR spills, {{.*}} 0 B scratch
// PAGED-REPORT-NEXT: KV loop: {{[0-9]+}} instructions (34 MFMA) per 64 tokens
// PAGED-REPORT: [[SPEC]]_stage1_mask_free: {{.*}} 0 VGPR spills, {{.*}} 0 B scratch
// PAGED-REPORT: [[SPEC]]_stage2: {{.*}} 0 VGPR spills, {{.*}} 0 B scratch

// mxfp4 KV (issue 18): no spills, no scratch; the bytes reach LDS through
// the per-tile buffer (data) and byte loads (scales, straight-line: one
// wait for all), are decoded there into a bf16 tile, one
// v_cvt_scalef32_pk_bf16_fp4 per byte (the four bytes of a 4-byte read by
// op_sel), that the bf16 MFMA reads (why not the scaled f8f6f4 MFMA:
// docs/Design.md, "mxfp4 KV").
// MXFP4-REPORT: [[SPEC]]_stage1_masked: {{.*}} 0 VGPR spills, {{.*}} 0 B scratch
// MXFP4-REPORT-NEXT: KV loop: {{[0-9]+}} instructions (34 MFMA) per 64 tokens
// MXFP4-REPORT: [[SPEC]]_stage1_mask_free: {{.*}} 0 VGPR spills, {{.*}} 0 B scratch
// MXFP4-REPORT: [[SPEC]]_stage2: {{.*}} 0 VGPR spills, {{.*}} 0 B scratch
// MXFP4-LABEL: deepseek_r1_decode_mxfp4_stage1_masked:
// MXFP4: buffer_load_dwordx4
// MXFP4: ds_read_u8
// MXFP4: ds_read_b32
// MXFP4: v_cvt_scalef32_pk_bf16_fp4 v[[P0:[0-9]+]], [[W:v[0-9]+]], [[S:v[0-9]+]]{{$}}
// MXFP4-NEXT: v_cvt_scalef32_pk_bf16_fp4 {{v[0-9]+}}, [[W]], [[S]] op_sel:[1,0,0]
// MXFP4-NEXT: v_cvt_scalef32_pk_bf16_fp4 {{v[0-9]+}}, [[W]], [[S]] op_sel:[0,1,0]
// MXFP4-NEXT: v_cvt_scalef32_pk_bf16_fp4 {{v[0-9]+}}, [[W]], [[S]] op_sel:[1,1,0]
// MXFP4: ds_write_b128 {{v[0-9]+}}, v{{\[}}[[P0]]:
// MXFP4: v_mfma_f32_16x16x32_bf16

// Row maxima and sums across a row's 16 lanes by DPP permutes (issue #21,
// item 3), folded into the maxima (maxnum: v_max_f32, with the kernel's
// IEEE mode off so that no operand is quieted first) and into the sums; no
// LDS swizzle or bpermute.
// DPP: v_max_f32_dpp {{.*}} quad_perm:[1,0,3,2]
// DPP: v_max_f32_dpp {{.*}} row_half_mirror
// DPP: v_max_f32_dpp {{.*}} row_mirror
// DPP: v_add_f32_dpp {{.*}} row_mirror
// DPP: .amdhsa_ieee_mode 0
