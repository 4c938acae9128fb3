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
#include "operator/phase.hpp"
#include "operator/views.hpp"

namespace kubeload::controller {
namespace {

using api::ConditionStatus;
using api::ConditionType;
using api::name;
using json_access::count_or_zero;
using json_access::find_condition;
using json_access::member;
using json_access::text;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

constexpr size_t kMaxListed = 5;    // details named in one message before "and N more"
constexpr size_t kMaxDetail = 200;  // characters of a crashed container's message

// ---- small JSON readers ------------------------------------------------------

bool condition_true(const json& conditions, std::string_view type) {
  const json* condition = find_condition(conditions, type);
  return condition != nullptr && text(member(*condition, "status")) == "True";
}

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

std::string termination_detail(const json& pod) {
  const json& status = member(pod, "status");
  const json& containers = member(status, "containerStatuses");
  if (containers.is_array()) {
    for (const json& container : containers) {
      const json& terminated = member(member(container, "state"), "terminated");
      if (!terminated.is_object()) continue;
      std::string detail = text(member(terminated, "reason"));
      if (member(terminated, "exitCode").is_number_integer()) {
        if (!detail.empty()) detail += ", ";
        detail += "exit code " + std::to_string(member(terminated, "exitCode").get<int64_t>());
      }
      // What the worker wrote to its termination log (policy File: never a
      // log tail), e.g. why it refused its target; the first line says it.
      std::string message = text(member(terminated, "message"));
      message = message.substr(0, message.find('\n'));
      if (message.size() > kMaxDetail)
        message = std::string(utf8_head(message, kMaxDetail)) + "...";
      if (!message.empty()) detail += (detail.empty() ? "" : ": ") + message;
      if (!detail.empty()) return detail;
    }
  }
  // Evictions and node loss leave no container state, only the pod's reason.
  std::string detail = text(member(status, "reason"));
  const std::string message = text(member(status, "message"));
  if (!message.empty()) detail += (detail.empty() ? "" : ": ") + message;
  return detail;
}

std::string waiting_detail(const json& pod) {
  const json& status = member(pod, "status");
  const json& containers = member(status, "containerStatuses");
  if (containers.is_array()) {
    for (const json& container : containers) {
      const std::string reason =
          text(member(member(member(container, "state"), "waiting"), "reason"));
      if (!reason.empty() && reason != "ContainerCreating") return reason;
    }
  }
  const json* scheduled = find_condition(member(status, "conditions"), "PodScheduled");
  if (scheduled != nullptr && text(member(*scheduled, "status")) == "False") {
    const std::string reason = text(member(*scheduled, "reason"));
    return reason.empty() ? "not scheduled" : reason;
  }
  return "";
}

std::vector<WorkerPods> pods_by_index(const std::vector<PodView>& pods, uint32_t workers) {
  std::vector<WorkerPods> out(workers);
  for (const PodView& view : pods) {
    const json& pod = *view.object;
    if (!view.index || *view.index >= workers) continue;
    WorkerPods& worker = out[*view.index];
    const std::string& phase = view.phase;
    const bool deleting = view.deleting;
    if (phase == "Failed") {
      worker.failed = true;
      worker.failure = termination_detail(pod);
    } else if (phase == "Succeeded") {
      worker.succeeded = true;
      worker.summary = std::string(utf8_head(view.termination_log, kMaxDetail));
    } else if (deleting) {
      worker.deleting = true;
    } else {
      worker.present = true;
      if (view.ready) {
        worker.ready = true;
      } else if (worker.waiting.empty()) {
        worker.waiting = waiting_detail(pod);
      }
    }
  }
  return out;
}

// ---- times ---------------------------------------------------------------------

std::optional<Timestamp> creation_time(const json& object) {
  return parse_time(text(member(member(object, "metadata"), "creationTimestamp")));
}

// ---- the gate ----------------------------------------------------------------------

struct GateOutcome {
  Verdict gate = Verdict::None;
  std::string message;
  json thresholds = json::array();
  std::optional<json> baseline;
};

// The value of a maxRegression metric in a status.result document.
std::optional<double> result_metric(const json& result, const std::string& metric) {
  const json& value = metric == "rps" || metric == "errorRate"
                          ? member(result, metric.c_str())
                          : member(member(result, "latencyMs"), metric.c_str());
  if (!value.is_number()) return std::nullopt;
  return value.get<double>();
}

json evaluate_baseline(const BaselineSpec& spec, const json& current_result,
                       const Observed& observed, std::vector<std::string>& misses) {
  json out = {{"deltas", json::object()}, {"checks", json::array()}};
  if (!observed.baseline_name.empty()) out["loadTestName"] = observed.baseline_name;
  const json* base_result =
      observed.baseline_status ? &member(*observed.baseline_status, "result") : nullptr;
  if (base_result == nullptr || !base_result->is_object()) {
    // The first run of a test has nothing before it to regress from; a
    // named baseline that is missing is a mistake in the gate.
    const bool first_run = spec.last_passed;
    out["passed"] = first_run;
    out["message"] =
        first_run ? "no earlier passed run of this test to compare with"
                  : "baseline LoadTest \"" + spec.load_test_name + "\" not found or has no result";
    if (!first_run) misses.push_back(out["message"].get<std::string>());
    return out;
  }
  bool passed = true;
  for (const auto& [metric, max_percent] : spec.max_regression_percent) {
    const std::optional<double> now = result_metric(current_result, metric);
    const std::optional<double> before = result_metric(*base_result, metric);
    json check = {{"metric", metric}, {"maxRegressionPercent", max_percent}};
    if (!now || !before) {
      out["deltas"][metric] = "n/a";
      check["delta"] = "n/a";
      check["passed"] = false;
      out["checks"].push_back(std::move(check));
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
    out["deltas"][metric] = shown;
    check["delta"] = shown;
    check["observed"] = *now;
    check["baseline"] = *before;
    check["passed"] = !(regression > max_percent);
    out["checks"].push_back(std::move(check));
    if (regression > max_percent) {
      passed = false;
      misses.push_back("baseline " + metric + " " + shown + " (max " + fixed(max_percent, 1) +
                       "%)");
    }
  }
  out["passed"] = passed;
  return out;
}

GateOutcome evaluate_gate(const LoadTestSpec& spec, const RunResult& merged,
                          const json& current_result, const Observed& observed) {
  GateOutcome outcome;
  std::vector<std::string> misses;
  size_t threshold_misses = 0;
  for (const Threshold& threshold : spec.thresholds) {
    const ThresholdOutcome result = evaluate(threshold, merged);
    json row = {{"expression", result.expression},
                {"observed", result.observed},
                {"passed", result.passed}};
    if (result.value) row["value"] = *result.value;
    outcome.thresholds.push_back(std::move(row));
    if (!result.passed) {
      ++threshold_misses;
      misses.push_back(result.expression + " (observed " + result.observed + ")");
    }
  }
  if (spec.baseline) {
    outcome.baseline = evaluate_baseline(*spec.baseline, current_result, observed, misses);
  }
  if (spec.thresholds.empty() && !spec.baseline) return outcome;

  outcome.gate = misses.empty() ? Verdict::Pass : Verdict::Fail;
  const size_t thresholds = spec.thresholds.size();
  if (misses.empty()) {
    outcome.message = thresholds == 0 ? "within the baseline"
                                      : "all " + std::to_string(thresholds) + " threshold" +
                                            (thresholds == 1 ? "" : "s") + " met" +
                                            (spec.baseline ? " and within the baseline" : "");
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
json kept_final_status(const json& current, int64_t generation, Timestamp now) {
  json kept = current;
  kept["observedGeneration"] = generation;
  const json& stored = member(current, "conditions");
  ConditionFacts facts;
  facts.decision = {api::parse_phase(text(member(current, "phase"))) == Phase::Succeeded
                        ? Phase::Succeeded
                        : Phase::Failed,
                    text(member(current, "reason")), text(member(current, "message"))};
  facts.gate = api::parse_verdict(text(member(current, "verdict"))).value_or(Verdict::None);
  if (const json* ready = find_condition(stored, to_string(ConditionType::WorkersReady));
      ready != nullptr) {
    facts.workers_ready = text(member(*ready, "status")) == to_string(ConditionStatus::True);
    facts.workers_ready_message = text(member(*ready, "message"));
  }
  facts.completed_reason = facts.decision.reason;
  facts.completed_message = facts.decision.message;
  if (const json* completed = find_condition(stored, to_string(ConditionType::Completed));
      completed != nullptr && !text(member(*completed, "reason")).empty()) {
    facts.completed_reason = text(member(*completed, "reason"));
    facts.completed_message = text(member(*completed, "message"));
  }
  json conditions = json::array();
  for (const ConditionValue& value : decide_conditions(facts)) {
    conditions.push_back(
        condition(value.type, value.status, value.reason, value.message, generation, current, now));
  }
  kept["conditions"] = std::move(conditions);
  return kept;
}

std::string invalid_spec_message(const ParsedLoadTest& parsed) {
  std::vector<std::string> parts;
  for (const FieldError& error : parsed.errors) parts.push_back(error.to_string());
  return join(parts, "; ");
}

}  // namespace

// ---- public ------------------------------------------------------------------------------

json condition(std::string_view type, std::string_view status, const std::string& reason,
               const std::string& message, int64_t generation, const json& current_status,
               Timestamp now) {
  std::string since = format_time(now);
  // As meta.SetStatusCondition: the transition time moves only when the
  // status does.
  if (const json* old = find_condition(member(current_status, "conditions"), type);
      old != nullptr && text(member(*old, "status")) == status &&
      member(*old, "lastTransitionTime").is_string()) {
    since = text(member(*old, "lastTransitionTime"));
  }
  return {{"type", type},
          {"status", status},
          {"reason", reason},
          {"message", message},
          {"lastTransitionTime", since},
          {"observedGeneration", generation}};
}

std::optional<Timestamp> start_deadline(const Observed& observed) {
  if (!observed.parsed.ok()) return std::nullopt;
  std::optional<Timestamp> created = observed.job ? creation_time(*observed.job) : std::nullopt;
  if (!created) created = creation_time(observed.loadtest);
  if (!created) return std::nullopt;
  return *created +
         std::chrono::duration_cast<Timestamp::duration>(observed.parsed.spec.start_timeout);
}

json compute_status(const Observed& observed, Timestamp now) {
  const json& current = member(observed.loadtest, "status");
  const json& metadata = member(observed.loadtest, "metadata");
  const int64_t generation = member(metadata, "generation").is_number_integer()
                                 ? member(metadata, "generation").get<int64_t>()
                                 : 0;
  const std::string current_phase = text(member(current, "phase"));
  if (api::is_final_phase(current_phase)) {
    const bool edited_after_invalid =
        text(member(current, "reason")) == to_string(Reason::InvalidSpec) &&
        member(current, "observedGeneration") != json(generation);
    if (!edited_after_invalid) {
      // A LoadTest runs once: an edit after the end changes nothing but
      // records that the operator saw it (so the controller stops waiting
      // for a status of the new generation).
      return kept_final_status(current, generation, now);
    }
  }

  const LoadTestSpec& spec = observed.parsed.spec;
  const uint32_t workers = spec.workers;
  const json no_job;
  const json& job = observed.job ? *observed.job : no_job;
  const std::vector<WorkerPods> pods = pods_by_index(observed.pods, workers);

  // Only the Job's own indices count; anything else is not ours to merge.
  std::vector<const WorkerReport*> collected(workers, nullptr);
  for (const auto& [index, report] : observed.results.reports()) {
    if (index < workers) collected[index] = &report;
  }
  const auto is_final_ok = [&](uint32_t i) {
    return collected[i] != nullptr && collected[i]->finished && collected[i]->error.empty();
  };

  std::optional<Timestamp> started_at;
  if (const json& start = member(current, "startTime"); start.is_string()) {
    started_at = parse_time(start.get<std::string>());
  }
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
      observed.start_issued_at.has_value() || started_at.has_value() || workers_started > 0;
  if (start_issued && !started_at) {
    if (observed.start_issued_at) {
      started_at = observed.start_issued_at;
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
  facts.job_exists = observed.job.has_value();
  facts.start_issued = start_issued;
  facts.desired = workers;
  facts.start_timeout = format_duration(spec.start_timeout);
  facts.run_failure_reason = observed.run_failure_reason;
  facts.run_failure_message = observed.run_failure_message;
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
  const json& job_conditions = member(member(job, "status"), "conditions");
  if (failures.empty() && condition_true(job_conditions, "Failed")) {
    const json* failed = find_condition(job_conditions, "Failed");
    const std::string why = text(member(*failed, "reason"));
    failures.push_back("the worker Job failed" + (why.empty() ? "" : " (" + why + ")"));
  }
  if (failures.empty() && start_issued && !facts.job_exists) {
    failures.push_back("the worker Job was deleted");
  }
  if (lost.empty() && start_issued && condition_true(job_conditions, "Complete")) {
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
  const std::optional<RunResult>& merged = observed.results.merged();
  json result_json;
  if (merged) to_json(result_json, merged->result, true);

  // The gate is judged on complete results only.
  std::optional<GateOutcome> gate;
  if (facts.spec_valid && facts.desired > 0 && facts.final_results >= facts.desired && merged) {
    gate = evaluate_gate(spec, *merged, result_json, observed);
    facts.gate = gate->gate;
    facts.gate_message = gate->message;
  }

  const PhaseDecision decision = decide_phase(facts);
  const bool succeeded = decision.phase == Phase::Succeeded;
  const bool failed = decision.phase == Phase::Failed;

  json status = json::object();
  status["observedGeneration"] = generation;
  status["phase"] = std::string(to_string(decision.phase));
  status["reason"] = decision.reason;
  status["message"] = decision.message;
  status["verdict"] = name(succeeded ? facts.gate : Verdict::None);
  if (succeeded && gate) {
    if (!gate->thresholds.empty()) status["thresholds"] = std::move(gate->thresholds);
    if (gate->baseline) status["baseline"] = std::move(*gate->baseline);
  }

  if (started_at && start_issued) status["startTime"] = format_time(*started_at);
  if (succeeded || failed) {
    const json& done = member(current, "completionTime");
    status["completionTime"] = done.is_string() ? done : json(format_time(now));
  }

  if (succeeded) {
    status["progress"] = "100%";
  } else if (start_issued && facts.spec_valid) {
    status["progress"] =
        running_progress(spec.load, started_at, merged ? merged->result.requests : 0, now);
  } else {
    status["progress"] = "0%";
  }

  json workers_json = {
      {"desired", workers},
      {"ready", facts.ready},
      // A worker has succeeded once its final result is in hand: its pod
      // only exits after the operator acknowledged that result.
      {"succeeded",
       std::max<uint64_t>({pods_succeeded, facts.final_results,
                           count_or_zero(member(member(job, "status"), "succeeded"))})},
      {"failed",
       std::max<uint64_t>(workers_failed, count_or_zero(member(member(job, "status"), "failed")))}};
  if (observed.start_skew_ms) {
    workers_json["startSkewMs"] = *observed.start_skew_ms;
  } else if (const json& skew = member(member(current, "workers"), "startSkewMs");
             skew.is_number()) {
    workers_json["startSkewMs"] = skew;
  } else if (workers_started == workers && workers > 0) {
    workers_json["startSkewMs"] = *last_worker_start_ms - *first_worker_start_ms;
  }
  status["workers"] = std::move(workers_json);

  if (merged) {
    const json summary = to_json(*merged, false);
    status["result"] = result_json;
    // A printer column cannot multiply: Errors(%) reads this.
    status["errorPercent"] = std::round(merged->result.error_rate() * 100.0 * 1000.0) / 1000.0;
    if (!summary["stages"].empty()) status["stages"] = summary["stages"];
    if (!summary["requestResults"].empty()) status["requestResults"] = summary["requestResults"];
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
  json conditions = json::array();
  for (const ConditionValue& value : decide_conditions(condition_facts)) {
    conditions.push_back(
        condition(value.type, value.status, value.reason, value.message, generation, current, now));
  }
  status["conditions"] = std::move(conditions);
  return status;
}

bool status_changed(const json& current, const json& next) {
  return current != next;
}

}  // namespace kubeload::controller
