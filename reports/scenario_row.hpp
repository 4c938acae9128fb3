#pragma once
// A scenario's row as every report shows it (docs/scenarios.md#results):
// iterations ended and failed, and how long they took. Built from a run's
// ScenarioResult or from a LoadTest status's numbers-only row, so that a
// local run and a LoadTest report the same figures.

#include <cstdint>
#include <string>
#include <vector>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/result.hpp"

namespace kubeload::loadgen {

struct ScenarioRow {
  std::string name;
  uint64_t iterations = 0;  // ended
  uint64_t failed = 0;      // of those, with a failed step or ended early
  double failed_percent = 0;
  double iterations_per_second = 0;  // over the run's duration; 0 when it is unknown
  // False when no iteration ended: durations are then unknown, not zero.
  bool duration_measured = false;
  LatencySummary duration_ms;
};

std::vector<ScenarioRow> scenario_rows_of(const RunResult& run);
// A status's rows (api::scenario_rows); `run_seconds`: the run's
// durationSeconds, for the rate.
std::vector<ScenarioRow> scenario_rows_of(const std::vector<api::ScenarioResultRow>& rows,
                                          double run_seconds);

}  // namespace kubeload::loadgen
