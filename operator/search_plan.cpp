#include "operator/search_plan.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "kubeload/limits.hpp"
#include "kubeload/text.hpp"
#include "operator/conditions.hpp"
#include "operator/job_builder.hpp"
#include "operator/target_usage.hpp"

namespace kubeload::controller {
namespace {

using api::name;

// A running search is looked at again this often even without a step's
// event (a missed watch event must not stall it).
constexpr std::chrono::seconds kStepLook{10};

std::string with_unit(const SearchSpec& search, double value) {
  return search.over == SearchOver::rate ? shortest(value) + "/s"
                                         : shortest(value) + " connections";
}

const char* over_name(SearchOver over) {
  return over == SearchOver::rate ? "rate" : "connections";
}

// The value no step goes above, and which limit it is.
struct Limit {
  std::optional<double> value;
  std::string by;
};
Limit limit_of(const SearchSpec& search, std::optional<double> ceiling) {
  Limit limit;
  if (search.max)
    limit = {search.max, "spec.search." + std::string(over_name(search.over)) + ".max"};
  if (ceiling && (!limit.value || *ceiling < *limit.value)) {
    limit = {ceiling, search.over == SearchOver::rate ? "--max-rate" : "--max-connections"};
  }
  return limit;
}

// The thresholds a step failed, as "p99 < 100ms (observed 240ms)".
std::vector<std::string> failed_thresholds(const api::LoadTestStatus& status) {
  std::vector<std::string> out;
  for (const api::ThresholdRow& row : status.thresholds) {
    if (!row.passed) out.push_back(row.expression + " (observed " + row.observed + ")");
  }
  return out;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : "; ") + part;
  return text;
}

}  // namespace

SearchNext next_step(const SearchSpec& search, std::optional<double> ceiling,
                     const std::vector<std::pair<double, bool>>& done) {
  const Limit limit = limit_of(search, ceiling);
  const bool whole = search.over == SearchOver::connections;
  std::optional<double> passing, failing;
  for (const auto& [value, passed] : done) {
    if (passed && (!passing || value > *passing)) passing = value;
    if (!passed && (!failing || value < *failing)) failing = value;
  }
  SearchNext next;
  if (done.empty()) {
    if (limit.value && search.start > *limit.value) {
      next.reason = Reason::PolicyViolation;
      next.message = "spec.search." + std::string(over_name(search.over)) +
                     ".start: " + with_unit(search, search.start) +
                     " is above the operator's ceiling of " + with_unit(search, *limit.value) +
                     " (" + limit.by + ")";
      return next;
    }
    next.value = search.start;
    return next;
  }
  const std::string stopped_after =
      done.size() >= kMaxSearchSteps
          ? " (stopped after " + std::to_string(kMaxSearchSteps) + " steps)"
          : "";
  if (!passing) {
    next.reason = Reason::NoPassingStep;
    next.message = "the first step, " + with_unit(search, *failing) + ", failed";
    return next;
  }
  if (!failing) {
    if (limit.value && *passing >= *limit.value) {
      next.reason = Reason::CeilingReached;
      next.message = "every step passed up to the limit of " + with_unit(search, *limit.value) +
                     " (" + limit.by + "): the capacity is above it, not found";
      return next;
    }
    if (done.size() >= kMaxSearchSteps) {
      next.reason = Reason::CeilingReached;
      next.message = "every step passed up to " + with_unit(search, *passing) +
                     ": the capacity is above it, not found" + stopped_after;
      return next;
    }
    double grown = *passing * search.factor;
    if (whole) grown = std::max(std::floor(grown), *passing + 1);
    if (limit.value) grown = std::min(grown, *limit.value);
    next.value = grown;
    return next;
  }
  const double width = *failing - *passing;
  const double precision =
      search.precision_percent ? *passing * search.precision / 100 : search.precision;
  double middle = *passing + width / 2;
  if (whole) middle = std::floor(middle);
  if (width <= precision || middle <= *passing || done.size() >= kMaxSearchSteps) {
    next.reason = Reason::CapacityFound;
    next.message = "highest passing " + std::string(over_name(search.over)) + " " +
                   with_unit(search, *passing) + ", first failing " + with_unit(search, *failing) +
                   stopped_after;
    return next;
  }
  next.value = middle;
  return next;
}

