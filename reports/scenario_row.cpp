#include "reports/scenario_row.hpp"

#include <string>
#include <utility>

namespace kubeload::loadgen {
namespace {

ScenarioRow row_of(std::string name, uint64_t iterations, uint64_t failed, double run_seconds) {
  ScenarioRow row;
  row.name = std::move(name);
  row.iterations = iterations;
  row.failed = failed;
  // Zero, never nan or inf, when nothing ended or no time passed.
  row.failed_percent =
      iterations == 0 ? 0.0 : 100.0 * static_cast<double>(failed) / static_cast<double>(iterations);
  row.iterations_per_second = run_seconds > 0 ? static_cast<double>(iterations) / run_seconds : 0.0;
  return row;
}

}  // namespace

std::vector<ScenarioRow> scenario_rows_of(const RunResult& run) {
  std::vector<ScenarioRow> rows;
  for (const ScenarioResult& scenario : run.scenarios) {
    ScenarioRow row = row_of(scenario.name, scenario.iterations, scenario.iterations_failed,
                             run.result.duration_seconds);
    row.duration_measured = scenario.duration.total_count() > 0;
    row.duration_ms = LatencySummary::of(scenario.duration);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<ScenarioRow> scenario_rows_of(const std::vector<api::ScenarioResultRow>& rows,
                                          double run_seconds) {
  std::vector<ScenarioRow> out;
  for (const api::ScenarioResultRow& scenario : rows) {
    ScenarioRow row =
        row_of(scenario.name, scenario.iterations, scenario.failed_iterations, run_seconds);
    row.duration_measured = scenario.iterations > 0 && !scenario.duration_ms.empty();
    for (const auto& [name, figure] : kLatencyFigures) {
      const auto it = scenario.duration_ms.find(std::string(name));
      row.duration_ms.*figure = it == scenario.duration_ms.end() ? 0.0 : it->second;
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace kubeload::loadgen
