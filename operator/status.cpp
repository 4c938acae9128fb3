#include "operator/status.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <system_error>

#include "kubeload/duration.hpp"
#include "kubeload/json_access.hpp"
#include "kubeload/text.hpp"
#include "kubeload/threshold.hpp"
#include "operator/conditions.hpp"
#include "operator/generator_saturation.hpp"
#include "operator/phase.hpp"
#include "operator/views.hpp"

namespace kubeload::controller {
namespace {

using api::ConditionStatus;
using api::ConditionType;
using api::name;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

constexpr size_t kMaxListed = 5;  // details named in one message before "and N more"
// Room left in kStatusSizeLimit for the conditions, which repeat the message.
constexpr size_t kConditionsAllowance = 32 * 1024;

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < parts.size() && i < kMaxListed; ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  if (parts.size() > kMaxListed) {
    out += " (and " + std::to_string(parts.size() - kMaxListed) + " more)";
  }
  return out;
}

// ---- what the pods say, per worker index --------------------------------------

struct WorkerPods {
  bool present = false;  // a pod that is not being deleted
  bool ready = false;
  bool succeeded = false;
  bool failed = false;
  bool deleting = false;
  std::string failure;  // "OOMKilled, exit code 137"
  std::string waiting;  // "ImagePullBackOff"
  // The worker's termination message: its headline numbers (api.md), the
  // fallback when its final result was never collected.
  std::string summary;
};

std::vector<WorkerPods> pods_by_index(const std::vector<PodView>& pods, uint32_t workers) {
  std::vector<WorkerPods> out(workers);
  for (const PodView& view : pods) {
    if (!view.index || *view.index >= workers) continue;
    WorkerPods& worker = out[*view.index];
    const std::string& phase = view.phase;
    const bool deleting = view.deleting;
    if (phase == "Failed") {
      worker.failed = true;
      worker.failure = view.failure;
    } else if (phase == "Succeeded") {
      worker.succeeded = true;
      worker.summary = std::string(utf8_head(view.termination_log, kMaxPodDetail));
    } else if (deleting) {
      worker.deleting = true;
    } else {
      worker.present = true;
      if (view.ready) {
        worker.ready = true;
      } else if (worker.waiting.empty()) {
        worker.waiting = view.waiting;
      }
    }
  }
  return out;
}

// The middle value, or the mean of the two middle values.
double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2.0;
}

// ---- the gate ----------------------------------------------------------------------

struct GateOutcome {
  Verdict gate = Verdict::None;
  std::string message;
  std::vector<api::ThresholdRow> thresholds;
  std::optional<api::BaselineOutcome> baseline;
};

api::BaselineOutcome evaluate_baseline(const BaselineSpec& spec, const api::ResultFigures& current,
                                       const Observation& observed,
                                       std::vector<std::string>& misses) {
  api::BaselineOutcome out;
  std::vector<api::ResultFigures> figures;
  for (const api::LoadTestResult& record : observed.baseline_records) {
    if (!record.run.result) continue;
    if (!out.result_name) {
      out.result_name = record.metadata.name;
      out.load_test_name = record.load_test.name;
    }
    if (spec.window > 1) out.results.push_back(record.metadata.name);
    figures.push_back(api::result_figures(record.run));
  }
  if (figures.empty()) {
    // The first run of a test has nothing before it to regress from, and
    // passes unless the gate demands a comparison (baseline.required); a
    // named baseline that is missing is a mistake in the gate.
    const bool first_run = spec.last_passed;
    out.passed = first_run && !spec.required;
    const std::string test = observed.parsed.spec.labels.contains(std::string(api::kTestLabel))
                                 ? observed.parsed.spec.labels.at(std::string(api::kTestLabel))
                                 : std::string();
    out.message =
        !spec.result_name.empty()
            ? "baseline record \"" + spec.result_name + "\" not found or has no result"
        : !spec.load_test_name.empty()
            ? "no record with a result of a LoadTest named \"" + spec.load_test_name + "\""
            : "no earlier passed record of test \"" + test + "\" to compare with";
    if (spec.required && first_run) *out.message += " (baseline.required)";
    if (!out.passed) misses.push_back(*out.message);
    return out;
  }
  bool passed = true;
  for (const auto& [metric, max_percent] : spec.max_regression_percent) {
    const std::optional<double> now = current.metric(metric);
    // With a window, each metric's median over the records (a steadier
    // reference than one noisy run); a record without it does not count.
    std::vector<double> values;
    for (const api::ResultFigures& base : figures) {
      if (const auto value = base.metric(metric)) values.push_back(*value);
    }
    std::optional<double> before;
    if (!values.empty()) before = median(values);
    api::BaselineCheck check;
    check.metric = metric;
    check.max_regression_percent = max_percent;
    if (!now || !before) {
      out.deltas[metric] = "n/a";
      check.delta = "n/a";
      check.passed = false;
      out.checks.push_back(std::move(check));
      passed = false;
      misses.push_back("baseline " + metric + ": not measured");
      continue;
    }
    double change = 0;  // percent, signed as measured
    if (*before != 0) {
      change = (*now - *before) / *before * 100.0;
    } else if (*now != 0) {
      change = std::numeric_limits<double>::infinity();
    }
    // Higher is worse for latencies and errors, lower is worse for rps.
    const double regression = metric == "rps" ? -change : change;
    const std::string shown =
        std::isinf(change) ? "+inf%" : (change >= 0 ? "+" : "") + fixed(change, 1) + "%";
    out.deltas[metric] = shown;
    check.delta = shown;
    check.observed = *now;
    check.baseline = *before;
    check.passed = !(regression > max_percent);
    out.checks.push_back(std::move(check));
    if (regression > max_percent) {
      passed = false;
      misses.push_back("baseline " + metric + " " + shown + " (max " + fixed(max_percent, 1) +
                       "%)");
    }
  }
  out.passed = passed;
  return out;
}

