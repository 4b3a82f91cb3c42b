/*===- CudaLaunchAll.c - a prepared launch list in one call ---------------===*
 *
 * python/mla_torch.py prepares each plan's launches once (function, grid,
 * parameter block) and runs them with one ctypes call into this library
 * instead of one marshalled cuLaunchKernel per kernel: a launch from Python
 * through ctypes cost ~8 us of host time on the H200 host
 * (bench/probe_host.py). A kernel marked dependent is launched with
 * programmatic stream serialization (it waits for the previous kernel's
 * stores itself, the manifest's dependent_launch).
 *===----------------------------------------------------------------------===*/
#include <cuda.h>
#include <string.h>

typedef struct mla_cuda_launch {
  CUfunction function;
  unsigned grid_x, grid_y, block_x, shared;
  int dependent;
  void **params;
} mla_cuda_launch;

/* Launches l[0..n) in order on `stream`; launches with an empty grid are
 * skipped. Returns the first failing CUresult (later ones not launched). */
int mla_cuda_launch_all(const mla_cuda_launch *l, int n, CUstream stream) {
  for (int i = 0; i < n; ++i) {
    if (!l[i].grid_x || !l[i].grid_y)
      continue;
    CUresult r;
    if (l[i].dependent) {
      CUlaunchAttribute attr;
      memset(&attr, 0, sizeof attr);
      attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      attr.value.programmaticStreamSerializationAllowed = 1;
      CUlaunchConfig cfg;
      memset(&cfg, 0, sizeof cfg);
      cfg.gridDimX = l[i].grid_x, cfg.gridDimY = l[i].grid_y, cfg.gridDimZ = 1;
      cfg.blockDimX = l[i].block_x, cfg.blockDimY = 1, cfg.blockDimZ = 1;
      cfg.sharedMemBytes = l[i].shared;
      cfg.hStream = stream;
      cfg.attrs = &attr;
      cfg.numAttrs = 1;
      r = cuLaunchKernelEx(&cfg, l[i].function, l[i].params, NULL);
    } else {
      r = cuLaunchKernel(l[i].function, l[i].grid_x, l[i].grid_y, 1, l[i].block_x, 1, 1,
                         l[i].shared, stream, l[i].params, NULL);
    }
    if (r != CUDA_SUCCESS)
      return (int)r;
  }
  return 0;
}
