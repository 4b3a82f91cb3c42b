// decode_check.h - host side of the embedding examples: random inputs in the
// spec's formats, a float64 reference of MLA decode, and the relative
// Frobenius error of the GPU's output. Knows nothing of MLIR or of the GPU
// API; embed-hip/ and embed-cuda/ add device memory and the launch.
#ifndef MLA_EXAMPLES_DECODE_CHECK_H
#define MLA_EXAMPLES_DECODE_CHECK_H

#include "mla/launcher.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace decode_check {

inline float bf16ToFloat(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t floatToBf16(float f) { // round to nearest even
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

/// e4m3: OCP "FN" (bias 7, 0x7f / 0xff NaN) or "FNUZ" (bias 8, 0x80 NaN).
inline double fp8ToDouble(uint8_t c, bool fnuz) {
  int sign = c >> 7, exp = (c >> 3) & 15, man = c & 7;
  if (fnuz && c == 0x80)
    return NAN;
  if (!fnuz && (c & 0x7f) == 0x7f)
    return NAN;
  int bias = fnuz ? 8 : 7;
  double v = exp ? std::ldexp(1.0 + man / 8.0, exp - bias)
                 : std::ldexp(man / 8.0, 1 - bias);
  return sign ? -v : v;
}

/// One decode problem in the spec's formats (host copies).
struct Problem {
  int64_t batch, kvLen, heads, qkDim, vDim;
  bool fp8, fnuz;
  double softmaxScale;
  float kvScale = 0.5f;
  std::vector<uint16_t> q;      // bf16 [batch, heads, qkDim]
  std::vector<uint8_t> kvFp8;   // [batch * kvLen, qkDim]
  std::vector<uint16_t> kvBf16; // [batch * kvLen, qkDim]
  std::vector<int32_t> qoIndptr, kvIndptr;

  Problem(const mla_spec_desc &spec, int64_t batch, int64_t kvLen,
          unsigned seed)
      : batch(batch), kvLen(kvLen), heads(spec.num_heads), qkDim(spec.qk_dim),
        vDim(spec.v_dim), fp8(std::string(spec.kv_type).rfind("f8", 0) == 0),
        fnuz(std::string(spec.kv_type).find("FNUZ") != std::string::npos),
        softmaxScale(spec.softmax_scale) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.f, 1.f);
    q.resize(batch * heads * qkDim);
    for (auto &x : q)
      x = floatToBf16(normal(rng));
    size_t kvElems = size_t(batch * kvLen * qkDim);
    if (fp8) {
      // Finite codes around magnitude 1: exponent field 5..9, any mantissa.
      std::uniform_int_distribution<int> sign(0, 1), exp(5, 9), man(0, 7);
      kvFp8.resize(kvElems);
      for (auto &c : kvFp8)
        c = uint8_t(sign(rng) << 7 | exp(rng) << 3 | man(rng));
    } else {
      kvBf16.resize(kvElems);
      for (auto &x : kvBf16)
        x = floatToBf16(normal(rng));
    }
    for (int64_t b = 0; b <= batch; ++b) {
      qoIndptr.push_back(int32_t(b));
      kvIndptr.push_back(int32_t(b * kvLen));
    }
  }

  double kvAt(size_t i) const {
    return fp8 ? fp8ToDouble(kvFp8[i], fnuz) * kvScale : bf16ToFloat(kvBf16[i]);
  }
  const void *kvData() const {
    return fp8 ? static_cast<const void *>(kvFp8.data()) : kvBf16.data();
  }
  size_t kvBytes() const { return fp8 ? kvFp8.size() : kvBf16.size() * 2; }

  /// float64 reference: out[b, h, :] = softmax(q K^T * scale) V.
  std::vector<double> reference() const {
    std::vector<double> out(batch * heads * vDim, 0.0);
    std::vector<double> s(kvLen);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h) {
        const uint16_t *qr = &q[(b * heads + h) * qkDim];
        double m = -INFINITY;
        for (int64_t j = 0; j < kvLen; ++j) {
          size_t row = size_t(kvIndptr[b] + j) * qkDim;
          double dot = 0;
          for (int64_t d = 0; d < qkDim; ++d)
            dot += double(bf16ToFloat(qr[d])) * kvAt(row + d);
          s[j] = dot * softmaxScale;
          m = std::max(m, s[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < kvLen; ++j)
          sum += (s[j] = std::exp(s[j] - m));
        double *o = &out[(b * heads + h) * vDim];
        for (int64_t j = 0; j < kvLen; ++j) {
          size_t row = size_t(kvIndptr[b] + j) * qkDim;
          for (int64_t d = 0; d < vDim; ++d)
            o[d] += s[j] / sum * kvAt(row + d);
        }
      }
    return out;
  }
};

/// Device buffers of one Problem (addresses as the GPU API returned them).
struct DeviceBuffers {
  const void *q, *kv, *kvScale, *qoIndptr, *kvIndptr;
  void *out, *workspace;
  size_t workspaceBytes;
};

/// The launcher's arguments for `p` on `d`; with `hostIndptr` the launcher
/// may pick the mask-free stage 1.
inline mla_decode_args decodeArgs(const Problem &p, const DeviceBuffers &d,
                                  bool hostIndptr) {
  mla_decode_args a = {};
  a.q = d.q;
  a.kv = d.kv;
  a.kv_scale = static_cast<const float *>(d.kvScale);
  a.qo_indptr = static_cast<const int32_t *>(d.qoIndptr);
  a.kv_indptr = static_cast<const int32_t *>(d.kvIndptr);
  a.out = d.out;
  a.workspace = d.workspace;
  a.workspace_bytes = d.workspaceBytes;
  a.batch = p.batch;
  a.max_kv_len = p.kvLen;
  a.kv_indptr_host = hostIndptr ? p.kvIndptr.data() : nullptr;
  a.kv_rows = p.kvIndptr.back(); // the rows of the KV buffer
  return a;
}

/// Relative Frobenius error of a bf16 output; NaN if any value is NaN.
inline double relativeError(const std::vector<uint16_t> &got,
                            const std::vector<double> &want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double g = bf16ToFloat(got[i]);
    if (std::isnan(g))
      return NAN;
    num += (g - want[i]) * (g - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num / (den > 0 ? den : 1));
}

/// Prints one run's line; true when the error is within 2e-2 (false for NaN).
inline bool report(const char *tool, const mla_spec_desc &spec,
                   const Problem &p, const mla_decode_plan &plan, double err) {
  bool ok = err <= 2e-2;
  std::printf(
      "%s: %s bs=%lld kv=%lld splits=%lld %s: relative error %.3e vs float64 "
      "reference %s\n",
      tool, spec.name, (long long)p.batch, (long long)p.kvLen,
      (long long)plan.splits, plan.stage1, err, ok ? "(ok)" : "(FAILED)");
  return ok;
}

} // namespace decode_check

#endif // MLA_EXAMPLES_DECODE_CHECK_H
