// mla-nvvm-grid-constants: after the GPU-to-NVVM conversion, the last
// argument of a kernel carrying mla.kv_tensor_map (the tensor map of its KV
// tile copies) becomes a 128-byte, 64-byte aligned grid constant passed by
// value; other functions are left alone; a kernel whose last argument is
// not a pointer is refused. The PTX it gives:
// test/tools/mla-compile-sm90a.mlir.
// RUN: mla-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline="builtin.module(gpu.module(mla-nvvm-grid-constants))" | FileCheck %s

// CHECK-LABEL: llvm.func @withMap
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-LABEL: llvm.func @withoutMap
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-NOT: byval
module attributes {gpu.container_module} {
  gpu.module @mla_kernels [#nvvm.target<chip = "sm_90a">] {
    llvm.func @withMap(%a: !llvm.ptr, %n: i64, %map: !llvm.ptr)
        attributes {nvvm.kernel, mla.kv_tensor_map = array<i64: 64, 64>} {
      llvm.return
    }
    llvm.func @withoutMap(%a: !llvm.ptr, %b: !llvm.ptr) attributes {nvvm.kernel} {
      llvm.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @mla_kernels [#nvvm.target<chip = "sm_90a">] {
    // expected-error @+1 {{mla.kv_tensor_map: the last argument is not the tensor map's pointer}}
    llvm.func @noPointer(%a: !llvm.ptr, %n: i64)
        attributes {nvvm.kernel, mla.kv_tensor_map = array<i64: 64, 64>} {
      llvm.return
    }
  }
}
