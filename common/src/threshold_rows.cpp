// threshold_row_problem (kubeload/threshold.hpp): whether a threshold names a
// row the spec has. Apart from the grammar (threshold.cpp), since it reads the
// spec, which itself holds thresholds.

#include <string>

#include "kubeload/spec.hpp"
#include "kubeload/threshold.hpp"

namespace kubeload {

std::string threshold_row_problem(const Threshold& threshold, const LoadTestSpec& spec) {
  const std::string in = " in \"" + threshold.expression + "\"";
  const bool scenarios = !spec.scenarios.empty();
  switch (threshold.scope) {
    case ThresholdScope::run:
      if (counts_iterations(threshold.metric) && !scenarios) {
        return std::string(to_string(threshold.metric)) + " counts iterations of spec.scenarios" +
               ", and there are none" + in;
      }
      return "";
    case ThresholdScope::iteration:
      if (!scenarios) {
        return std::string(kIterationRow) + " names the iterations of spec.scenarios" +
               ", and there are none" + in;
      }
      return "";
    case ThresholdScope::scenario:
      for (const ScenarioSpec& scenario : spec.scenarios) {
        if (scenario.name == threshold.request) return "";
      }
      return "unknown scenario \"" + threshold.request + "\"" + in;
    case ThresholdScope::request:
      for (const RequestSpec& request : spec.requests) {
        if (request.name == threshold.request) return "";
      }
      for (const ScenarioSpec& scenario : spec.scenarios) {
        for (const StepSpec& step : scenario.steps) {
          if (step.name == threshold.request) return "";
        }
      }
      for (const ScenarioSpec& scenario : spec.scenarios) {
        if (scenario.name != threshold.request) continue;
        return "\"" + threshold.request + "\" is a scenario: its rows are " + threshold.request +
               ".iterations and " + threshold.request + ".failedIterations, and " +
               std::string(kIterationRow) + "." + std::string(to_string(threshold.metric)) +
               " reads every scenario's iteration durations" + in;
      }
      return (scenarios ? "unknown step \"" : "unknown request \"") + threshold.request + "\"" + in;
  }
  return "";
}

}  // namespace kubeload
