// mla-lds-dma-scopes: in a function with LDS DMA loads, the loads get the
// alias scope "lds dma" and every other access through an LDS pointer the
// scope "lds access" with noalias "lds dma", so that LLVM's wait insertion
// does not wait for the loads in flight before each LDS access (the
// lowering waits for them itself). Global accesses and functions without
// LDS DMA loads are left alone.
// RUN: mla-opt --pass-pipeline='builtin.module(gpu.module(mla-lds-dma-scopes))' %s | FileCheck %s
// RUN: mla-opt --mla-to-tiles %S/../tools/mla-run-gfx950-lds-dma.mlir | mla-opt --mla-to-gpu=chip=gfx950 | FileCheck %s --check-prefix=PIPELINE

// CHECK-DAG: #[[$DOM:.*]] = #llvm.alias_scope_domain<{{.*}}description = "mla lds (dma)">
// CHECK-DAG: #[[$DMA:.*]] = #llvm.alias_scope<id = {{.*}}, domain = #[[$DOM]], description = "lds dma">
// CHECK-DAG: #[[$ACC:.*]] = #llvm.alias_scope<id = {{.*}}, domain = #[[$DOM]], description = "lds access">
// CHECK-LABEL: llvm.func @dma
// CHECK: rocdl.raw.ptr.buffer.load.lds {{.*}} {alias_scopes = [#[[$DMA]]]}
// CHECK: llvm.load {{.*}} {alias_scopes = [#[[$ACC]]], {{.*}}noalias_scopes = [#[[$DMA]]]} : !llvm.ptr<3>
// CHECK: llvm.store {{.*}} {alias_scopes = [#[[$ACC]]], {{.*}}noalias_scopes = [#[[$DMA]]]} : f32, !llvm.ptr<3>
// CHECK: rocdl.ds.read.tr8.b64 {{.*}} {alias_scopes = [#[[$ACC]]], noalias_scopes = [#[[$DMA]]]}
// CHECK: llvm.load %{{[a-z0-9]+}} : !llvm.ptr<1> -> f32
// CHECK-LABEL: llvm.func @plain
// CHECK-NOT: alias_scopes
// CHECK: llvm.return
gpu.module @m [#rocdl.target<chip = "gfx950">] {
  llvm.func @dma(%rsrc: !llvm.ptr<8>, %lds: !llvm.ptr<3>, %g: !llvm.ptr<1>, %off: i32) {
    %c16 = llvm.mlir.constant(16 : i32) : i32
    %c0 = llvm.mlir.constant(0 : i32) : i32
    rocdl.raw.ptr.buffer.load.lds %rsrc, %lds, %c16, %off, %c0, %c0, %c0
    %v = llvm.load %lds : !llvm.ptr<3> -> f32
    llvm.store %v, %lds : f32, !llvm.ptr<3>
    %t = rocdl.ds.read.tr8.b64 %lds : !llvm.ptr<3> -> vector<2xi32>
    %w = llvm.load %g : !llvm.ptr<1> -> f32
    llvm.return
  }
  llvm.func @plain(%lds: !llvm.ptr<3>) {
    %v = llvm.load %lds : !llvm.ptr<3> -> f32
    llvm.store %v, %lds : f32, !llvm.ptr<3>
    llvm.return
  }
}

// The pipeline runs it after the ROCDL conversion: the double-buffered
// kernel of tools/mla-run-gfx950-lds-dma.mlir carries the scopes.
// PIPELINE: rocdl.raw.ptr.buffer.load.lds {{.*}}alias_scopes
// PIPELINE: noalias_scopes
