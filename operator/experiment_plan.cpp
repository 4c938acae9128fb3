#include "operator/experiment_plan.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "kubeload/comparison.hpp"
#include "kubeload/result.hpp"
#include "kubeload/threshold.hpp"
#include "operator/conditions.hpp"
#include "operator/job_builder.hpp"
#include "operator/target_usage.hpp"

namespace kubeload::controller {
namespace {

using api::ConditionStatus;
using api::name;
using nlohmann::json;

// What every variant is compared with the first on (status.experiment.differences).
constexpr std::array kDifferenceMetrics{ComparedMetric::rps, ComparedMetric::p50,
                                        ComparedMetric::p99, ComparedMetric::errorRate,
                                        ComparedMetric::cpuPerRequest};
// A running experiment is looked at again this often even without a
// round's event (a missed watch event must not stall it).
constexpr std::chrono::seconds kRoundLook{10};

std::optional<ThresholdMetric> threshold_metric(ComparedMetric metric) {
  switch (metric) {
    case ComparedMetric::rps:
      return ThresholdMetric::rps;
    case ComparedMetric::p50:
      return ThresholdMetric::p50;
    case ComparedMetric::p90:
      return ThresholdMetric::p90;
    case ComparedMetric::p95:
      return ThresholdMetric::p95;
    case ComparedMetric::p99:
      return ThresholdMetric::p99;
    case ComparedMetric::p999:
      return ThresholdMetric::p999;
    case ComparedMetric::mean:
      return ThresholdMetric::mean;
    case ComparedMetric::max:
      return ThresholdMetric::max;
    case ComparedMetric::errorRate:
      return ThresholdMetric::errorRate;
    case ComparedMetric::cpuPerRequest:
      return std::nullopt;
  }
  return std::nullopt;
}

// The figures of a result the comparisons name, but cpuPerRequest (the target's).
std::map<std::string, double> result_metrics(const Result& result) {
  RunResult run;
  run.result = result;
  std::map<std::string, double> out;
  for (const ComparedMetricName& row : kComparedMetrics) {
    const auto metric = threshold_metric(row.metric);
    if (!metric) continue;
    Threshold probe;
    probe.metric = *metric;
    if (const auto value = evaluate(probe, run).value) out.emplace(row.name, *value);
  }
  return out;
}

std::optional<Result> merged_result(const api::LoadTestStatus& status) {
  if (!status.result || !status.result->is_object()) return std::nullopt;
  try {
    return result_from_json(*status.result);
  } catch (const std::exception&) {
    return std::nullopt;  // a status the round's operator could not have written
  }
}

// The target's CPU core-seconds over the round's window, when measured.
std::optional<double> cpu_seconds(const api::LoadTestStatus& status) {
  if (!status.target || !status.target->usage.cpu_cores_mean) return std::nullopt;
  const double seconds =
      std::chrono::duration<double>(status.target->window.end - status.target->window.start)
          .count();
  if (seconds <= 0) return std::nullopt;
  return *status.target->usage.cpu_cores_mean * seconds;
}

std::string target_text(const VariantSpec& variant) {
  if (variant.url) return *variant.url;
  if (variant.service) {
    return "service " +
           (variant.service->namespace_.empty() ? "" : variant.service->namespace_ + "/") +
           variant.service->name + ":" + std::to_string(variant.service->port);
  }
  return "";
}

const RoundRun* find_run(const std::vector<const RoundRun*>& runs, const std::string& variant,
                         uint64_t round) {
  for (const RoundRun* run : runs) {
    if (run->variant == variant && run->round == round) return run;
  }
  return nullptr;
}

std::string describe(const RoundRun& run) {
  return "round " + std::to_string(run.round) + " of variant " + run.variant + " (LoadTest " +
         run.name + ")";
}

// Per-round values of one metric for the variants, paired by round: only
// rounds where both have it.
struct Paired {
  std::vector<double> left;
  std::vector<double> right;
};
Paired paired(const std::vector<api::ExperimentRun>& rows, const std::string& left,
              const std::string& right, std::string_view metric) {
  std::map<uint64_t, std::pair<std::optional<double>, std::optional<double>>> by_round;
  for (const api::ExperimentRun& row : rows) {
    const auto value = row.metrics.find(std::string(metric));
    if (value == row.metrics.end()) continue;
    if (row.variant == left) by_round[row.round].first = value->second;
    if (row.variant == right) by_round[row.round].second = value->second;
  }
  Paired out;
  for (const auto& [round, values] : by_round) {
    if (!values.first || !values.second) continue;
    out.left.push_back(*values.first);
    out.right.push_back(*values.second);
  }
  return out;
}

struct Judgement {
  Verdict gate = Verdict::None;
  Reason reason = Reason::Completed;
  std::string message;
};

// The verdict from the thresholds (each variant's merge) and the comparisons.
Judgement judge(const std::vector<api::ThresholdRow>& thresholds,
                const std::vector<api::ComparisonRow>& comparisons) {
  Judgement out;
  if (thresholds.empty() && comparisons.empty()) {
    out.message = "no thresholds or comparisons to check";
    return out;
  }
  std::vector<std::string> failed, inconclusive;
  for (const api::ThresholdRow& row : thresholds) {
    if (!row.passed) failed.push_back(row.expression + " (observed " + row.observed + ")");
  }
  const bool thresholds_failed = !failed.empty();
  for (const api::ComparisonRow& row : comparisons) {
    if (row.outcome == to_string(ComparisonOutcome::Fail)) failed.push_back(row.message);
    if (row.outcome == to_string(ComparisonOutcome::Inconclusive)) {
      inconclusive.push_back(row.message);
    }
  }
  const auto joined = [](const std::vector<std::string>& parts) {
    std::string text;
    for (const std::string& part : parts) text += (text.empty() ? "" : "; ") + part;
    return text;
  };
  if (!failed.empty()) {
    out.gate = Verdict::Fail;
    out.reason = thresholds_failed ? Reason::ThresholdsFailed : Reason::ComparisonFailed;
    out.message = joined(failed);
  } else if (!inconclusive.empty()) {
    // An interval too wide to decide is never a pass.
    out.gate = Verdict::Fail;
    out.reason = Reason::Inconclusive;
    out.message = joined(inconclusive);
  } else {
    out.gate = Verdict::Pass;
    out.reason = comparisons.empty() ? Reason::ThresholdsPassed : Reason::ComparisonsPassed;
    const auto counted = [](std::size_t n, const char* what) {
      return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
    };
    out.message = comparisons.empty()  ? counted(thresholds.size(), "threshold") + " met"
                  : thresholds.empty() ? counted(comparisons.size(), "comparison") + " held"
                                       : counted(comparisons.size(), "comparison") + " held, " +
                                             counted(thresholds.size(), "threshold") + " met";
  }
  return out;
}

// The variants over their finished rounds: merges, differences, thresholds
// and comparisons (the last three once every round is in).
void conclude(const ExperimentObservation& observed, api::ExperimentStatus& experiment,
              std::vector<api::ThresholdRow>& thresholds) {
  const LoadTestSpec& spec = observed.spec;
  const std::string& reference = spec.variants.front().name;
  for (const VariantSpec& variant : spec.variants) {
    api::VariantOutcome outcome;
    outcome.name = variant.name;
    outcome.target = target_text(variant);
    std::optional<Result> merged;
    double cpu_total = 0, cpu_mean_sum = 0;
    uint64_t cpu_rounds = 0, cpu_requests = 0;
    for (const api::ExperimentRun& row : experiment.runs) {
      if (row.variant != variant.name || row.phase != api::Phase::Succeeded) continue;
      const RoundRun* run = nullptr;
      for (const RoundRun& candidate : observed.runs) {
        if (candidate.name == row.load_test) run = &candidate;
      }
      if (run == nullptr) continue;
      ++outcome.rounds;
      if (auto result = merged_result(run->status)) {
        const uint64_t requests = result->requests;
        if (merged) {
          merged->merge(*result);
        } else {
          merged = std::move(result);
        }
        if (const auto cpu = cpu_seconds(run->status)) {
          cpu_total += *cpu;
          cpu_requests += requests;
          cpu_mean_sum += *run->status.target->usage.cpu_cores_mean;
          ++cpu_rounds;
        }
      }
      if (run->status.target) {
        const auto& memory = run->status.target->usage.memory_bytes_max;
        if (memory &&
            (!outcome.usage.memory_bytes_max || *memory > *outcome.usage.memory_bytes_max)) {
          outcome.usage.memory_bytes_max = memory;
        }
      }
    }
    if (merged) {
      json encoded;
      to_json(encoded, *merged, false);
      outcome.result = std::move(encoded);
      outcome.metrics = result_metrics(*merged);
      RunResult run;
      run.result = *merged;
      for (const Threshold& threshold : spec.thresholds) {
        const ThresholdOutcome judged = evaluate(threshold, run);
        thresholds.push_back({variant.name + ": " + threshold.expression, judged.observed,
                              judged.value, judged.passed});
      }
    }
    if (cpu_rounds > 0) {
      outcome.usage.cpu_cores_mean = cpu_mean_sum / static_cast<double>(cpu_rounds);
      if (cpu_requests > 0) {
        outcome.metrics[std::string(to_string(ComparedMetric::cpuPerRequest))] =
            cpu_total / static_cast<double>(cpu_requests);
      }
    }
    experiment.variants.push_back(std::move(outcome));
  }
  for (const VariantSpec& variant : spec.variants) {
    if (variant.name == reference) continue;
    for (const ComparedMetric metric : kDifferenceMetrics) {
      const Paired values = paired(experiment.runs, variant.name, reference, to_string(metric));
      const auto interval = paired_difference(values.left, values.right);
      if (!interval) continue;
      api::MetricDifference difference{
          variant.name,   reference, std::string(to_string(metric)), interval->mean, interval->low,
          interval->high, {}};
      double reference_sum = 0;
      for (const double v : values.right) reference_sum += v;
      const double reference_mean = reference_sum / static_cast<double>(values.right.size());
      if (reference_mean != 0) difference.relative_percent = interval->mean / reference_mean * 100;
      experiment.differences.push_back(std::move(difference));
    }
  }
  for (const std::string& expression : spec.experiment.comparisons) {
    const auto parsed = parse_comparison(expression);
    const Comparison* comparison = std::get_if<Comparison>(&parsed);
    if (comparison == nullptr) continue;  // the spec's rules refused it
    const Paired values =
        paired(experiment.runs, comparison->left, comparison->right, to_string(comparison->metric));
    const ComparisonDecision decision = decide(*comparison, values.left, values.right);
    api::ComparisonRow row;
    row.expression = expression;
    row.outcome = std::string(to_string(decision.outcome));
    if (decision.margin) {
      row.mean = decision.margin->mean;
      row.low = decision.margin->low;
      row.high = decision.margin->high;
    }
    row.rounds_needed = decision.rounds_needed;
    row.message = decision.message;
    if (values.left.size() < 2) {
      row.message = expression + ": " + std::to_string(values.left.size()) + " round(s) measured " +
                    std::string(to_string(comparison->metric)) +
                    " for both variants, 2 are needed for an interval";
    }
    experiment.comparisons.push_back(std::move(row));
  }
}

// Two variants whose rounds loaded a common address (the helper of
// TargetShared records where each run's load went) with the same headers:
// their comparison would compare a server with itself. Variants that differ
// in their headers may share an address on purpose (an ingress or a mesh
// routing a canary header to another backend), so they are not refused.
// The first such pair, with the address.
std::optional<std::string> overlapping_variants(const LoadTestSpec& spec,
                                                const std::vector<const RoundRun*>& runs) {
  std::map<std::string, std::set<std::string>> addresses;
  for (const RoundRun* run : runs) {
    if (!run->status.target) continue;
    addresses[run->variant].insert(run->status.target->addresses.begin(),
                                   run->status.target->addresses.end());
  }
  for (std::size_t i = 0; i < spec.variants.size(); ++i) {
    for (std::size_t j = i + 1; j < spec.variants.size(); ++j) {
      if (spec.variants[i].headers != spec.variants[j].headers) continue;
      const auto& a = addresses[spec.variants[i].name];
      const auto& b = addresses[spec.variants[j].name];
      for (const std::string& address : a) {
        if (b.count(address)) {
          return "variants " + spec.variants[i].name + " and " + spec.variants[j].name +
                 " load the same target (" + address +
                 "): comparing them would compare a server with itself";
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::pair<uint64_t, std::size_t>> round_order(std::size_t variants, uint64_t rounds) {
  std::vector<std::pair<uint64_t, std::size_t>> order;
  for (uint64_t round = 1; round <= rounds; ++round) {
    for (std::size_t i = 0; i < variants; ++i) {
      order.emplace_back(round, round % 2 == 1 ? i : variants - 1 - i);
    }
  }
  return order;
}

std::map<std::string, double> round_metrics(const api::LoadTestStatus& status) {
  std::map<std::string, double> metrics;
  const std::optional<Result> result = merged_result(status);
  if (!result) return metrics;
  metrics = result_metrics(*result);
  if (const auto cpu = cpu_seconds(status); cpu && result->requests > 0) {
    metrics[std::string(to_string(ComparedMetric::cpuPerRequest))] =
        *cpu / static_cast<double>(result->requests);
  }
  return metrics;
}

ExperimentPlan plan_experiment(const ExperimentObservation& observed) {
  const api::LoadTest& experiment = observed.experiment;
  const api::LoadTestStatus& current = experiment.status;
  const int64_t generation = experiment.metadata.generation;
  ExperimentPlan plan;
  if (current.final() && current.observed_generation == generation) {
    plan.status = current;
    return plan;
  }
  const LoadTestSpec& spec = observed.spec;
  std::vector<const RoundRun*> runs;
  for (const RoundRun& run : observed.runs) {
    if (run.controller_uid == experiment.metadata.uid) runs.push_back(&run);
  }

  api::LoadTestStatus& status = plan.status;
  status.observed_generation = generation;
  status.start_time = current.start_time;
  status.result_record = current.result_record;
  api::ExperimentStatus progress;
  progress.rounds = spec.experiment.rounds;

  PhaseDecision decision{Phase::Running, name(Reason::Running), ""};
  bool all_final = true;
  uint64_t last_complete_round = 0;
  std::set<uint64_t> incomplete_rounds;
  for (const auto& [round, index] : round_order(spec.variants.size(), spec.experiment.rounds)) {
    const VariantSpec& variant = spec.variants[index];
    const RoundRun* run = find_run(runs, variant.name, round);
    if (run == nullptr) {
      all_final = false;
      incomplete_rounds.insert(round);
      if (observed.create_refused) {
        decision = {Phase::Failed, name(Reason::ObjectRejected),
                    "the LoadTest of round " + std::to_string(round) + " of variant " +
                        variant.name + " was refused: " + *observed.create_refused};
      } else {
        plan.create = build_round_loadtest(experiment, index, round);
        decision.message = "round " + std::to_string(round) + " of " +
                           std::to_string(spec.experiment.rounds) + ": starting variant " +
                           variant.name;
        if (!status.start_time) status.start_time = api::whole_seconds(observed.now);
      }
      break;
    }
    api::ExperimentRun row{round, variant.name, run->name, run->status.phase,
                           round_metrics(run->status)};
    progress.runs.push_back(std::move(row));
    if (!status.start_time ||
        (run->status.start_time && *run->status.start_time < *status.start_time)) {
      if (run->status.start_time) status.start_time = run->status.start_time;
    }
    if (!run->status.final()) {
      all_final = false;
      incomplete_rounds.insert(round);
      decision.message =
          "round " + std::to_string(round) + " of " + std::to_string(spec.experiment.rounds) +
          ": variant " + variant.name + " (LoadTest " + run->name + ") " +
          (run->status.phase ? std::string(to_string(*run->status.phase)) : "Pending");
      break;
    }
    if (run->status.phase == Phase::Failed) {
      all_final = false;
      decision = {Phase::Failed, name(Reason::RoundFailed),
                  describe(*run) + " failed (" + run->status.reason + "): " + run->status.message};
      break;
    }
    last_complete_round = round;
  }
  // Each round's target usage comes from Prometheus some seconds after it
  // ends (plan_target_usage): the variants' CPU and cpuPerRequest wait for it.
  if (all_final) {
    const auto pending = std::count_if(runs.begin(), runs.end(), [](const RoundRun* run) {
      return target_usage_pending(run->status);
    });
    if (pending > 0) {
      all_final = false;
      decision.message = "every round ran; waiting for the target's resource use of " +
                         std::to_string(pending) + (pending == 1 ? " round" : " rounds") +
                         " (Prometheus)";
    }
  }
  if (const auto overlap = overlapping_variants(spec, runs)) {
    plan.create.reset();
    all_final = false;
    decision = {Phase::Failed, name(Reason::VariantTargetsOverlap), *overlap};
  }
  for (uint64_t round = 1; round <= last_complete_round; ++round) {
    if (!incomplete_rounds.count(round)) progress.completed_rounds = round;
  }
  if (all_final) progress.completed_rounds = spec.experiment.rounds;

  Judgement judgement;
  if (all_final) {
    conclude(observed, progress, status.thresholds);
    judgement = judge(status.thresholds, progress.comparisons);
    decision = {Phase::Succeeded, name(judgement.reason), judgement.message};
    if (judgement.gate == Verdict::None) decision.reason = name(Reason::Completed);
  }
  if (decision.phase == Phase::Failed) conclude(observed, progress, status.thresholds);

  status.phase = decision.phase;
  status.reason = decision.reason;
  status.message = decision.message;
  status.progress = std::to_string(progress.completed_rounds * 100 / spec.experiment.rounds) + "%";
  if (status.final()) {
    status.completion_time = api::whole_seconds(observed.now);
    if (decision.phase == Phase::Succeeded) status.verdict = judgement.gate;
  }
  status.experiment = std::move(progress);

  ConditionFacts facts;
  facts.decision = decision;
  facts.gate = decision.phase == Phase::Succeeded ? judgement.gate : Verdict::None;
  // Each round's LoadTest waits for its own workers; the experiment's are
  // ready as long as no round failed for want of them.
  facts.workers_ready = decision.phase != Phase::Failed;
  facts.workers_ready_message = "each round's LoadTest has workers of its own";
  facts.completed_reason = name(Reason::RoundsCompleted);
  facts.completed_message = std::to_string(spec.experiment.rounds) + " rounds of " +
                            std::to_string(spec.variants.size()) + " variants";
  finish_parent_plan(plan, facts, current, generation, observed.now, kRoundLook);
  return plan;
}

void finish_parent_plan(ExperimentPlan& plan, const ConditionFacts& facts,
                        const api::LoadTestStatus& current, int64_t generation, Timestamp now,
                        std::chrono::milliseconds look_again) {
  api::LoadTestStatus& status = plan.status;
  for (const ConditionValue& value : decide_conditions(facts)) {
    status.conditions.push_back(condition(value, generation, current, now));
  }
  const PhaseDecision& decision = facts.decision;
  if (status.final() && !current.final()) {
    plan.events.push_back(
        {decision.phase == Phase::Succeeded && facts.gate != Verdict::Fail ? "Normal" : "Warning",
         decision.reason, decision.message});
  }
  if (!status.final()) plan.requeue_after = look_again;
}

}  // namespace kubeload::controller
