// What a generator used of its CPU, and how every warning of it says so
// (kubeload/generator_cpu.hpp, issue 30).

#include "kubeload/generator_cpu.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace kubeload {
namespace {

TEST(GeneratorCpu, UtilizationIsTheCpuTimeOverTheWindowsCpuTime) {
  EXPECT_DOUBLE_EQ(GeneratorCpu::of(2.9, 30, 0.1, 0.1).utilization, 2.9 / 3.0);
  EXPECT_DOUBLE_EQ(GeneratorCpu::of(30, 20, std::nullopt, 2).utilization, 0.75);
  // Nothing to divide by: nothing used.
  EXPECT_EQ(GeneratorCpu::of(1, 0, std::nullopt, 2).utilization, 0);
  EXPECT_EQ(GeneratorCpu::of(1, 10, std::nullopt, 0).utilization, 0);
}

TEST(GeneratorCpu, SaturatedIsAboveNinetyPercent) {
  EXPECT_FALSE(GeneratorCpu::of(0.9, 1, std::nullopt, 1).saturated());
  EXPECT_TRUE(GeneratorCpu::of(0.901, 1, std::nullopt, 1).saturated());
  EXPECT_TRUE(GeneratorCpu::of(2.95, 30, 0.1, 0.1).saturated());
}

TEST(GeneratorCpu, CpuAmountsAreKubernetesQuantities) {
  const std::vector<std::pair<double, std::string>> cases = {
      {0.1, "100m"},  {0.25, "250m"}, {1, "1"},      {2, "2"},
      {1.5, "1500m"}, {0.0005, "1m"}, {0.0004, "0"}, {-1, "-"},
  };
  for (const auto& [cores, text] : cases) EXPECT_EQ(cpu_quantity(cores), text) << cores;
}

TEST(GeneratorCpu, PercentsGoDownToTheTenthNeverUp) {
  const std::vector<std::pair<double, std::string>> cases = {
      {0.97, "97%"},  {0.9041, "90.4%"}, {0.8999, "89.9%"},
      {1.02, "102%"}, {0, "0%"},         {std::numeric_limits<double>::quiet_NaN(), "-"},
  };
  for (const auto& [fraction, text] : cases) EXPECT_EQ(percent(fraction), text) << fraction;
}

TEST(GeneratorCpu, AUseIsOfItsLimitElseOfTheCpusItMayUse) {
  EXPECT_EQ(describe_use(GeneratorCpu::of(2.91, 30, 0.1, 0.1)), "97% of its 100m CPU limit");
  EXPECT_EQ(describe_use(GeneratorCpu::of(19, 10, std::nullopt, 2)),
            "95% of the 2 CPUs it may use");
  EXPECT_EQ(describe_use(GeneratorCpu::of(9.5, 10, std::nullopt, 1)),
            "95% of the 1 CPU it may use");
  // A limit above the CPUs it may run on is not what bounded it.
  const GeneratorCpu above = GeneratorCpu::of(19, 10, 4, 2);
  EXPECT_FALSE(above.limited());
  EXPECT_EQ(describe_use(above), "95% of the 2 CPUs it may use");
}

}  // namespace
}  // namespace kubeload
