// How many KV tiles a program must keep in flight: a probe of the H200's
// per-SM copy rate with the bulk-copy engine, outside the compiler.
//
// Each of `ctas` programs (one per SM: 199 KiB of dynamic shared memory
// each) streams `tiles` tiles of 73,728 bytes (a 64-token bf16 KV tile, 9
// bulk copies of 8 KiB, as sm_90a's bf16 spec sends 9 boxes) through a
// ring of `stages` tile slots on one mbarrier each, and spends `work_ns`
// per tile in a spin (the dots' time) before releasing the slot. The
// aggregate rate for stages 2 (today's double buffer) against 3 says
// whether a deeper ring would move more bytes at the spec's per-tile work.
//
//   nvcc -O3 -arch=sm_90a -o probe_tma_ring bench/probe_tma_ring.cu && ./probe_tma_ring
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CHECK(x)                                                               \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e));    \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

constexpr int kTileBytes = 73728, kBoxBytes = 8192, kBoxes = 9;

__device__ __forceinline__ void mbarInit(uint32_t bar, int count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void mbarExpect(uint32_t bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(bar),
               "r"(bytes));
}
__device__ __forceinline__ void mbarWait(uint32_t bar, int phase) {
  asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared.b64 p, "
               "[%0], %1;\n @!p bra W;\n}" ::"r"(bar),
               "r"(phase));
}
__device__ __forceinline__ void bulkCopy(uint32_t dst, const void *src,
                                         int bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::"
               "bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

__global__ void ring(const char *kv, int tiles, int stages, int workNs,
                     unsigned long long *sink) {
  extern __shared__ __align__(1024) unsigned char smem[];
  uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  uint32_t bars = base + stages * kTileBytes;
  const char *src = kv + size_t(blockIdx.x) * tiles * kTileBytes;
  auto send = [&](int t) {
    uint32_t bar = bars + 8 * (t % stages);
    mbarExpect(bar, kTileBytes);
    for (int b = 0; b < kBoxes; ++b)
      bulkCopy(base + (t % stages) * kTileBytes + b * kBoxBytes,
               src + size_t(t) * kTileBytes + b * kBoxBytes, kBoxBytes, bar);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s)
      mbarInit(bars + 8 * s, 1);
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int t = 0; t < stages && t < tiles; ++t)
      send(t);
  unsigned long long acc = 0;
  for (int t = 0; t < tiles; ++t) {
    mbarWait(bars + 8 * (t % stages), (t / stages) & 1);
    // Touch the tile (one 16-byte read a thread) and stand for the dots.
    acc += *reinterpret_cast<volatile unsigned long long *>(
        smem + (t % stages) * kTileBytes + 16 * threadIdx.x);
    if (workNs) {
      unsigned long long t0;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
      for (;;) {
        unsigned long long t1;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
        if (t1 - t0 >= unsigned(workNs))
          break;
      }
    }
    __syncthreads(); // every thread is done with slot t % stages
    if (threadIdx.x == 0 && t + stages < tiles)
      send(t + stages);
  }
  if (acc == 42)
    *sink = acc;
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int tiles = 64;
  size_t bytes = size_t(sms) * tiles * kTileBytes;
  char *kv, *flush;
  unsigned long long *sink;
  CHECK(cudaMalloc(&kv, bytes));
  CHECK(cudaMemset(kv, 1, bytes));
  CHECK(cudaMalloc(&flush, 256 << 20));
  CHECK(cudaMalloc(&sink, 8));
  CHECK(cudaFuncSetAttribute(ring, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             3 * kTileBytes + 64));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::printf("%d programs x %d tiles of %d bytes (%.0f MB); median of 20, "
              "L2 flushed\n",
              sms, tiles, kTileBytes, bytes / 1e6);
  for (int ctas : {128, sms})
    for (int work : {0, 1000, 1500, 2000, 2500})
      for (int stages : {2, 3}) {
        std::vector<float> ms;
        for (int r = 0; r < 21; ++r) {
          CHECK(cudaMemsetAsync(flush, r, 256 << 20));
          CHECK(cudaEventRecord(a));
          ring<<<ctas, 128, stages * kTileBytes + 64>>>(kv, tiles, stages,
                                                         work, sink);
          CHECK(cudaEventRecord(b));
          CHECK(cudaEventSynchronize(b));
          float t;
          CHECK(cudaEventElapsedTime(&t, a, b));
          if (r)
            ms.push_back(t);
        }
        CHECK(cudaGetLastError());
        std::sort(ms.begin(), ms.end());
        double us = ms[ms.size() / 2] * 1e3;
        double moved = double(ctas) * tiles * kTileBytes;
        std::printf("programs %3d work %4d ns/tile stages %d: %7.1f us, "
                    "%.2f TB/s, %.2f us per tile\n",
                    ctas, work, stages, us, moved / us / 1e6, us / tiles);
      }
  return 0;
}
