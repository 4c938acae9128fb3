#pragma once
// An experiment's reconcile as a pure function (a LoadTest with
// spec.variants, docs/experiments.md), as the LoadTest's is
// (reconcile_plan.hpp): the controller observes the experiment and the
// LoadTests it created for its rounds into an ExperimentObservation;
// plan_experiment decides the status, the next round to create and when to
// look again; the controller does the I/O.
//
// The rules:
// - one LoadTest per variant and round (job_builder.hpp's
//   build_round_loadtest), one at a time, in a balanced order: odd rounds
//   run the variants as listed, even rounds in reverse (A B, B A, A B, ...),
//   so drift over the experiment does not favour the variant that runs
//   first; each round's LoadTest has its own warm-up (spec.load.warmup);
// - the next one is created when every earlier one is final; a LoadTest of
//   the experiment (its kubeload.dev/experiment, variant and round labels,
//   the experiment its controlling owner) is that step's, so a repeated pass
//   creates nothing more;
// - a round that Failed (it could not be measured as specified) fails the
//   experiment (RoundFailed), naming it: the rounds left would not be
//   paired any more;
// - once every round is final, each variant's rounds are merged exactly,
//   every variant is compared with the first over the rounds (paired
//   Student's t, kubeload/comparison.hpp), the thresholds are judged on
//   each variant's merge and the comparisons decide: the verdict is Pass
//   only when every threshold holds and every comparison is Pass;
//   Inconclusive is a Fail with its own reason (never a pass).
// A final status of the current generation is kept as it is.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/spec.hpp"
#include "operator/conditions.hpp"
#include "operator/reconcile_plan.hpp"
#include "operator/timestamp.hpp"

namespace kubeload::controller {

// A LoadTest labelled with the experiment (or the capacity search,
// search_plan.hpp), as the plan reads it.
struct RoundRun {
  std::string name;
  std::string controller_uid;  // its controlling owner's uid
  std::string variant;         // its kubeload.dev/variant
  uint64_t round = 0;  // its kubeload.dev/round, or a search's kubeload.dev/step (0: unreadable)
  // A search step's spec.load.rate or spec.load.connections.
  std::optional<double> value;
  bool deleting = false;
  api::LoadTestStatus status;
};

struct ExperimentObservation {
  api::LoadTest experiment;  // as the API returns it
  LoadTestSpec spec;         // parsed, valid, with spec.variants
  std::vector<RoundRun> runs;
  Timestamp now;
  // The API server's refusal of a round's LoadTest (a quota, an admission
  // webhook), remembered by the controller: the experiment fails with it.
  std::optional<std::string> create_refused;
};

struct ExperimentPlan {
  api::LoadTestStatus status;
  std::optional<nlohmann::json> create;  // the next round's LoadTest
  std::vector<RecordEvent> events;
  std::optional<std::chrono::milliseconds> requeue_after;
};

// What every plan whose runs are child LoadTests (an experiment's rounds, a
// search's steps) does once its status is decided: the conditions from
// `facts` (the decision among them), the Event of the pass that made the
// status final, and when to look again while it is not.
void finish_parent_plan(ExperimentPlan& plan, const ConditionFacts& facts,
                        const api::LoadTestStatus& current, int64_t generation, Timestamp now,
                        std::chrono::milliseconds look_again);

// A valid LoadTest with spec.variants: an experiment, reconciled by
// plan_experiment instead of plan (no Job of its own).
inline bool is_experiment(const ParsedLoadTest& parsed) {
  return parsed.ok() && !parsed.spec.variants.empty();
}

// The order the experiment runs in: (round, variant index), round 1-based.
std::vector<std::pair<uint64_t, std::size_t>> round_order(std::size_t variants, uint64_t rounds);

// The figures of one round's status a comparison may name
// (kubeload/comparison.hpp's metrics and units); a metric not measured
// (no latency recorded, no target CPU) is absent.
std::map<std::string, double> round_metrics(const api::LoadTestStatus& status);

ExperimentPlan plan_experiment(const ExperimentObservation& observed);

}  // namespace kubeload::controller
