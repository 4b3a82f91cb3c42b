// embed-hip: runs mla-compile's DeepSeek-R1 decode kernels on an AMD GPU
// through the generated headers and the HIP launcher (module API), then
// checks the output against a float64 CPU reference. MI355X (gfx950) takes
// the OCP-fp8 spec, MI300X (gfx942) the FNUZ-fp8 one.
//
//   ./embed-hip [batch] [kv_len]       (default: 4 1024, a task shape)
//
// Exit status: 0 when the error is within 2e-2, or when no AMD GPU is
// present (it says so and launches nothing, as on a machine with only
// Debian's libamdhip64); 1 otherwise.
#include "../common/decode_check.h"
#include "deepseek_r1_decode_fp8.h"        // gfx950
#include "deepseek_r1_decode_fp8_mi300x.h" // gfx942

#include <hip/hip_runtime_api.h>

#include <cstdio>
#include <cstdlib>

#define HIP(call)                                                              \
  do {                                                                         \
    hipError_t e_ = (call);                                                    \
    if (e_ != hipSuccess) {                                                    \
      std::fprintf(stderr, "embed-hip: %s failed: %s\n", #call,                \
                   hipGetErrorName(e_));                                       \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  int64_t batch = argc > 1 ? std::atoll(argv[1]) : 4;
  int64_t kvLen = argc > 2 ? std::atoll(argv[2]) : 1024;

  // The chip decides the spec: try MI355X's, then MI300X's.
  const mla_spec_desc *spec = &deepseek_r1_decode_fp8_spec;
  mla_context *ctx = nullptr;
  mla_status s = deepseek_r1_decode_fp8_create("gfx950", 0, &ctx);
  if (s == MLA_ERROR_CHIP_MISMATCH) {
    spec = &deepseek_r1_decode_fp8_mi300x_spec;
    s = deepseek_r1_decode_fp8_mi300x_create("gfx942", 0, &ctx);
  }
  if (s == MLA_ERROR_NO_DEVICE) {
    std::printf("embed-hip: %s\nembed-hip: nothing launched\n",
                mla_last_error());
    return 0;
  }
  if (s != MLA_SUCCESS) {
    std::fprintf(stderr, "embed-hip: %s\n", mla_last_error());
    return 1;
  }
  HIP(hipSetDevice(0));

  decode_check::Problem p(*spec, batch, kvLen, /*seed=*/std::random_device{}());
  size_t outElems = size_t(batch * spec->num_heads * spec->v_dim);
  size_t wsBytes = 0;
  if (mla_workspace_size(ctx, batch, kvLen, &wsBytes) != MLA_SUCCESS) {
    std::fprintf(stderr, "embed-hip: %s\n", mla_last_error());
    return 1;
  }
  void *q, *kv, *scale, *qo, *kvp, *out, *ws = nullptr;
  HIP(hipMalloc(&q, p.q.size() * 2));
  HIP(hipMalloc(&kv, p.kvBytes()));
  HIP(hipMalloc(&scale, 4));
  HIP(hipMalloc(&qo, p.qoIndptr.size() * 4));
  HIP(hipMalloc(&kvp, p.kvIndptr.size() * 4));
  HIP(hipMalloc(&out, outElems * 2));
  if (wsBytes)
    HIP(hipMalloc(&ws, wsBytes));
  HIP(hipMemcpy(q, p.q.data(), p.q.size() * 2, hipMemcpyHostToDevice));
  HIP(hipMemcpy(kv, p.kvData(), p.kvBytes(), hipMemcpyHostToDevice));
  HIP(hipMemcpy(scale, &p.kvScale, 4, hipMemcpyHostToDevice));
  HIP(hipMemcpy(qo, p.qoIndptr.data(), p.qoIndptr.size() * 4,
                hipMemcpyHostToDevice));
  HIP(hipMemcpy(kvp, p.kvIndptr.data(), p.kvIndptr.size() * 4,
                hipMemcpyHostToDevice));

  std::vector<double> want = p.reference();
  int failures = 0;
  for (bool hostIndptr : {false, true}) {
    HIP(hipMemset(out, 0xff, outElems * 2)); // poison: bf16 NaN
    decode_check::DeviceBuffers d{q, kv, scale, qo, kvp, out, ws, wsBytes};
    mla_decode_args a = decode_check::decodeArgs(p, d, hostIndptr);
    mla_decode_plan plan;
    if (mla_plan_decode(ctx, &a, &plan) != MLA_SUCCESS ||
        mla_decode(ctx, &a, /*stream=*/nullptr) != MLA_SUCCESS) {
      std::fprintf(stderr, "embed-hip: %s\n", mla_last_error());
      return 1;
    }
    HIP(hipDeviceSynchronize());
    std::vector<uint16_t> got(outElems);
    HIP(hipMemcpy(got.data(), out, outElems * 2, hipMemcpyDeviceToHost));
    failures += !decode_check::report("embed-hip", *spec, p, plan,
                                      decode_check::relativeError(got, want));
  }
  for (void *d : {q, kv, scale, qo, kvp, out, ws})
    if (d)
      (void)hipFree(d);
  mla_context_destroy(ctx);
  return failures ? 1 : 0;
}
