// The pure parts of `kubectl kubeload run`: the object to create from a
// manifest, when a run is finished, and what its status means for the exit.

#include <cmath>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "kubeload/api/status.hpp"
#include "kubeload/duration.hpp"
#include "kubeload/json_access.hpp"
#include "kubeload/names.hpp"
#include "plugin/cli.hpp"
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

bool is_finished(const json& loadtest) {
  const json& status = member(loadtest, "status");
  if (!api::is_final_phase(text(member(status, "phase")))) return false;
  const json& generation = member(member(loadtest, "metadata"), "generation");
  const json& observed = member(status, "observedGeneration");
  // A final phase written for an older generation describes another spec.
  if (generation.is_number_integer()) {
    return observed.is_number_integer() && observed.get<int64_t>() >= generation.get<int64_t>();
  }
  return true;
}

Outcome outcome_of(const json& loadtest) {
  const json& status = member(loadtest, "status");
  const std::string phase = text(member(status, "phase"));
  const std::string verdict = text(member(status, "verdict"));
  const std::string reason = text(member(status, "reason"));
  const std::string message = text(member(status, "message"));
  const std::string why = reason + (message.empty() ? "" : ": " + message);
  if (!is_finished(loadtest)) {
    return {kExitError,
            "the run has not finished (phase " + (phase.empty() ? "none" : phase) + ")"};
  }
  if (api::parse_phase(phase) == api::Phase::Failed) return {kExitError, "the run failed: " + why};
  const json& thresholds = member(status, "thresholds");
  bool threshold_missed = false;
  if (thresholds.is_array()) {
    for (const json& t : thresholds) {
      if (member(t, "passed") != json(true)) threshold_missed = true;
    }
  }
  const bool baseline_missed = member(status, "baseline").is_object() &&
                               member(member(status, "baseline"), "passed") != json(true);
  const std::optional<api::Verdict> read_verdict = api::parse_verdict(verdict);
  if (read_verdict == api::Verdict::Fail) return {kExitGateFailed, "verdict Fail: " + message};
  if (read_verdict == api::Verdict::Pass) {
    if (threshold_missed || baseline_missed) {
      return {kExitError,
              "the status says Pass but lists a missed threshold or baseline: not trusted"};
    }
    return {kExitPass, "verdict Pass: " + message};
  }
  if (read_verdict == api::Verdict::None) {
    if (gated(member(loadtest, "spec"))) {
      return {kExitError, "the spec has a gate but the status has no verdict: not trusted"};
    }
    return {kExitPass, "no gate (no thresholds or baseline): the run finished"};
  }
  return {kExitError, "unknown verdict \"" + verdict + "\""};
}

std::string progress_line(const json& loadtest) {
  const json& status = member(loadtest, "status");
  std::string line = text(member(status, "phase"));
  if (line.empty()) return "waiting for the operator to pick it up";
  if (const std::string progress = text(member(status, "progress")); !progress.empty()) {
    line += " " + progress;
  }
  const json& workers = member(status, "workers");
  if (workers.is_object()) {
    line += ", " + std::to_string(count(member(workers, "ready")).value_or(0)) + "/" +
            std::to_string(count(member(workers, "desired")).value_or(0)) + " workers ready";
  }
  const json& result = member(status, "result");
  if (result.is_object()) {
    const json& requests = member(result, "requests");
    const json& rps = member(result, "rps");
    const json& p99 = member(member(result, "latencyMs"), "p99");
    const json& error_rate = member(result, "errorRate");
    if (const std::optional<uint64_t> n = count(requests)) {
      line += ", " + loadgen::report::grouped(*n) + " requests";
    }
    if (rps.is_number()) line += ", " + loadgen::report::grouped_fixed(rps.get<double>(), 1) + "/s";
    if (p99.is_number()) line += ", p99 " + loadgen::report::fixed(p99.get<double>(), 3) + " ms";
    if (error_rate.is_number()) {
      line += ", " + loadgen::report::fixed(error_rate.get<double>() * 100.0, 2) + "% errors";
    }
  }
  const std::string phase = text(member(status, "phase"));
  if (const std::string message = text(member(status, "message"));
      !message.empty() && phase != "Running") {
    line += " (" + message + ")";
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
    if (!is_label_value(test)) {
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
