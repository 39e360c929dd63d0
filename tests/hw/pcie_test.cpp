#include "hw/pcie.hpp"

#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace kvsim::hw {
namespace {

// Theoretical per direction = GT/s x lanes x 128/130 / 8, by hand:
//   Gen3 x16:  8 x 16 = 128 Gb/s x 128/130 = 126.031 Gb/s / 8 = 15.754 GB/s
//   Gen4 x16: 16 x 16 = 256 Gb/s x 128/130 = 252.062 Gb/s / 8 = 31.508 GB/s
//   Gen5 x16: 32 x 16 = 512 Gb/s x 128/130 = 504.123 Gb/s / 8 = 63.015 GB/s
//   Gen4 x4:  16 x 4  =  64 Gb/s x 128/130 =  63.015 Gb/s / 8 =  7.877 GB/s
TEST(Pcie, TheoreticalRatesByHand) {
  EXPECT_NEAR(pcie_theoretical_rate(PcieGen::kGen3, 16).value, 15.754e9, 1e6);
  EXPECT_NEAR(pcie_theoretical_rate(PcieGen::kGen4, 16).value, 31.508e9, 1e6);
  EXPECT_NEAR(pcie_theoretical_rate(PcieGen::kGen5, 16).value, 63.015e9, 1e6);
  EXPECT_NEAR(pcie_theoretical_rate(PcieGen::kGen4, 4).value, 7.877e9, 1e6);
  // Exactly: 16e9 x 16 x 128 / 130 / 8 = 31,507,692,307.69... bytes/s.
  EXPECT_DOUBLE_EQ(pcie_theoretical_rate(PcieGen::kGen4, 16).value, 16e9 * 16 * 128 / 130 / 8);
}

// Lanes scale linearly; each generation doubles the previous one.
TEST(Pcie, LanesAndGenerationsScale) {
  for (PcieGen g : {PcieGen::kGen3, PcieGen::kGen4, PcieGen::kGen5}) {
    const double x16 = pcie_theoretical_rate(g, 16).value;
    EXPECT_DOUBLE_EQ(pcie_theoretical_rate(g, 8).value, x16 / 2);
    EXPECT_DOUBLE_EQ(pcie_theoretical_rate(g, 1).value, x16 / 16);
  }
  EXPECT_DOUBLE_EQ(pcie_theoretical_rate(PcieGen::kGen5, 16).value,
                   2 * pcie_theoretical_rate(PcieGen::kGen4, 16).value);
}

// The default practical rate (80 %) of Gen4 x16 is 25.2 GB/s, inside the 4090's measured
// 23.9-26.4 GB/s H2D range (docs/sources.md A2); every measured rate of A5 lies within 75-90 % of
// its theoretical rate: 12.2 of 15.75 (Gen3), 25.1 of 31.5 (Gen4), 56.3 of 63 (Gen5).
TEST(Pcie, PracticalRateMatchesMeasurements) {
  const double gen4 = practical_rate(PcieGen::kGen4, 16).value;
  EXPECT_NEAR(gen4, 25.206e9, 1e6);
  EXPECT_GE(gen4, 23.9e9);
  EXPECT_LE(gen4, 26.4e9);
  EXPECT_DOUBLE_EQ(practical_rate(PcieGen::kGen5, 16, 0.9).value,
                   0.9 * pcie_theoretical_rate(PcieGen::kGen5, 16).value);
  struct M {
    PcieGen gen;
    double measured;
  };
  for (const M m :
       {M{PcieGen::kGen3, 12.2e9}, M{PcieGen::kGen4, 25.1e9}, M{PcieGen::kGen5, 56.3e9}}) {
    EXPECT_GE(m.measured, practical_rate(m.gen, 16, 0.75).value);
    EXPECT_LE(m.measured, practical_rate(m.gen, 16, 0.90).value);
  }
}

TEST(Pcie, RejectsBadLanesAndEfficiency) {
  EXPECT_THROW(pcie_theoretical_rate(PcieGen::kGen4, 3), InputError);
  EXPECT_THROW(pcie_theoretical_rate(PcieGen::kGen4, 0), InputError);
  EXPECT_THROW(pcie_theoretical_rate(PcieGen::kGen4, 64), InputError);
  EXPECT_DOUBLE_EQ(pcie_theoretical_rate(PcieGen::kGen4, 32).value,
                   2 * pcie_theoretical_rate(PcieGen::kGen4, 16).value);
  EXPECT_THROW(practical_rate(PcieGen::kGen4, 16, 0.0), InputError);
  EXPECT_THROW(practical_rate(PcieGen::kGen4, 16, 1.01), InputError);
}

}  // namespace
}  // namespace kvsim::hw