GateOutcome evaluate_gate(const LoadTestSpec& spec, const RunResult& merged,
                          const api::ResultFigures& current, const Observation& observed) {
  GateOutcome outcome;
  std::vector<std::string> misses;
  size_t threshold_misses = 0;
  for (const Threshold& threshold : spec.thresholds) {
    const ThresholdOutcome result = evaluate(threshold, merged);
    outcome.thresholds.push_back({result.expression, result.observed, result.value, result.passed});
    if (!result.passed) {
      ++threshold_misses;
      misses.push_back(result.expression + " (observed " + result.observed + ")");
    }
  }
  if (spec.baseline) {
    outcome.baseline = evaluate_baseline(*spec.baseline, current, observed, misses);
  }
  if (spec.thresholds.empty() && !spec.baseline) return outcome;

  outcome.gate = misses.empty() ? Verdict::Pass : Verdict::Fail;
  const size_t thresholds = spec.thresholds.size();
  if (misses.empty()) {
    // A first run passed with nothing to compare: said, not called "within".
    const std::optional<std::string> nothing_compared =
        spec.baseline ? outcome.baseline->message : std::nullopt;
    const std::string baseline = !spec.baseline     ? ""
                                 : nothing_compared ? *nothing_compared
                                                    : "within the baseline";
    outcome.message = thresholds == 0 ? baseline
                                      : "all " + std::to_string(thresholds) + " threshold" +
                                            (thresholds == 1 ? "" : "s") + " met" +
                                            (baseline.empty()   ? ""
                                             : nothing_compared ? "; " + baseline
                                                                : " and " + baseline);
  } else {
    outcome.message =
        (threshold_misses > 0 ? std::to_string(threshold_misses) + " of " +
                                    std::to_string(thresholds) + " thresholds missed: "
                              : std::string("missed: ")) +
        join(misses, "; ");
  }
  return outcome;
}

// ---- progress ------------------------------------------------------------------------

// How far the run is, by time planned and by requests asked for: the run
// ends at whichever comes first, so the larger fraction is the truer one.
std::string running_progress(const LoadSpec& load, std::optional<Timestamp> started,
                             uint64_t requests_done, Timestamp now) {
  double fraction = 0;
  nanoseconds planned = load.warmup.value_or(nanoseconds(0));
  if (!load.stages.empty()) {
    for (const StageSpec& stage : load.stages) planned += stage.duration;
  } else if (load.duration) {
    planned += *load.duration;
  } else {
    planned = nanoseconds(0);  // a request count alone: time says nothing
  }
  if (started && planned.count() > 0 && now > *started) {
    fraction = std::chrono::duration<double>(now - *started).count() /
               std::chrono::duration<double>(planned).count();
  }
  if (load.requests && *load.requests > 0) {
    fraction = std::max(fraction,
                        static_cast<double>(requests_done) / static_cast<double>(*load.requests));
  }
  // 100% is for a finished run only.
  const int percent = static_cast<int>(std::clamp(std::floor(fraction * 100.0), 0.0, 99.0));
  return std::to_string(percent) + "%";
}