ExperimentPlan plan_search(const SearchObservation& observed) {
  const api::LoadTest& search = observed.search;
  const api::LoadTestStatus& current = search.status;
  const int64_t generation = search.metadata.generation;
  ExperimentPlan plan;
  if (current.final() && current.observed_generation == generation) {
    plan.status = current;
    return plan;
  }
  const SearchSpec& spec = *observed.spec.search;
  std::map<uint64_t, const RoundRun*> steps;
  for (const RoundRun& run : observed.runs) {
    if (run.controller_uid == search.metadata.uid && run.round > 0) steps.emplace(run.round, &run);
  }

  api::LoadTestStatus& status = plan.status;
  status.observed_generation = generation;
  status.start_time = current.start_time;
  status.result_record = current.result_record;
  api::SearchStatus progress;
  progress.over = over_name(spec.over);
  const Limit limit = limit_of(spec, observed.ceiling);
  progress.limit = limit.value;
  progress.limit_by = limit.by;

  PhaseDecision decision{Phase::Running, name(Reason::Running), ""};
  std::vector<std::pair<double, bool>> done;
  std::map<double, std::vector<std::string>> why;  // a failing value's failed thresholds
  std::map<double, const RoundRun*> by_value;
  Verdict verdict = Verdict::None;
  for (uint64_t step = 1;; ++step) {
    const auto found = steps.find(step);
    if (found == steps.end()) {
      const SearchNext next = next_step(spec, observed.ceiling, done);
      // The steps' target usage comes from Prometheus some seconds after
      // each ends (plan_target_usage): the sweep table waits for its CPU.
      const auto pending = std::count_if(steps.begin(), steps.end(), [](const auto& entry) {
        return target_usage_pending(entry.second->status);
      });
      if (!next.value && pending > 0) {
        decision.message = "every step ran; waiting for the target's resource use of " +
                           std::to_string(pending) + (pending == 1 ? " step" : " steps") +
                           " (Prometheus)";
      } else if (!next.value) {
        decision.phase = next.reason == Reason::PolicyViolation ? Phase::Failed : Phase::Succeeded;
        decision.reason = name(next.reason);
        decision.message = next.message;
        if (decision.phase == Phase::Succeeded) {
          verdict = next.reason == Reason::NoPassingStep ? Verdict::Fail : Verdict::Pass;
        }
      } else if (observed.create_refused) {
        decision = {Phase::Failed, name(Reason::ObjectRejected),
                    "the LoadTest of step " + std::to_string(step) + " (" +
                        with_unit(spec, *next.value) +
                        ") was refused: " + *observed.create_refused};
      } else {
        plan.create = build_step_loadtest(search, step, *next.value);
        decision.message =
            "step " + std::to_string(step) + ": starting at " + with_unit(spec, *next.value);
        if (!status.start_time) status.start_time = api::whole_seconds(observed.now);
      }
      break;
    }
    const RoundRun& run = *found->second;
    api::SearchStep row;
    row.step = step;
    row.value = run.value.value_or(0);
    row.load_test = run.name;
    row.phase = run.status.phase;
    row.verdict = run.status.verdict;
    row.metrics = round_metrics(run.status);
    if (run.status.target) row.cpu_cores = run.status.target->usage.cpu_cores_mean;
    row.failed = failed_thresholds(run.status);
    progress.steps.push_back(row);
    if (run.status.start_time &&
        (!status.start_time || *run.status.start_time < *status.start_time)) {
      status.start_time = run.status.start_time;
    }
    if (!run.status.final()) {
      decision.message = "step " + std::to_string(step) + " at " + with_unit(spec, row.value) +
                         " (LoadTest " + run.name + ") " +
                         (run.status.phase ? std::string(to_string(*run.status.phase)) : "Pending");
      break;
    }
    if (run.status.phase == Phase::Failed || !run.value) {
      decision = {Phase::Failed, name(Reason::StepFailed),
                  "step " + std::to_string(step) + " (LoadTest " + run.name + ") failed (" +
                      run.status.reason + "): " + run.status.message};
      break;
    }
    const bool passed = run.status.verdict == Verdict::Pass;
    done.emplace_back(row.value, passed);
    by_value[row.value] = &run;
    if (!passed) why[row.value] = row.failed;
  }
  for (const auto& [value, passed] : done) {
    if (passed && (!progress.highest_passing || value > *progress.highest_passing)) {
      progress.highest_passing = value;
    }
    if (!passed && (!progress.first_failing || value < *progress.first_failing)) {
      progress.first_failing = value;
    }
  }
  // Why the lowest failing value failed, when the search ended on it.
  if (progress.first_failing && (decision.reason == name(Reason::CapacityFound) ||
                                 decision.reason == name(Reason::NoPassingStep))) {
    const std::string reasons = joined(why[*progress.first_failing]);
    if (!reasons.empty()) decision.message += ": " + reasons;
  }
  // The thresholds as judged at the highest passing value (else the lowest failing).
  const std::optional<double> shown_at =
      progress.highest_passing ? progress.highest_passing : progress.first_failing;
  if (shown_at) status.thresholds = by_value[*shown_at]->status.thresholds;

  status.phase = decision.phase;
  status.reason = decision.reason;
  status.message = decision.message;
  if (status.final()) {
    status.completion_time = api::whole_seconds(observed.now);
    if (decision.phase == Phase::Succeeded) status.verdict = verdict;
  }
  status.search = std::move(progress);

  ConditionFacts facts;
  facts.decision = decision;
  facts.gate = decision.phase == Phase::Succeeded ? verdict : Verdict::None;
  // Each step's LoadTest waits for its own workers.
  facts.workers_ready = decision.phase != Phase::Failed;
  facts.workers_ready_message = "each step's LoadTest has workers of its own";
  facts.completed_reason = name(Reason::StepsCompleted);
  facts.completed_message = std::to_string(done.size()) + " steps";
  finish_parent_plan(plan, facts, current, generation, observed.now, kStepLook);
  return plan;
}

}  // namespace kubeload::controller
