//===- Reference.cpp - float64 reference and number codecs ----------------===//
#include "mla/Reference.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mla_ref;

namespace {
struct Fp8Params {
  int bias;
  bool fnuz;
};
Fp8Params paramsOf(Fp8Format f) {
  return f == Fp8Format::E4M3FN ? Fp8Params{7, false} : Fp8Params{8, true};
}
} // namespace

double mla_ref::decodeFp8(uint8_t code, Fp8Format format) {
  Fp8Params p = paramsOf(format);
  int sign = code >> 7, exp = (code >> 3) & 0xF, man = code & 0x7;
  if (p.fnuz && code == 0x80)
    return std::numeric_limits<double>::quiet_NaN();
  if (!p.fnuz && exp == 0xF && man == 0x7)
    return std::numeric_limits<double>::quiet_NaN();
  double mag = exp == 0 ? std::ldexp(man / 8.0, 1 - p.bias)
                        : std::ldexp(1.0 + man / 8.0, exp - p.bias);
  return sign ? -mag : mag;
}

double mla_ref::fp8Max(Fp8Format format) {
  return format == Fp8Format::E4M3FN ? 448.0 : 240.0;
}

uint8_t mla_ref::encodeFp8(double value, Fp8Format format) {
  Fp8Params p = paramsOf(format);
  if (std::isnan(value))
    return p.fnuz ? 0x80 : 0x7F;
  bool neg = std::signbit(value);
  double a = std::min(std::fabs(value), fp8Max(format));
  // Non-negative finite codes 0x00..0x7E (FN) / 0x00..0x7F (FNUZ) decode to
  // increasing values: find the neighbours, keep the nearest (ties: even).
  int last = p.fnuz ? 0x7F : 0x7E;
  int lo = 0, hi = last;
  while (lo < hi) { // first code whose value >= a
    int mid = (lo + hi) / 2;
    if (decodeFp8(static_cast<uint8_t>(mid), format) < a)
      lo = mid + 1;
    else
      hi = mid;
  }
  int best = lo;
  if (lo > 0) {
    double up = decodeFp8(static_cast<uint8_t>(lo), format) - a;
    double down = a - decodeFp8(static_cast<uint8_t>(lo - 1), format);
    if (down < up || (down == up && ((lo - 1) & 1) == 0))
      best = lo - 1;
  }
  if (best == 0) // zero: FNUZ has no negative zero
    return (neg && !p.fnuz) ? 0x80 : 0x00;
  return static_cast<uint8_t>(neg ? (best | 0x80) : best);
}

double mla_ref::decodeFp4E2M1(uint8_t code) {
  static const double magnitude[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  double v = magnitude[code & 7];
  return (code & 8) ? -v : v;
}

uint8_t mla_ref::encodeFp4E2M1(double value) {
  if (std::isnan(value))
    return 0;
  double a = std::min(std::fabs(value), 6.0);
  // The magnitudes of codes 0..7 increase: nearest, ties to the even code.
  int best = 0;
  for (int c = 1; c < 8; ++c) {
    double d = std::fabs(decodeFp4E2M1(uint8_t(c)) - a);
    double bestD = std::fabs(decodeFp4E2M1(uint8_t(best)) - a);
    if (d < bestD || (d == bestD && (c & 1) == 0))
      best = c;
  }
  return uint8_t(std::signbit(value) ? (best | 8) : best);
}

double mla_ref::decodeE8M0(uint8_t code) {
  if (code == 0xFF)
    return std::numeric_limits<double>::quiet_NaN();
  return std::ldexp(1.0, int(code) - 127);
}

std::vector<double> mla_ref::dequantizeMxfp4(const uint8_t *data,
                                             const uint8_t *scales,
                                             int64_t rows, int64_t cols,
                                             int64_t scaleStride) {
  std::vector<double> out(size_t(rows) * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      uint8_t byte = data[r * (cols / 2) + c / 2];
      uint8_t nibble = (c % 2 == 0) ? (byte & 0xF) : (byte >> 4);
      out[r * cols + c] =
          decodeFp4E2M1(nibble) * decodeE8M0(scales[r * scaleStride + c / 32]);
    }
  return out;
}

void mla_ref::quantizeMxfp4(const std::vector<double> &values, int64_t rows,
                            int64_t cols, int64_t scaleStride,
                            std::vector<uint8_t> &data,
                            std::vector<uint8_t> &scales) {
  data.assign(size_t(rows) * (cols / 2), 0);
  scales.assign(size_t(rows) * scaleStride, 0x7F);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < cols / 32; ++b) {
      double amax = 0;
      for (int64_t c = b * 32; c < b * 32 + 32; ++c)
        amax = std::max(amax, std::fabs(values[r * cols + c]));
      int e = -127;
      if (amax > 0)
        e = std::clamp(int(std::floor(std::log2(amax))) - 2, -127, 127);
      scales[r * scaleStride + b] = uint8_t(e + 127);
      double scale = std::ldexp(1.0, e);
      for (int64_t c = b * 32; c < b * 32 + 32; ++c) {
        uint8_t nibble = encodeFp4E2M1(values[r * cols + c] / scale);
        uint8_t &byte = data[r * (cols / 2) + c / 2];
        byte |= (c % 2 == 0) ? nibble : uint8_t(nibble << 4);
      }
    }
}

