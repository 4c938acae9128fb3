// The pure parts of `kubectl kubeload run`: the object to create from a
// manifest, when a run is finished, and what its status means for the exit.

#include <algorithm>
#include <cmath>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/api/status.hpp"
#include "kubeload/duration.hpp"
#include "kubeload/json_access.hpp"
#include "kubeload/names.hpp"
#include "plugin/cli.hpp"
#include "reports/gate_report.hpp"
#include "reports/report_writers.hpp"

namespace kubeload::plugin {
namespace {

using json_access::count;
using json_access::member;
using json_access::text;
using nlohmann::json;

// The API server appends 5 random characters to generateName and cuts the
// base so the name fits 63 characters.
constexpr size_t kMaxGenerateNameBase = 58;

// YAML as Kubernetes reads it (sigs.k8s.io/yaml): plain scalars that look
// like null, booleans or numbers become those; quoted scalars stay strings.
json to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const YAML::Node& item : node) out.push_back(to_json(item));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& item : node) out[item.first.as<std::string>()] = to_json(item.second);
      return out;
    }
    case YAML::NodeType::Scalar:
      break;
  }
  const std::string value = node.Scalar();
  if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str") return value;
  if (value == "~" || value == "null" || value == "Null" || value == "NULL") return nullptr;
  if (value == "true" || value == "True" || value == "TRUE") return true;
  if (value == "false" || value == "False" || value == "FALSE") return false;
  if (!value.empty() && value.find_first_not_of("+-0123456789") == std::string::npos) {
    try {
      size_t used = 0;
      const long long integer = std::stoll(value, &used);
      if (used == value.size()) return integer;
    } catch (const std::exception&) {
      // too large for int64: keep the text
    }
  }
  if (!value.empty() && value.find_first_not_of("+-0123456789.eE") == std::string::npos &&
      value.find_first_of("0123456789") != std::string::npos) {
    try {
      size_t used = 0;
      const double real = std::stod(value, &used);
      if (used == value.size() && std::isfinite(real)) return real;
    } catch (const std::exception&) {
      // not a number after all
    }
  }
  return value;
}

bool gated(const json& spec) {
  const json& thresholds = member(spec, "thresholds");
  return (thresholds.is_array() && !thresholds.empty()) || member(spec, "baseline").is_object();
}

}  // namespace

namespace {

// A final phase written for an older generation describes another spec.
bool is_finished(const api::LoadTest& loadtest) {
  if (!loadtest.status.final()) return false;
  return loadtest.metadata.generation == 0 ||
         loadtest.status.observed_generation >= loadtest.metadata.generation;
}

}  // namespace

bool is_finished(const json& loadtest) {
  return is_finished(loadtest.get<api::LoadTest>());
}

namespace {

// The outcome of a run that Succeeded: its verdict, checked against its
// thresholds and spec.
Outcome succeeded_outcome(const api::LoadTest& object, const api::StatusSpelling& spelled) {
  const api::LoadTestStatus& status = object.status;
  const bool threshold_missed =
      std::any_of(status.thresholds.begin(), status.thresholds.end(),
                  [](const api::ThresholdRow& row) { return !row.passed; });
  const bool baseline_missed = status.baseline && !status.baseline->passed;
  if (status.verdict == api::Verdict::Fail) {
    return {kExitGateFailed, "verdict Fail: " + status.message};
  }
  if (status.verdict == api::Verdict::Pass) {
    if (threshold_missed || baseline_missed) {
      return {kExitError,
              "the status says Pass but lists a missed threshold or baseline: not trusted"};
    }
    return {kExitPass, "verdict Pass: " + status.message};
  }
  if (status.verdict == api::Verdict::None) {
    if (gated(object.spec)) {
      return {kExitError, "the spec has a gate but the status has no verdict: not trusted"};
    }
    return {kExitPass, "no gate (no thresholds or baseline): the run finished"};
  }
  return {kExitError, "unknown verdict \"" + spelled.verdict + "\""};
}

}  // namespace

Outcome outcome_of(const json& loadtest) {
  const api::LoadTest object = loadtest.get<api::LoadTest>();
  const api::LoadTestStatus& status = object.status;
  const api::StatusSpelling spelled = api::status_spelling(loadtest);
  const std::string why = status.reason + (status.message.empty() ? "" : ": " + status.message);
  if (!is_finished(object)) {
    return {kExitError, "the run has not finished (phase " +
                            (spelled.phase.empty() ? "none" : spelled.phase) + ")"};
  }
  if (status.phase == api::Phase::Failed) return {kExitError, "the run failed: " + why};
  Outcome outcome = succeeded_outcome(object, spelled);
  // Said beside the verdict, never instead of it: a shared run is not a failed one.
  std::vector<std::string> shared_with;
  if (status.target) {
    for (const api::SharedRun& run : status.target->shared_with) {
      shared_with.push_back(api::to_string(run));
    }
  }
  if (const std::string note = loadgen::shared_target_note(shared_with); !note.empty()) {
    outcome.summary += ". " + note;
  }
  // Said the same way: a saturated generator's Pass is still a Pass, but its
  // numbers are the generator's.
  if (const api::Condition* saturated =
          api::find_condition(status.conditions, api::ConditionType::GeneratorSaturated);
      saturated != nullptr && saturated->status == api::ConditionStatus::True) {
    outcome.summary += ". " + loadgen::generator_saturated_note(saturated->message);
  }
  return outcome;
}

