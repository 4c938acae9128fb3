#pragma once
// A capacity search's reconcile as a pure function (a LoadTest with
// spec.search, docs/experiments.md "Capacity search"), as an experiment's is
// (experiment_plan.hpp): the controller observes the search and the
// LoadTests it created for its steps; plan_search decides the status, the
// next step's LoadTest and when to look again; the controller does the I/O
// (the same as for an experiment).
//
// The rules:
// - one LoadTest per step (job_builder.hpp's build_step_loadtest), one at a
//   time, at one open-model rate or one number of connections, judged by the
//   search's spec.thresholds as any LoadTest is; a step passes when its
//   verdict is Pass;
// - the first step is spec.search's start; while every step passed, the next
//   is the last times the factor, never above the limit (spec.search's max,
//   or the operator's ceiling --max-rate / --max-connections, the lower);
// - once a step failed, the next is the middle of the highest passing value
//   and the lowest failing one, until the two are within the precision (a
//   percent of the highest passing value, or an absolute width); connections
//   are whole numbers, so the bisection also ends when they are adjacent;
// - the search ends: CapacityFound (verdict Pass) with both bounds;
//   CeilingReached (verdict Pass) when a step at the limit passed: the
//   capacity is above it, not found; NoPassingStep (verdict Fail) when the
//   first step failed; a step that Failed (it could not be measured as
//   specified) fails the search (StepFailed), as a refused step's LoadTest
//   does (ObjectRejected), and a start above the operator's ceiling
//   (PolicyViolation);
// - a step is found by its kubeload.dev/step label (the search its
//   controlling owner), so a repeated pass creates nothing more; its value is
//   the one its spec asks, so a changed ceiling does not re-plan steps run.
// A final status of the current generation is kept as it is.

#include <optional>
#include <vector>

#include "operator/experiment_plan.hpp"

namespace kubeload::controller {

struct SearchObservation {
  api::LoadTest search;        // as the API returns it
  LoadTestSpec spec;           // parsed, valid, with spec.search
  std::vector<RoundRun> runs;  // round: the step; value: its rate or connections
  Timestamp now;
  std::optional<std::string> create_refused;
  // The operator's ceiling on the searched value (--max-rate or
  // --max-connections), when set.
  std::optional<double> ceiling;
};

// A valid LoadTest with spec.search: reconciled by plan_search instead of
// plan (no Job of its own).
inline bool is_search(const ParsedLoadTest& parsed) {
  return parsed.ok() && parsed.spec.search.has_value();
}

// What the next step of a search is, from its finished steps (value, passed)
// in the order they ran: a value, or the end and why.
struct SearchNext {
  std::optional<double> value;  // unset: the search is over
  Reason reason = Reason::Running;
  std::string message;
};
SearchNext next_step(const SearchSpec& search, std::optional<double> ceiling,
                     const std::vector<std::pair<double, bool>>& done);

ExperimentPlan plan_search(const SearchObservation& observed);

}  // namespace kubeload::controller