std::string completion_reason(const LoadSpec& load, const Result& merged) {
  if (!load.stages.empty()) return name(Reason::StagesCompleted);
  if (load.requests && (!load.duration || merged.requests >= *load.requests)) {
    return name(Reason::RequestsReached);
  }
  return name(Reason::DurationReached);
}

// ---- conditions -------------------------------------------------------------------------

// A final status as stored, its conditions derived again from the stored
// phase, reason, message and verdict at `generation`: a run that ended under
// an older operator gains the conditions gates read today (Ready, Stalled,
// Finished, Reconciling), and nothing else changes.
api::LoadTestStatus kept_final_status(const api::LoadTestStatus& current, int64_t generation,
                                      Timestamp now) {
  api::LoadTestStatus kept = current;
  kept.observed_generation = generation;
  ConditionFacts facts;
  facts.decision = {current.phase == Phase::Succeeded ? Phase::Succeeded : Phase::Failed,
                    current.reason, current.message};
  facts.gate = current.verdict.value_or(Verdict::None);
  if (const api::Condition* ready =
          api::find_condition(current.conditions, ConditionType::WorkersReady)) {
    facts.workers_ready = ready->status == ConditionStatus::True;
    facts.workers_ready_message = ready->message;
  }
  facts.completed_reason = facts.decision.reason;
  facts.completed_message = facts.decision.message;
  if (const api::Condition* completed =
          api::find_condition(current.conditions, ConditionType::Completed);
      completed != nullptr && !completed->reason.empty()) {
    facts.completed_reason = completed->reason;
    facts.completed_message = completed->message;
  }
  facts.baseline = current.baseline;
  kept.conditions.clear();
  for (const ConditionValue& value : decide_conditions(facts)) {
    kept.conditions.push_back(condition(value, generation, current, now));
  }
  return kept;
}

std::string invalid_spec_message(const ParsedLoadTest& parsed) {
  std::vector<std::string> parts;
  for (const FieldError& error : parsed.errors) parts.push_back(error.to_string());
  return join(parts, "; ");
}

}  // namespace

// ---- public ------------------------------------------------------------------------------

std::optional<Timestamp> start_deadline(const Observation& observed) {
  if (!observed.parsed.ok()) return std::nullopt;
  const std::optional<JobView> job = own_job(observed);
  std::optional<Timestamp> created = job ? job->created : std::nullopt;
  if (!created) created = observed.loadtest.metadata.creation_timestamp;
  if (!created) return std::nullopt;
  return *created +
         std::chrono::duration_cast<Timestamp::duration>(observed.parsed.spec.start_timeout);
}

