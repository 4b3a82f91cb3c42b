// The KV tile's double buffer of LDS DMA loads on gfx950, end to end on the
// emulator. The DeepSeek specs keep a single buffer (two tiles beside Q
// would halve the workgroups per CU: Lowering::canPrefetch), so a small
// spec (192 = 128 + 64 dims, 64-token tiles of 13 KiB) whose two buffers
// still leave room for two workgroups takes it. The emulator stops on any
// LDS access to bytes of an LDS DMA load that its wave's s_waitcnt has not
// retired (docs/Emulator.md): the long lengths below run many tiles per
// split through both buffers. Without the loop's s_waitcnt vmcnt(0) it
// reports "... may still be writing it".
// RUN: mla-compile %s --chip=gfx950 -o %t | FileCheck %s --check-prefix=REPORT
// RUN: FileCheck %s --check-prefix=ASM < %t/small_dma.s
// RUN: mla-run %s --chip=gfx950 --kv-lens=0,1,17,63,64,65,1000,4099 | FileCheck %s
// RUN: mla-run %s --chip=gfx950 --kv-lens=16384,16000,8191 | FileCheck %s
// RUN: mla-run %s --chip=gfx950 --kv-lens=8192,8192 | FileCheck %s --check-prefix=EXACT
mla.decode @small_dma {
  num_heads = 16, num_kv_heads = 1, qk_dim = 192, v_dim = 128, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1, softmax_scale = 0.0721687835 : f32,
  block_n = 64, num_warps = 4}

// Two 64 x 208-byte buffers, Q (16 x 200 bf16) and the row reductions:
// 35840 bytes.
// REPORT: small_dma_stage1_masked: {{.*}} 0 VGPR spills, 35840 B LDS, 0 B scratch
// REPORT: small_dma_stage1_mask_free: {{.*}} 0 VGPR spills, 35840 B LDS, 0 B scratch

// 13 wave-loads a tile (wave 0 four, the others three), four to an M0
// value; the first tile before the loop, the next in it, after the wait
// for this one and a barrier that does not wait for LDS DMA loads.
// ASM-LABEL: small_dma_stage1_mask_free:
// ASM: s_mov_b32 m0,
// ASM: buffer_load_dwordx4 v{{[0-9]+}}, s[{{[0-9]+}}:{{[0-9]+}}], 0 offen lds
// ASM: buffer_load_dwordx4 v{{[0-9]+}}, s[{{[0-9]+}}:{{[0-9]+}}], 0 offen offset:1024 lds
// ASM: buffer_load_dwordx4 v{{[0-9]+}}, s[{{[0-9]+}}:{{[0-9]+}}], 0 offen offset:2048 lds
// ASM: buffer_load_dwordx4 v{{[0-9]+}}, s[{{[0-9]+}}:{{[0-9]+}}], 0 offen offset:3072 lds
// ASM: s_waitcnt vmcnt(0) lgkmcnt(0)
// ASM-NEXT: s_barrier
// ASM: buffer_load_dwordx4 v{{[0-9]+}}, s[{{[0-9]+}}:{{[0-9]+}}], 0 offen lds
// ASM-LABEL: small_dma_stage2:
// ASM-NOT: lds

// CHECK: stage 1   @small_dma_stage1_masked
// CHECK: rel. Frobenius error vs float64 reference: {{[0-9.]+}}e-0{{[3-9]}}
// CHECK: OK
// EXACT: stage 1   @small_dma_stage1_mask_free
// EXACT: OK
