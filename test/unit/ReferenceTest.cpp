//===- ReferenceTest.cpp - the float64 reference attention ----------------===//
#include "mla/Reference.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mla_ref;

namespace {

DecodeProblem smallProblem(std::vector<int32_t> lengths) {
  DecodeProblem p;
  p.batch = lengths.size();
  p.heads = 2;
  p.qkDim = 3; // 2 latent + 1 rope
  p.vDim = 2;
  p.softmaxScale = 0.5;
  p.qoIndptr = {0};
  p.kvIndptr = {0};
  for (int32_t l : lengths) {
    p.qoIndptr.push_back(p.qoIndptr.back() + 1);
    p.kvIndptr.push_back(p.kvIndptr.back() + l);
  }
  return p;
}

TEST(Reference, OneTokenReturnsItsValueRow) {
  DecodeProblem p = smallProblem({1});
  std::vector<double> q = {1, 2, 3, -1, 0, 5};
  std::vector<double> kv = {7, -3, 100}; // value = first 2 dims
  std::vector<double> out = referenceDecode(p, q, kv);
  EXPECT_EQ(out, (std::vector<double>{7, -3, 7, -3}));
}

TEST(Reference, TwoTokensHandComputed) {
  DecodeProblem p = smallProblem({2});
  p.heads = 1;
  std::vector<double> q = {1, 0, 1};
  std::vector<double> kv = {2, 0, 0,  // q.k = 2, score 1
                            0, 4, 4}; // q.k = 4, score 2
  std::vector<double> out = referenceDecode(p, q, kv);
  double w0 = std::exp(1.0), w1 = std::exp(2.0);
  EXPECT_NEAR(out[0], (w0 * 2 + w1 * 0) / (w0 + w1), 1e-15);
  EXPECT_NEAR(out[1], (w0 * 0 + w1 * 4) / (w0 + w1), 1e-15);
}

TEST(Reference, HugeScoresStayFinite) {
  DecodeProblem p = smallProblem({3});
  p.heads = 1;
  std::vector<double> q = {1000, 1000, 1000};
  // Scores 2500, 4000, 5500: exp would overflow without the max shift, and
  // the last row takes all the weight.
  std::vector<double> kv = {3, 1, 1, 6, 1, 1, 9, 1, 1};
  std::vector<double> out = referenceDecode(p, q, kv);
  EXPECT_NEAR(out[0], 9.0, 1e-12);
  EXPECT_NEAR(out[1], 1.0, 1e-12);
}

TEST(Reference, EmptySequenceGivesZeros) {
  DecodeProblem p = smallProblem({0, 1});
  std::vector<double> q(2 * 2 * 3, 1.0);
  std::vector<double> kv = {4, 5, 6};
  std::vector<double> out = referenceDecode(p, q, kv);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(out[i], 0.0);
  EXPECT_EQ(out[4], 4.0);
}

TEST(Reference, RelativeFrobeniusError) {
  EXPECT_EQ(relativeFrobeniusError({1, 2}, {1, 2}), 0.0);
  EXPECT_NEAR(relativeFrobeniusError({3, 0}, {0, 4}), 5.0 / 4.0, 1e-15);
  EXPECT_EQ(relativeFrobeniusError({0, 0}, {0, 0}), 0.0);
  EXPECT_TRUE(std::isnan(relativeFrobeniusError({NAN, 0}, {1, 1})));
}

} // namespace
