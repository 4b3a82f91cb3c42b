; The byte order GpuTarget::bytePerm relies on for v_perm_b32
; (llvm.amdgcn.perm): selector byte k picks byte sel[k] of the 8-byte value
; whose bytes 0-3 are src1 and bytes 4-7 are src0, so bytePerm(lo, hi, sel)
; passes (hi, lo). With lo = 0x03020100 and hi = 0x07060504 every byte is
; its own index, so the result must equal the selector: the four selectors
; of the byte transposes (mla-lower-to-gpu, readAcrossTiles) are checked
; through LLVM's constant folding of the intrinsic.
; RUN: opt -S -passes=instcombine -mtriple=amdgcn-amd-amdhsa %s | FileCheck %s

declare i32 @llvm.amdgcn.perm(i32, i32, i32)

; CHECK-LABEL: @interleave_lo
; CHECK: ret i32 83952640
define i32 @interleave_lo() {
  ; {lo0, hi0, lo1, hi1} = 0x05010400
  %r = call i32 @llvm.amdgcn.perm(i32 u0x07060504, i32 u0x03020100, i32 u0x05010400)
  ret i32 %r
}

; CHECK-LABEL: @interleave_hi
; CHECK: ret i32 117638658
define i32 @interleave_hi() {
  ; {lo2, hi2, lo3, hi3} = 0x07030602
  %r = call i32 @llvm.amdgcn.perm(i32 u0x07060504, i32 u0x03020100, i32 u0x07030602)
  ret i32 %r
}

; CHECK-LABEL: @halves
; CHECK: ret i32 84148480
define i32 @halves() {
  ; {lo0, lo1, hi0, hi1} = 0x05040100
  %r = call i32 @llvm.amdgcn.perm(i32 u0x07060504, i32 u0x03020100, i32 u0x05040100)
  ret i32 %r
}