std::string progress_line(const json& loadtest) {
  const api::LoadTestStatus status = loadtest.get<api::LoadTest>().status;
  std::string line = api::status_spelling(loadtest).phase;
  if (line.empty()) return "waiting for the operator to pick it up";
  if (status.progress && !status.progress->empty()) line += " " + *status.progress;
  if (status.workers) {
    line += ", " + std::to_string(status.workers->ready) + "/" +
            std::to_string(status.workers->desired) + " workers ready";
  }
  if (status.result) {
    const api::ResultFigures figures = api::result_figures(status);
    if (figures.requests) line += ", " + loadgen::report::grouped(*figures.requests) + " requests";
    if (figures.rps) line += ", " + loadgen::report::grouped_fixed(*figures.rps, 1) + "/s";
    if (const std::optional<double> p99 = figures.metric("p99")) {
      line += ", p99 " + loadgen::report::fixed(*p99, 3) + " ms";
    }
    if (figures.error_rate) {
      line += ", " + loadgen::report::fixed(*figures.error_rate * 100.0, 2) + "% errors";
    }
  }
  if (!status.message.empty() && status.phase != api::Phase::Running) {
    line += " (" + status.message + ")";
  }
  return line;
}

RunObject run_object_from_manifest(const std::string& manifest_text, const std::string& source,
                                   const std::string& namespace_flag,
                                   const std::string& default_namespace) {
  // The operator's own parser first: it holds the size and YAML-bomb limits
  // and names every invalid field before anything reaches the cluster.
  ParsedLoadTest parsed = parse_loadtest(manifest_text);
  if (!parsed.ok()) {
    std::string message = source + ": not a valid LoadTest:";
    for (const FieldError& error : parsed.errors) message += "\n  " + error.to_string();
    throw UsageError(message);
  }
  json object;
  try {
    const std::vector<YAML::Node> documents = YAML::LoadAll(manifest_text);
    size_t non_empty = 0;
    for (const YAML::Node& document : documents) {
      if (document.IsNull()) continue;
      ++non_empty;
      object = to_json(document);
    }
    if (non_empty != 1) {
      throw UsageError(source + ": holds " + std::to_string(non_empty) +
                       " documents; give one LoadTest per file");
    }
  } catch (const YAML::Exception& e) {
    throw UsageError(source + ": " + e.what());
  }
  if (text(member(object, "kind")) != "LoadTest") {
    throw UsageError(source + ": kind is \"" + text(member(object, "kind")) + "\", not LoadTest");
  }

  json& metadata = object["metadata"];
  std::string name = text(member(metadata, "name"));
  if (name.empty()) {
    name = text(member(metadata, "generateName"));
    while (!name.empty() && name.back() == '-') name.pop_back();
  }
  if (name.empty()) {
    throw UsageError(source +
                     ": metadata.name is required (the runs are named after it and it is the "
                     "test's label when kubeload.dev/test is not set)");
  }
  std::string test = text(member(member(metadata, "labels"), kTestLabel));
  if (test.empty()) {
    test = name;
    if (!kubeload::is_label_value(test)) {
      throw UsageError(source + ": metadata.name \"" + name +
                       "\" cannot be the kubeload.dev/test label (63 characters at most); set "
                       "the label");
    }
    metadata["labels"][std::string(kTestLabel)] = test;
  }

  const std::string manifest_namespace = text(member(metadata, "namespace"));
  std::string ns = default_namespace;
  if (!namespace_flag.empty()) {
    if (!manifest_namespace.empty() && manifest_namespace != namespace_flag) {
      throw UsageError(source + ": the manifest's namespace \"" + manifest_namespace +
                       "\" does not match --namespace \"" + namespace_flag + "\"");
    }
    ns = namespace_flag;
  } else if (!manifest_namespace.empty()) {
    ns = manifest_namespace;
  }
  if (ns.empty()) ns = "default";

  std::string base = name.substr(0, std::min(name.size(), kMaxGenerateNameBase));
  while (!base.empty() && (base.back() == '-' || base.back() == '.')) base.pop_back();
  for (const char* field : {"name", "resourceVersion", "uid", "creationTimestamp", "generation",
                            "managedFields", "selfLink", "deletionTimestamp"}) {
    metadata.erase(field);
  }
  if (metadata.contains("annotations") && metadata["annotations"].is_object()) {
    metadata["annotations"].erase("kubectl.kubernetes.io/last-applied-configuration");
    if (metadata["annotations"].empty()) metadata.erase("annotations");
  }
  metadata["generateName"] = base + "-";
  metadata["namespace"] = ns;
  object.erase("status");
  parsed.spec.namespace_ = ns;
  return RunObject{std::move(object), ns, test, std::move(parsed.spec)};
}

std::chrono::nanoseconds default_wait_timeout(const LoadTestSpec& spec) {
  using std::chrono::nanoseconds;
  const LoadSpec& load = spec.load;
  nanoseconds planned{0};
  if (!load.stages.empty()) {
    for (const StageSpec& stage : load.stages) planned += stage.duration;
  } else if (load.duration) {
    planned = *load.duration;
  } else {
    return std::chrono::hours(1);
  }
  return spec.start_timeout + load.warmup.value_or(nanoseconds(0)) + planned +
         std::chrono::minutes(5);
}

}  // namespace kubeload::plugin