float mla_ref::bf16ToFloat(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t mla_ref::floatToBf16(float value) {
  uint32_t u;
  std::memcpy(&u, &value, 4);
  if (std::isnan(value))
    return static_cast<uint16_t>((u >> 16) | 0x40);
  uint32_t lsb = (u >> 16) & 1;
  u += 0x7FFF + lsb;
  return static_cast<uint16_t>(u >> 16);
}

float mla_ref::f16ToFloat(uint16_t h) {
  float sign = (h & 0x8000) ? -1.0f : 1.0f;
  int exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  if (exp == 0x1F)
    return mant ? std::numeric_limits<float>::quiet_NaN()
                : sign * std::numeric_limits<float>::infinity();
  if (exp == 0)
    return sign * std::ldexp(static_cast<float>(mant), -24);
  return sign * std::ldexp(static_cast<float>(1024 + mant), exp - 25);
}

uint16_t mla_ref::floatToF16(float value) {
  uint32_t u;
  std::memcpy(&u, &value, 4);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  uint32_t mag = u & 0x7FFFFFFF;
  if (mag > 0x7F800000)
    return sign | 0x7E00;
  if (mag >= 0x477FF000) // 65520: rounds to infinity
    return sign | 0x7C00;
  if (mag >= 0x38800000) { // 2^-14: normal
    uint32_t r = mag + 0xFFF + ((mag >> 13) & 1);
    return sign | static_cast<uint16_t>((r >> 13) - ((127 - 15) << 10));
  }
  // Subnormal: the value in units of 2^-24, rounded to nearest even (1024,
  // the carry into the smallest normal, encodes it).
  float a;
  std::memcpy(&a, &mag, 4);
  return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(a, 24)));
}

std::vector<double> mla_ref::referenceDecode(const DecodeProblem &p,
                                             const std::vector<double> &q,
                                             const std::vector<double> &kv) {
  assert(static_cast<int64_t>(p.qoIndptr.size()) == p.batch + 1);
  assert(static_cast<int64_t>(p.kvIndptr.size()) == p.batch + 1);
  int64_t totalQ = p.qoIndptr[p.batch];
  std::vector<double> out(totalQ * p.heads * p.vDim, 0.0);
  std::vector<double> scores;
  for (int64_t b = 0; b < p.batch; ++b) {
    int64_t sq = p.qoIndptr[b + 1] - p.qoIndptr[b];
    for (int64_t i = 0; i < sq; ++i) {
      int64_t t = p.qoIndptr[b] + i;
      int64_t kv0 = p.kvIndptr[b], all = p.kvIndptr[b + 1] - kv0;
      // Causal: token i sees keys [0, L - s_q + i].
      int64_t len = std::min(all, all - sq + i + 1);
      if (len <= 0)
        continue;
      scores.assign(len, 0.0);
      for (int64_t h = 0; h < p.heads; ++h) {
        const double *qrow = &q[(t * p.heads + h) * p.qkDim];
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < len; ++j) {
          const double *krow = &kv[(kv0 + j) * p.qkDim];
          double s = 0;
          for (int64_t d = 0; d < p.qkDim; ++d)
            s += qrow[d] * krow[d];
          scores[j] = s * p.softmaxScale;
          mx = std::max(mx, scores[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < len; ++j) {
          scores[j] = std::exp(scores[j] - mx);
          sum += scores[j];
        }
        double *orow = &out[(t * p.heads + h) * p.vDim];
        for (int64_t j = 0; j < len; ++j) {
          const double *vrow = &kv[(kv0 + j) * p.qkDim];
          double w = scores[j] / sum;
          for (int64_t d = 0; d < p.vDim; ++d)
            orow[d] += w * vrow[d];
        }
      }
    }
  }
  return out;
}

double mla_ref::relativeFrobeniusError(const std::vector<double> &a,
                                       const std::vector<double> &b) {
  assert(a.size() == b.size());
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  if (den == 0)
    return num == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(num / den);
}
