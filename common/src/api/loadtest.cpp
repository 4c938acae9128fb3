#include "kubeload/api/loadtest.hpp"

#include <algorithm>
#include <cstdint>

#include "kubeload/api/meta.hpp"
#include "kubeload/json_access.hpp"
#include "kubeload/rfc3339.hpp"
#include "lenient.hpp"

namespace kubeload::api {
namespace {

using json_access::count;
using json_access::member;
using json_access::number;
using json_access::text;
using nlohmann::json;

using lenient::flag;
using lenient::integer;
using lenient::list_of;
using lenient::optional_text;
using lenient::string_map;
using lenient::time_of;

// ---- the status's parts

json to_json(const WorkerCounts& w) {
  json out = {
      {"desired", w.desired}, {"ready", w.ready}, {"succeeded", w.succeeded}, {"failed", w.failed}};
  if (w.start_skew_ms) out["startSkewMs"] = *w.start_skew_ms;
  if (const auto& cpu = w.cpu) {
    json use = {{"measured", cpu->measured},
                {"seconds", cpu->seconds},
                {"busiestWorker", cpu->busiest_worker},
                {"maxUtilization", cpu->max_utilization}};
    if (cpu->limit_cores) use["limitCores"] = *cpu->limit_cores;
    out["cpu"] = std::move(use);
  }
  return out;
}
WorkerCounts worker_counts(const json& in) {
  WorkerCounts w;
  w.desired = count(member(in, "desired")).value_or(0);
  w.ready = count(member(in, "ready")).value_or(0);
  w.succeeded = count(member(in, "succeeded")).value_or(0);
  w.failed = count(member(in, "failed")).value_or(0);
  w.start_skew_ms = integer(member(in, "startSkewMs"));
  if (const json& cpu = member(in, "cpu"); cpu.is_object()) {
    WorkersCpuStatus use;
    use.measured = count(member(cpu, "measured")).value_or(0);
    use.seconds = number(member(cpu, "seconds")).value_or(0);
    use.busiest_worker = static_cast<uint32_t>(
        std::min<uint64_t>(count(member(cpu, "busiestWorker")).value_or(0), UINT32_MAX));
    use.max_utilization = number(member(cpu, "maxUtilization")).value_or(0);
    use.limit_cores = number(member(cpu, "limitCores"));
    w.cpu = use;
  }
  return w;
}

json to_json(const ThresholdRow& row) {
  json out = {{"expression", row.expression}, {"observed", row.observed}, {"passed", row.passed}};
  if (row.value) out["value"] = *row.value;
  return out;
}
ThresholdRow threshold_row(const json& in) {
  return {text(member(in, "expression")), text(member(in, "observed")), number(member(in, "value")),
          flag(member(in, "passed"))};
}

json to_json(const BaselineCheck& check) {
  json out = {{"metric", check.metric},
              {"delta", check.delta},
              {"maxRegressionPercent", check.max_regression_percent},
              {"passed", check.passed}};
  if (check.observed) out["observed"] = *check.observed;
  if (check.baseline) out["baseline"] = *check.baseline;
  return out;
}
BaselineCheck baseline_check(const json& in) {
  return {text(member(in, "metric")),
          number(member(in, "observed")),
          number(member(in, "baseline")),
          text(member(in, "delta")),
          number(member(in, "maxRegressionPercent")).value_or(0),
          flag(member(in, "passed"))};
}

json to_json(const BaselineOutcome& baseline) {
  json checks = json::array();
  for (const BaselineCheck& check : baseline.checks) checks.push_back(to_json(check));
  json out = {
      {"deltas", baseline.deltas}, {"checks", std::move(checks)}, {"passed", baseline.passed}};
  if (baseline.load_test_name) out["loadTestName"] = *baseline.load_test_name;
  if (baseline.result_name) out["resultName"] = *baseline.result_name;
  if (!baseline.results.empty()) out["results"] = baseline.results;
  if (baseline.message) out["message"] = *baseline.message;
  return out;
}
BaselineOutcome baseline_outcome(const json& in) {
  BaselineOutcome out;
  out.load_test_name = optional_text(member(in, "loadTestName"));
  out.result_name = optional_text(member(in, "resultName"));
  if (const json& results = member(in, "results"); results.is_array()) {
    for (const json& item : results) {
      if (item.is_string()) out.results.push_back(item.get<std::string>());
    }
  }
  out.deltas = string_map(member(in, "deltas"));
  out.checks = list_of<BaselineCheck>(member(in, "checks"), baseline_check);
  out.passed = flag(member(in, "passed"));
  out.message = optional_text(member(in, "message"));
  return out;
}

json to_json(const UsageWindowStatus& window) {
  json out = {{"start", rfc3339::format(window.start)}, {"end", rfc3339::format(window.end)}};
  if (window.includes_warmup) out["includesWarmup"] = true;
  return out;
}
UsageWindowStatus usage_window(const json& in) {
  return {time_of(member(in, "start")).value_or(Time{}),
          time_of(member(in, "end")).value_or(Time{}), flag(member(in, "includesWarmup"))};
}

// The usage figures are members of the object they describe (the target,
// or one of its stages).
void add_usage(json& out, const UsageFigures& usage) {
  json cpu = json::object();
  if (usage.cpu_cores_mean) cpu["mean"] = *usage.cpu_cores_mean;
  if (usage.cpu_cores_max) cpu["max"] = *usage.cpu_cores_max;
  if (!cpu.empty()) out["cpuCores"] = std::move(cpu);
  if (usage.memory_bytes_max) out["memoryBytes"] = {{"max", *usage.memory_bytes_max}};
  if (usage.restarts) out["restarts"] = *usage.restarts;
}
UsageFigures usage_figures(const json& in) {
  return {number(member(member(in, "cpuCores"), "mean")),
          number(member(member(in, "cpuCores"), "max")),
          integer(member(member(in, "memoryBytes"), "max")), count(member(in, "restarts"))};
}

json to_json(const TargetUsageStatus& target) {
  json out = json::object();
  if (!target.addresses.empty()) out["addresses"] = target.addresses;
  if (!target.shared_with.empty()) {
    json runs = json::array();
    for (const SharedRun& run : target.shared_with) {
      runs.push_back({{"namespace", run.namespace_}, {"name", run.name}});
    }
    out["sharedWith"] = std::move(runs);
  }
  if (!target.measured()) return out;
  add_usage(out, target.usage);
  out["namespace"] = target.namespace_;
  out["selector"] = target.selector;
  out["pods"] = target.pods;
  out["window"] = to_json(target.window);
  if (!target.stages.empty()) {
    json stages = json::array();
    for (const TargetStageUsage& stage : target.stages) {
      json row = json::object();
      add_usage(row, stage.usage);
      row["index"] = stage.index;
      row["window"] = to_json(stage.window);
      stages.push_back(std::move(row));
    }
    out["stages"] = std::move(stages);
  }
  return out;
}
TargetUsageStatus target_usage(const json& in) {
  TargetUsageStatus out;
  out.namespace_ = text(member(in, "namespace"));
  out.selector = text(member(in, "selector"));
  out.pods = count(member(in, "pods")).value_or(0);
  out.window = usage_window(member(in, "window"));
  out.usage = usage_figures(in);
  out.stages = list_of<TargetStageUsage>(member(in, "stages"), [](const json& row) {
    return TargetStageUsage{count(member(row, "index")).value_or(0),
                            usage_window(member(row, "window")), usage_figures(row)};
  });
  if (const json& addresses = member(in, "addresses"); addresses.is_array()) {
    for (const json& item : addresses) {
      if (item.is_string()) out.addresses.push_back(item.get<std::string>());
    }
  }
  out.shared_with = list_of<SharedRun>(member(in, "sharedWith"), [](const json& run) {
    return SharedRun{text(member(run, "namespace")), text(member(run, "name"))};
  });
  return out;
}

std::map<std::string, double> number_map(const json& in) {
  std::map<std::string, double> out;
  if (!in.is_object()) return out;
  for (const auto& [key, value] : in.items()) {
    if (value.is_number()) out.emplace(key, value.get<double>());
  }
  return out;
}

json to_json(const ExperimentStatus& experiment) {
  json runs = json::array();
  for (const ExperimentRun& run : experiment.runs) {
    json row = {{"round", run.round},
                {"variant", run.variant},
                {"loadTest", run.load_test},
                {"metrics", run.metrics}};
    if (run.phase) row["phase"] = to_string(*run.phase);
    runs.push_back(std::move(row));
  }
  json variants = json::array();
  for (const VariantOutcome& variant : experiment.variants) {
    json row = {{"name", variant.name},
                {"target", variant.target},
                {"rounds", variant.rounds},
                {"metrics", variant.metrics}};
    if (variant.result) row["result"] = *variant.result;
    json usage = json::object();
    add_usage(usage, variant.usage);
    if (!usage.empty()) row["usage"] = std::move(usage);
    variants.push_back(std::move(row));
  }
  json differences = json::array();
  for (const MetricDifference& d : experiment.differences) {
    json row = {{"variant", d.variant}, {"reference", d.reference},
                {"metric", d.metric},   {"mean", d.mean},
                {"low", d.low},         {"high", d.high}};
    if (d.relative_percent) row["relativePercent"] = *d.relative_percent;
    differences.push_back(std::move(row));
  }
  json comparisons = json::array();
  for (const ComparisonRow& c : experiment.comparisons) {
    json row = {{"expression", c.expression}, {"outcome", c.outcome}, {"message", c.message}};
    if (c.mean) row["mean"] = *c.mean;
    if (c.low) row["low"] = *c.low;
    if (c.high) row["high"] = *c.high;
    if (c.rounds_needed) row["roundsNeeded"] = *c.rounds_needed;
    comparisons.push_back(std::move(row));
  }
  return {{"rounds", experiment.rounds},
          {"completedRounds", experiment.completed_rounds},
          {"runs", std::move(runs)},
          {"variants", std::move(variants)},
          {"differences", std::move(differences)},
          {"comparisons", std::move(comparisons)}};
}
ExperimentStatus experiment_status(const json& in) {
  ExperimentStatus out;
  out.rounds = count(member(in, "rounds")).value_or(0);
  out.completed_rounds = count(member(in, "completedRounds")).value_or(0);
  out.runs = list_of<ExperimentRun>(member(in, "runs"), [](const json& row) {
    return ExperimentRun{count(member(row, "round")).value_or(0), text(member(row, "variant")),
                         text(member(row, "loadTest")), parse_phase(text(member(row, "phase"))),
                         number_map(member(row, "metrics"))};
  });
  out.variants = list_of<VariantOutcome>(member(in, "variants"), [](const json& row) {
    VariantOutcome variant;
    variant.name = text(member(row, "name"));
    variant.target = text(member(row, "target"));
    variant.rounds = count(member(row, "rounds")).value_or(0);
    if (const json& result = member(row, "result"); result.is_object()) variant.result = result;
    variant.metrics = number_map(member(row, "metrics"));
    variant.usage = usage_figures(member(row, "usage"));
    return variant;
  });
  out.differences = list_of<MetricDifference>(member(in, "differences"), [](const json& row) {
    return MetricDifference{text(member(row, "variant")),
                            text(member(row, "reference")),
                            text(member(row, "metric")),
                            number(member(row, "mean")).value_or(0),
                            number(member(row, "low")).value_or(0),
                            number(member(row, "high")).value_or(0),
                            number(member(row, "relativePercent"))};
  });
  out.comparisons = list_of<ComparisonRow>(member(in, "comparisons"), [](const json& row) {
    return ComparisonRow{text(member(row, "expression")), text(member(row, "outcome")),
                         number(member(row, "mean")),     number(member(row, "low")),
                         number(member(row, "high")),     count(member(row, "roundsNeeded")),
                         text(member(row, "message"))};
  });
  return out;
}

json to_json(const SearchStatus& search) {
  json steps = json::array();
  for (const SearchStep& step : search.steps) {
    json row = {{"step", step.step},
                {"value", step.value},
                {"loadTest", step.load_test},
                {"metrics", step.metrics},
                {"failed", step.failed}};
    if (step.phase) row["phase"] = to_string(*step.phase);
    if (step.verdict) row["verdict"] = to_string(*step.verdict);
    if (step.cpu_cores) row["cpuCores"] = *step.cpu_cores;
    steps.push_back(std::move(row));
  }
  json out = {{"over", search.over}, {"steps", std::move(steps)}};
  if (search.highest_passing) out["highestPassing"] = *search.highest_passing;
  if (search.first_failing) out["firstFailing"] = *search.first_failing;
  if (search.limit) {
    out["limit"] = *search.limit;
    out["limitBy"] = search.limit_by;
  }
  return out;
}
SearchStatus search_status(const json& in) {
  SearchStatus out;
  out.over = text(member(in, "over"));
  out.steps = list_of<SearchStep>(member(in, "steps"), [](const json& row) {
    SearchStep step;
    step.step = count(member(row, "step")).value_or(0);
    step.value = number(member(row, "value")).value_or(0);
    step.load_test = text(member(row, "loadTest"));
    step.phase = parse_phase(text(member(row, "phase")));
    step.verdict = parse_verdict(text(member(row, "verdict")));
    step.metrics = number_map(member(row, "metrics"));
    step.cpu_cores = number(member(row, "cpuCores"));
    if (const json& failed = member(row, "failed"); failed.is_array()) {
      for (const json& item : failed) {
        if (item.is_string()) step.failed.push_back(item.get<std::string>());
      }
    }
    return step;
  });
  out.highest_passing = number(member(in, "highestPassing"));
  out.first_failing = number(member(in, "firstFailing"));
  out.limit = number(member(in, "limit"));
  out.limit_by = text(member(in, "limitBy"));
  return out;
}

}  // namespace

Time whole_seconds(Time time) {
  return std::chrono::floor<std::chrono::seconds>(time);
}

std::optional<Time> lenient::time_of(const json& value) {
  if (!value.is_string()) return std::nullopt;
  const std::optional<Time> parsed = rfc3339::parse(value.get_ref<const std::string&>());
  if (!parsed) return std::nullopt;
  return whole_seconds(*parsed);
}

std::string to_string(const SharedRun& run) {
  return run.namespace_ + "/" + run.name;
}

const Condition* find_condition(const std::vector<Condition>& conditions, ConditionType type) {
  for (const Condition& condition : conditions) {
    if (condition.type == to_string(type)) return &condition;
  }
  return nullptr;
}

std::optional<double> ResultFigures::metric(const std::string& name) const {
  if (name == "rps") return rps;
  if (name == "errorRate") return error_rate;
  const auto it = latency_ms.find(name);
  if (it == latency_ms.end()) return std::nullopt;
  return it->second;
}

ResultFigures result_figures(const LoadTestStatus& status) {
  ResultFigures figures;
  if (status.result) {
    const json& result = *status.result;
    figures.rps = number(member(result, "rps"));
    figures.error_rate = number(member(result, "errorRate"));
    figures.duration_seconds = number(member(result, "durationSeconds"));
    figures.requests = count(member(result, "requests"));
    figures.failures = count(member(result, "failures"));
    if (const json& codes = member(result, "statusCodes"); codes.is_object()) {
      for (const auto& [code, n] : codes.items()) {
        figures.complete_responses += count(n).value_or(0);
      }
    }
    if (const json& latency = member(result, "latencyMs"); latency.is_object()) {
      for (const auto& [key, value] : latency.items()) {
        if (value.is_number()) figures.latency_ms.emplace(key, value.get<double>());
      }
    }
  }
  if (status.stages && status.stages->is_array()) {
    for (const json& stage : *status.stages) {
      figures.stage_planned_seconds.push_back(number(member(stage, "plannedDurationSeconds")));
    }
  }
  return figures;
}

namespace {

std::map<std::string, double> numbers_of(const json& summary) {
  std::map<std::string, double> out;
  if (!summary.is_object()) return out;
  for (const auto& [key, value] : summary.items()) {
    if (value.is_number()) out.emplace(key, value.get<double>());
  }
  return out;
}

ResultRow row_of(const json& in) {
  ResultRow row;
  row.encoded = in;
  row.histograms = in.is_object() && in.contains("histogram");
  if (const json& codes = member(in, "statusCodes"); codes.is_object()) {
    for (const auto& [code, n] : codes.items()) row.complete_responses += count(n).value_or(0);
  }
  row.latency_ms = numbers_of(member(in, "latencyMs"));
  row.waiting_ms = numbers_of(member(in, "waitingMs"));
  row.connect_ms = numbers_of(member(in, "connectMs"));
  row.index = count(member(in, "index")).value_or(0);
  if (const json& connections = member(in, "connections"); connections.is_number()) {
    row.connections = count(connections).value_or(0);
  }
  row.target_rate = number(member(in, "targetRate"));
  row.planned_duration_seconds = number(member(in, "plannedDurationSeconds")).value_or(0);
  row.name = text(member(in, "name"));
  return row;
}

std::vector<ResultRow> rows_of(const std::optional<json>& rows) {
  std::vector<ResultRow> out;
  if (!rows || !rows->is_array()) return out;
  for (const json& item : *rows) out.push_back(row_of(item));
  return out;
}

}  // namespace

std::optional<ResultRow> result_row(const LoadTestStatus& status) {
  if (!status.result) return std::nullopt;
  return row_of(*status.result);
}
std::vector<ResultRow> stage_rows(const LoadTestStatus& status) {
  return rows_of(status.stages);
}
std::vector<ResultRow> request_rows(const LoadTestStatus& status) {
  return rows_of(status.request_results);
}
std::vector<ScenarioResultRow> scenario_rows(const LoadTestStatus& status) {
  std::vector<ScenarioResultRow> out;
  if (!status.scenario_results || !status.scenario_results->is_array()) return out;
  for (const json& item : *status.scenario_results) {
    ScenarioResultRow row;
    row.name = text(member(item, "name"));
    row.iterations = count(member(item, "iterations")).value_or(0);
    row.failed_iterations = count(member(item, "failedIterations")).value_or(0);
    row.duration_ms = numbers_of(member(item, "durationMs"));
    out.push_back(std::move(row));
  }
  return out;
}

StatusSpelling status_spelling(const json& loadtest) {
  const json& status = member(loadtest, "status");
  return {text(member(status, "phase")), text(member(status, "verdict"))};
}

// ---- public to_json / from_json

void to_json(json& out, const ObjectMeta& meta) {
  out = json::object();
  out["name"] = meta.name;
  if (!meta.generate_name.empty()) out["generateName"] = meta.generate_name;
  if (!meta.namespace_.empty()) out["namespace"] = meta.namespace_;
  if (!meta.uid.empty()) out["uid"] = meta.uid;
  if (!meta.resource_version.empty()) out["resourceVersion"] = meta.resource_version;
  if (meta.generation != 0) out["generation"] = meta.generation;
  if (meta.creation_timestamp) out["creationTimestamp"] = rfc3339::format(*meta.creation_timestamp);
  if (meta.deleting) out["deletionTimestamp"] = rfc3339::format(Time{});
  if (!meta.labels.empty()) out["labels"] = meta.labels;
  if (!meta.annotations.empty()) out["annotations"] = meta.annotations;
}
void from_json(const json& in, ObjectMeta& meta) {
  meta = ObjectMeta{};
  meta.name = text(member(in, "name"));
  meta.generate_name = text(member(in, "generateName"));
  meta.namespace_ = text(member(in, "namespace"));
  meta.uid = text(member(in, "uid"));
  meta.resource_version = text(member(in, "resourceVersion"));
  meta.generation = integer(member(in, "generation")).value_or(0);
  meta.creation_timestamp = time_of(member(in, "creationTimestamp"));
  meta.deleting = !member(in, "deletionTimestamp").is_null();
  meta.labels = string_map(member(in, "labels"));
  meta.annotations = string_map(member(in, "annotations"));
}

void to_json(json& out, const Condition& condition) {
  out = {{"type", condition.type},
         {"status", to_string(condition.status)},
         {"reason", condition.reason},
         {"message", condition.message},
         {"lastTransitionTime", rfc3339::format(condition.last_transition_time)},
         {"observedGeneration", condition.observed_generation}};
}
void from_json(const json& in, Condition& condition) {
  condition.type = text(member(in, "type"));
  condition.status =
      parse_condition_status(text(member(in, "status"))).value_or(ConditionStatus::Unknown);
  condition.reason = text(member(in, "reason"));
  condition.message = text(member(in, "message"));
  condition.last_transition_time = time_of(member(in, "lastTransitionTime")).value_or(Time{});
  condition.observed_generation = integer(member(in, "observedGeneration")).value_or(0);
}

void to_json(json& out, const LoadTestStatus& status) {
  out = json::object();
  out["observedGeneration"] = status.observed_generation;
  if (status.phase) {
    out["phase"] = to_string(*status.phase);
    out["reason"] = status.reason;
    out["message"] = status.message;
  }
  if (status.verdict) out["verdict"] = to_string(*status.verdict);
  if (status.start_time) out["startTime"] = rfc3339::format(*status.start_time);
  if (status.completion_time) out["completionTime"] = rfc3339::format(*status.completion_time);
  if (status.progress) out["progress"] = *status.progress;
  if (status.error_percent) out["errorPercent"] = *status.error_percent;
  if (status.workers) out["workers"] = to_json(*status.workers);
  if (status.result) out["result"] = *status.result;
  if (status.experiment) out["experiment"] = to_json(*status.experiment);
  if (status.search) out["search"] = to_json(*status.search);
  if (status.stages) out["stages"] = *status.stages;
  if (status.request_results) out["requestResults"] = *status.request_results;
  if (status.scenario_results) out["scenarioResults"] = *status.scenario_results;
  if (status.target) out["target"] = to_json(*status.target);
  if (!status.thresholds.empty()) {
    json rows = json::array();
    for (const ThresholdRow& row : status.thresholds) rows.push_back(to_json(row));
    out["thresholds"] = std::move(rows);
  }
  if (status.baseline) out["baseline"] = to_json(*status.baseline);
  if (status.result_record) out["resultRecord"] = *status.result_record;
  if (status.phase || !status.conditions.empty()) out["conditions"] = status.conditions;
}
void from_json(const json& in, LoadTestStatus& status) {
  status = LoadTestStatus{};
  status.observed_generation = integer(member(in, "observedGeneration")).value_or(0);
  status.phase = parse_phase(text(member(in, "phase")));
  status.verdict = parse_verdict(text(member(in, "verdict")));
  status.reason = text(member(in, "reason"));
  status.message = text(member(in, "message"));
  status.start_time = time_of(member(in, "startTime"));
  status.completion_time = time_of(member(in, "completionTime"));
  status.progress = optional_text(member(in, "progress"));
  status.error_percent = number(member(in, "errorPercent"));
  if (const json& workers = member(in, "workers"); workers.is_object()) {
    status.workers = worker_counts(workers);
  }
  if (const json& result = member(in, "result"); result.is_object()) status.result = result;
  if (const json& stages = member(in, "stages"); stages.is_array()) status.stages = stages;
  if (const json& rows = member(in, "requestResults"); rows.is_array()) {
    status.request_results = rows;
  }
  if (const json& rows = member(in, "scenarioResults"); rows.is_array()) {
    status.scenario_results = rows;
  }
  if (const json& target = member(in, "target"); target.is_object()) {
    status.target = target_usage(target);
  }
  status.thresholds = list_of<ThresholdRow>(member(in, "thresholds"), threshold_row);
  if (const json& baseline = member(in, "baseline"); baseline.is_object()) {
    status.baseline = baseline_outcome(baseline);
  }
  if (const json& experiment = member(in, "experiment"); experiment.is_object()) {
    status.experiment = experiment_status(experiment);
  }
  if (const json& search = member(in, "search"); search.is_object()) {
    status.search = search_status(search);
  }
  status.result_record = optional_text(member(in, "resultRecord"));
  status.conditions = list_of<Condition>(member(in, "conditions"),
                                         [](const json& item) { return item.get<Condition>(); });
}

void to_json(json& out, const LoadTest& loadtest) {
  out = {{"apiVersion", kApiVersion},
         {"kind", kKind},
         {"metadata", loadtest.metadata},
         {"spec", loadtest.spec.is_null() ? json::object() : loadtest.spec},
         {"status", loadtest.status}};
}
void from_json(const json& in, LoadTest& loadtest) {
  loadtest.metadata = member(in, "metadata").get<ObjectMeta>();
  loadtest.spec = member(in, "spec");
  loadtest.status = member(in, "status").get<LoadTestStatus>();
}

}  // namespace kubeload::api