api::LoadTestStatus compute_status(const Observation& observed, const RunState& run,
                                   Timestamp now) {
  const api::LoadTestStatus& current = observed.loadtest.status;
  const int64_t generation = observed.loadtest.metadata.generation;
  if (current.final()) {
    const bool edited_after_invalid = current.reason == to_string(Reason::InvalidSpec) &&
                                      current.observed_generation != generation;
    if (!edited_after_invalid) {
      // A LoadTest runs once: an edit after the end changes nothing but
      // records that the operator saw it (so the controller stops waiting
      // for a status of the new generation).
      return kept_final_status(current, generation, now);
    }
  }

  const LoadTestSpec& spec = observed.parsed.spec;
  const uint32_t workers = spec.workers;
  const std::optional<JobView> job = own_job(observed);
  const std::vector<WorkerPods> pods = pods_by_index(own_pods(observed), workers);

  // Only the Job's own indices count; anything else is not ours to merge.
  std::vector<const WorkerReport*> collected(workers, nullptr);
  for (const auto& [index, report] : run.results.reports()) {
    if (index < workers) collected[index] = &report;
  }
  const auto is_final_ok = [&](uint32_t i) {
    return collected[i] != nullptr && collected[i]->finished && collected[i]->error.empty();
  };

  std::optional<Timestamp> started_at = current.start_time;
  std::optional<int64_t> first_worker_start_ms, last_worker_start_ms;
  uint32_t workers_started = 0;
  for (const WorkerReport* result : collected) {
    if (result == nullptr || !result->started_at_ms) continue;
    ++workers_started;
    first_worker_start_ms =
        std::min(first_worker_start_ms.value_or(*result->started_at_ms), *result->started_at_ms);
    last_worker_start_ms =
        std::max(last_worker_start_ms.value_or(*result->started_at_ms), *result->started_at_ms);
  }
  const bool start_issued =
      run.start_issued_at.has_value() || started_at.has_value() || workers_started > 0;
  if (start_issued && !started_at) {
    if (run.start_issued_at) {
      started_at = run.start_issued_at;
    } else if (first_worker_start_ms) {
      started_at = Timestamp(milliseconds(*first_worker_start_ms));
    } else {
      started_at = now;
    }
  }

  // ---- facts for the transition table
  PhaseFacts facts;
  facts.spec_valid = observed.parsed.ok();
  facts.spec_errors = invalid_spec_message(observed.parsed);
  facts.job_exists = job.has_value();
  facts.start_issued = start_issued;
  facts.desired = workers;
  facts.start_timeout = format_duration(spec.start_timeout);
  if (run.failure) {
    facts.run_failure_reason = name(run.failure->reason);
    facts.run_failure_message = run.failure->message;
  }
  facts.waiting_for = run.waiting_for;
  const std::optional<Timestamp> deadline = start_deadline(observed);
  facts.start_deadline_passed = deadline && now > *deadline;

  std::vector<std::string> failures, lost, waiting;
  uint32_t pods_succeeded = 0, workers_failed = 0, with_results = 0;
  for (uint32_t i = 0; i < workers; ++i) {
    const WorkerPods& pod = pods[i];
    const std::string who = "worker " + std::to_string(i);
    if (pod.ready) ++facts.ready;
    if (pod.succeeded) ++pods_succeeded;
    if (collected[i] != nullptr) ++with_results;
    if (is_final_ok(i)) {
      ++facts.final_results;
      continue;
    }
    if (collected[i] != nullptr && !collected[i]->error.empty()) {
      failures.push_back(who + " reported: " + collected[i]->error);
      ++workers_failed;
    } else if (pod.failed) {
      failures.push_back(who + " failed" + (pod.failure.empty() ? "" : " (" + pod.failure + ")"));
      ++workers_failed;
    } else if (pod.deleting) {
      failures.push_back(who + "'s pod was deleted");
      ++workers_failed;
    } else if (pod.succeeded && start_issued) {
      lost.push_back(
          who + " exited before its final result was collected" +
          (pod.summary.empty() ? "" : " (its termination message: " + pod.summary + ")"));
    } else if (start_issued && facts.job_exists && !pod.present && !pod.succeeded) {
      failures.push_back(who + "'s pod disappeared");
      ++workers_failed;
    } else if (!pod.ready && !pod.waiting.empty()) {
      waiting.push_back(who + ": " + pod.waiting);
    }
  }
  if (failures.empty() && job && job->failed) {
    const std::string& why = job->failed_reason;
    failures.push_back("the worker Job failed" + (why.empty() ? "" : " (" + why + ")"));
  }
  if (failures.empty() && start_issued && !facts.job_exists) {
    failures.push_back("the worker Job was deleted");
  }
  if (lost.empty() && start_issued && job && job->complete) {
    lost.push_back("the worker Job completed before every final result was collected");
  }
  if (!failures.empty()) {
    facts.worker_failure = join(failures, "; ");
    facts.worker_failure += with_results == 0
                                ? "; no results were collected"
                                : "; kept the partial results of " + std::to_string(with_results) +
                                      " of " + std::to_string(workers) + " workers";
  }
  if (!lost.empty()) facts.results_lost = join(lost, "; ");
  facts.not_ready_detail = join(waiting, ", ");

  // ---- results, merged exactly as they were collected
  api::LoadTestStatus status;
  const std::optional<RunResult>& merged = run.results.merged();
  if (merged) {
    json result;
    to_json(result, merged->result, true);
    status.result = std::move(result);
  }

  // The gate is judged on complete results only.
  std::optional<GateOutcome> gate;
  if (facts.spec_valid && facts.desired > 0 && facts.final_results >= facts.desired && merged) {
    gate = evaluate_gate(spec, *merged, api::result_figures(status), observed);
    facts.gate = gate->gate;
    facts.gate_message = gate->message;
  }

  PhaseDecision decision = decide_phase(facts);
  const bool succeeded = decision.phase == Phase::Succeeded;
  const bool failed = decision.phase == Phase::Failed;

  status.observed_generation = generation;
  status.phase = decision.phase;
  status.reason = decision.reason;
  status.message = decision.message;
  status.verdict = succeeded ? facts.gate : Verdict::None;
  if (succeeded && gate) {
    status.thresholds = std::move(gate->thresholds);
    status.baseline = std::move(gate->baseline);
  }

  if (started_at && start_issued) status.start_time = api::whole_seconds(*started_at);
  if (succeeded || failed) {
    status.completion_time = current.completion_time.value_or(api::whole_seconds(now));
  }

  if (succeeded) {
    status.progress = "100%";
  } else if (start_issued && facts.spec_valid) {
    status.progress =
        running_progress(spec.load, started_at, merged ? merged->result.requests : 0, now);
  } else {
    status.progress = "0%";
  }

  api::WorkerCounts counts;
  counts.desired = workers;
  counts.ready = facts.ready;
  // A worker has succeeded once its final result is in hand: its pod only
  // exits after the operator acknowledged that result.
  counts.succeeded = std::max<uint64_t>(
      {pods_succeeded, facts.final_results, job ? job->pods_succeeded : uint64_t{0}});
  counts.failed = std::max<uint64_t>(workers_failed, job ? job->pods_failed : uint64_t{0});
  if (current.workers && current.workers->start_skew_ms) {
    counts.start_skew_ms = current.workers->start_skew_ms;
  } else if (workers_started == workers && workers > 0) {
    counts.start_skew_ms = *last_worker_start_ms - *first_worker_start_ms;
  }
  counts.cpu = workers_cpu(run.results.reports(), workers);
  status.workers = counts;

  if (merged) {
    // A printer column cannot multiply: Errors(%) reads this.
    status.error_percent = std::round(merged->result.error_rate() * 100.0 * 1000.0) / 1000.0;
    if (!merged->stages.empty()) status.stages = stages_json(*merged, false);
    if (!merged->request_results.empty())
      status.request_results = request_results_json(*merged, false);
    if (!merged->scenarios.empty()) {
      status.scenario_results = scenario_results_json(*merged, false);
    }
  }

  // Bounded before the conditions, which repeat its message: recomputed from
  // the status it wrote, the status is the same.
  if (const std::string note = bound_status_size(status, kStatusSizeLimit - kConditionsAllowance);
      !note.empty()) {
    decision.message += (decision.message.empty() ? "" : "; ") + note;
    status.message = decision.message;
  }

  // ---- conditions
  ConditionFacts condition_facts;
  condition_facts.decision = decision;
  condition_facts.gate = facts.gate;
  condition_facts.workers_ready =
      facts.spec_valid &&
      (start_issued || succeeded || (facts.job_exists && workers > 0 && facts.ready == workers));
  condition_facts.workers_ready_message =
      condition_facts.workers_ready
          ? "all " + std::to_string(workers) + " workers ready"
          : std::to_string(facts.ready) + "/" + std::to_string(workers) + " workers ready";
  if (succeeded) {
    condition_facts.completed_reason = completion_reason(spec.load, merged->result);
    condition_facts.completed_message = std::to_string(merged->result.requests) + " requests in " +
                                        fixed(merged->result.duration_seconds, 1) + "s";
  }
  condition_facts.baseline = status.baseline;
  for (const ConditionValue& value : decide_conditions(condition_facts)) {
    status.conditions.push_back(condition(value, generation, current, now));
  }
  return status;
}

std::string bound_status_size(api::LoadTestStatus& status, std::size_t limit) {
  std::size_t size = json(status).dump().size();
  if (size <= limit) return "";
  std::vector<std::string> notes;
  // Scenario rows last: at most a few dozen, a few hundred bytes each.
  for (auto [rows, what] :
       {std::pair{&status.request_results, "named requests"}, std::pair{&status.stages, "stages"},
        std::pair{&status.scenario_results, "scenarios"}}) {
    if (size <= limit || !*rows || !(*rows)->is_array()) continue;
    json& list = **rows;
    const std::size_t all = list.size();
    while (size > limit && !list.empty()) {
      size -= list.back().dump().size() + 1;  // and its comma
      list.erase(list.size() - 1);
    }
    notes.push_back(std::to_string(list.size()) + " of " + std::to_string(all) + " " + what);
    if (list.empty()) rows->reset();
  }
  return "the status lists " + join(notes, " and ") + " (it is bounded at " +
         std::to_string(limit / 1024) + " KiB; every row is in the run's results ConfigMap)";
}

bool status_changed(const api::LoadTestStatus& current, const api::LoadTestStatus& next) {
  return !(current == next);
}

}  // namespace kubeload::controller
