#include "operator/target_usage.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "kubeload/json_access.hpp"
#include "kubeload/text.hpp"
#include "operator/status.hpp"

namespace kubeload::controller {

using json = nlohmann::json;
using api::ConditionStatus;
using api::name;
using api::Reason;
using json_access::find_condition;
using json_access::member;
using json_access::text;
using std::chrono::milliseconds;

namespace {

const std::string kTrue = name(ConditionStatus::True);
const std::string kFalse = name(ConditionStatus::False);
const std::string kUnknown = name(ConditionStatus::Unknown);

Timestamp::duration seconds_as_duration(double seconds) {
  return std::chrono::duration_cast<Timestamp::duration>(std::chrono::duration<double>(seconds));
}

// A string literal of PromQL (double-quoted, backslash escapes).
std::string promql_string(std::string_view value) {
  std::string out = "\"";
  for (const char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A literal text as an RE2 pattern.
std::string regex_literal(std::string_view value) {
  std::string out;
  for (const char c : value) {
    if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string promql_duration(Timestamp::duration length) {
  return std::to_string(
             std::max<int64_t>(1, std::chrono::duration_cast<milliseconds>(length).count())) +
         "ms";
}

// To `decimals` places (dividing by a power of ten keeps 0.7 from reading 0.7000000000000001).
double rounded(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

json usage_json(const Usage& usage) {
  json out = json::object();
  json cpu = json::object();
  if (usage.cpu_mean) cpu["mean"] = rounded(*usage.cpu_mean, 4);
  if (usage.cpu_max) cpu["max"] = rounded(*usage.cpu_max, 4);
  if (!cpu.empty()) out["cpuCores"] = std::move(cpu);
  if (usage.memory_max_bytes) {
    out["memoryBytes"] = {{"max", static_cast<int64_t>(std::llround(*usage.memory_max_bytes))}};
  }
  if (usage.restarts) out["restarts"] = *usage.restarts;
  return out;
}

json window_json(const UsageWindow& window) {
  return {{"start", format_time(window.start)}, {"end", format_time(window.end)}};
}

std::string measured_message(const TargetMeasurement& measured, const RunWindows& windows) {
  const Usage& usage = measured.run;
  std::string out =
      std::to_string(measured.pods.size()) + (measured.pods.size() == 1 ? " pod" : " pods") + " (" +
      measured.selector + ") over " +
      fixed(std::chrono::duration<double>(windows.run.end - windows.run.start).count(), 1) + "s: ";
  std::vector<std::string> parts;
  if (usage.cpu_mean) parts.push_back("CPU " + fixed(*usage.cpu_mean, 3) + " cores mean");
  if (usage.cpu_max) parts.push_back(fixed(*usage.cpu_max, 3) + " max");
  if (usage.memory_max_bytes) {
    parts.push_back("RSS " + fixed(*usage.memory_max_bytes / (1024.0 * 1024.0), 1) + " MiB max");
  }
  if (usage.restarts) parts.push_back(std::to_string(*usage.restarts) + " restarts");
  for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : ", ") + parts[i];
  return out;
}

void set_condition(json& status, const json& current, const std::string& value,
                   const std::string& reason, const std::string& message, Timestamp now) {
  const json& generation = member(status, "observedGeneration");
  json made =
      condition(kTargetMetricsCondition, value, reason, message,
                generation.is_number_integer() ? generation.get<int64_t>() : 0, current, now);
  json& conditions = status["conditions"];
  if (!conditions.is_array()) conditions = json::array();
  for (json& existing : conditions) {
    if (text(member(existing, "type")) == kTargetMetricsCondition) {
      existing = std::move(made);
      return;
    }
  }
  conditions.push_back(std::move(made));
}

}  // namespace

std::optional<RunWindows> run_windows(const json& status, const LoadTestSpec& spec) {
  const std::optional<Timestamp> started = parse_time(text(member(status, "startTime")));
  const json& duration = member(member(status, "result"), "durationSeconds");
  if (!started || !duration.is_number() || !(duration.get<double>() > 0)) return std::nullopt;
  RunWindows windows;
  if (!spec.load.warmup && spec.load.warmup_requests.value_or(0) > 0) {
    // How long the warm-up took is not recorded: the window is the whole
    // run, warm-up included, up to the final status.
    const std::optional<Timestamp> done = parse_time(text(member(status, "completionTime")));
    if (!done || *done <= *started) return std::nullopt;
    windows.run = {*started, *done};
    windows.includes_warmup = true;
    return windows;
  }
  Timestamp from = *started;
  if (spec.load.warmup) from += std::chrono::duration_cast<Timestamp::duration>(*spec.load.warmup);
  windows.run = {from, from + seconds_as_duration(duration.get<double>())};
  const json& stages = member(status, "stages");
  if (!stages.is_array()) return windows;
  Timestamp stage_start = from;
  for (const json& stage : stages) {
    const json& planned = member(stage, "plannedDurationSeconds");
    if (!planned.is_number() || !(planned.get<double>() > 0)) {
      windows.stages.clear();
      break;
    }
    const Timestamp stage_end = stage_start + seconds_as_duration(planned.get<double>());
    windows.stages.push_back({stage_start, stage_end});
    stage_start = stage_end;
  }
  return windows;
}

std::string container_matcher(const std::string& namespace_, const std::vector<std::string>& pods) {
  std::string names;
  for (const std::string& pod : pods) names += (names.empty() ? "" : "|") + regex_literal(pod);
  return "namespace=" + promql_string(namespace_) + ",pod=~" + promql_string(names) +
         ",container!=\"\",container!=\"POD\"";
}

UsageQueries usage_queries(const std::string& matcher, const UsageWindow& window,
                           std::chrono::seconds scrape_interval) {
  const Timestamp::duration length = window.end - window.start;
  const Timestamp::duration rate_window = 4 * scrape_interval;
  const std::string cpu = "container_cpu_usage_seconds_total{" + matcher + "}";
  UsageQueries queries;
  queries.at = window.end;
  queries.cpu_mean = "sum(rate(" + cpu + "[" + promql_duration(length) + "]))";
  // Steps whose rate range lies inside the window: (end - (length - rate_window), end].
  if (length - rate_window >= scrape_interval) {
    queries.cpu_max = "max_over_time(sum(rate(" + cpu + "[" + promql_duration(rate_window) +
                      "]))[" + promql_duration(length - rate_window) + ":" +
                      promql_duration(scrape_interval) + "])";
  }
  queries.memory_max = "max_over_time(sum(container_memory_rss{" + matcher + "})[" +
                       promql_duration(length) + ":" + promql_duration(scrape_interval) + "])";
  queries.restarts = "count(max_over_time(container_start_time_seconds{" + matcher + "}[" +
                     promql_duration(length) + "]) > " + unix_seconds(window.start) + ")";
  return queries;
}

json target_status(const TargetMeasurement& measured, const RunWindows& windows) {
  json out = usage_json(measured.run);
  out["namespace"] = measured.namespace_;
  out["selector"] = measured.selector;
  out["pods"] = measured.pods.size();
  out["window"] = window_json(windows.run);
  if (windows.includes_warmup) out["window"]["includesWarmup"] = true;
  if (!measured.stages.empty()) {
    json stages = json::array();
    for (size_t i = 0; i < measured.stages.size() && i < windows.stages.size(); ++i) {
      json row = usage_json(measured.stages[i]);
      row["index"] = i;
      row["window"] = window_json(windows.stages[i]);
      stages.push_back(std::move(row));
    }
    out["stages"] = std::move(stages);
  }
  return out;
}

TargetUsageStep plan_target_usage(const json& current, json& status, const ParsedLoadTest& parsed,
                                  const OperatorConfig& config,
                                  const std::optional<TargetMeasurement>& measured, Timestamp now) {
  TargetUsageStep step;
  const std::string phase = text(member(status, "phase"));
  if (!api::is_final_phase(phase)) return step;

  // Measured (or known not to be) once: kept, like the rest of a final status.
  if (const json* kept = find_condition(member(current, "conditions"), kTargetMetricsCondition)) {
    const std::string value = text(member(*kept, "status"));
    if (value == kTrue || value == kFalse) {
      if (current.contains("target")) status["target"] = current["target"];
      set_condition(status, current, value, text(member(*kept, "reason")),
                    text(member(*kept, "message")), now);
      return step;
    }
  }
  const auto not_measured = [&](const std::string& reason, const std::string& message) {
    set_condition(status, current, kFalse, reason, message, now);
    return step;
  };
  if (config.prometheus_url.empty()) {
    return not_measured(name(Reason::PrometheusNotConfigured),
                        "kubeload-operator runs without --prometheus-url: the target's CPU and "
                        "memory are not read");
  }
  const std::optional<RunWindows> windows = run_windows(status, parsed.spec);
  if (!parsed.ok() || !windows) {
    return not_measured(name(Reason::NothingMeasured),
                        "the run measured nothing: there is no window to read "
                        "the target's resource use over");
  }
  const LoadTestSpec& spec = parsed.spec;
  TargetRequest request;
  request.namespace_ = spec.namespace_;
  request.windows = *windows;
  if (spec.pod_selector) {
    request.selector = to_string(*spec.pod_selector);
  } else if (spec.service) {
    if (!spec.service->namespace_.empty() && spec.service->namespace_ != spec.namespace_) {
      return not_measured(name(Reason::TargetInOtherNamespace),
                          "the target Service is in namespace " + spec.service->namespace_ +
                              "; the resource use of pods is read only in the LoadTest's own "
                              "namespace (" +
                              spec.namespace_ + ")");
    }
    request.service = spec.service->name;
  } else {
    return not_measured(name(Reason::NoPodSelector),
                        "a url target names its pods with spec.target.podSelector (in the "
                        "LoadTest's namespace) to have their resource use read");
  }

  const Timestamp::duration length = windows->run.end - windows->run.start;
  if (length < 2 * config.prometheus_scrape_interval) {
    return not_measured(name(Reason::WindowTooShort),
                        "the run's window (" +
                            fixed(std::chrono::duration<double>(length).count(), 1) +
                            "s) is shorter than two scrape intervals (" +
                            std::to_string(2 * config.prometheus_scrape_interval.count()) +
                            "s): Prometheus holds too few samples in it for a rate");
  }
  const Timestamp give_up = windows->run.end + kTargetMetricsGiveUp;
  if (measured) {
    if (measured->reason.empty()) {
      status["target"] = target_status(*measured, *windows);
      set_condition(status, current, kTrue, name(Reason::Measured),
                    measured_message(*measured, *windows), now);
    } else if (measured->transient && now < give_up) {
      set_condition(status, current, kUnknown, measured->reason,
                    measured->message + "; asking again", now);
      step.requeue_after = std::chrono::duration_cast<milliseconds>(kTargetMetricsRetry);
    } else {
      set_condition(status, current, kFalse, measured->reason, measured->message, now);
    }
    return step;
  }
  const Timestamp ready_at =
      windows->run.end + std::max<Timestamp::duration>(3 * config.prometheus_scrape_interval,
                                                       std::chrono::seconds(15));
  if (now < ready_at) {
    set_condition(status, current, kUnknown, name(Reason::WaitingForScrapes),
                  "reading the target's resource use from Prometheus at " + format_time(ready_at) +
                      ", three scrape intervals after the run",
                  now);
    step.requeue_after =
        std::max(std::chrono::duration_cast<milliseconds>(ready_at - now), milliseconds(100));
    return step;
  }
  // Keeps what the status says meanwhile (Unknown, waiting or retrying).
  if (const json* kept = find_condition(member(current, "conditions"), kTargetMetricsCondition)) {
    set_condition(status, current, text(member(*kept, "status")), text(member(*kept, "reason")),
                  text(member(*kept, "message")), now);
  }
  step.measure = std::move(request);
  return step;
}

std::string target_selector(const TargetRequest& request, const TargetFindings& found) {
  if (!request.selector.empty()) return request.selector;
  LabelSelector labels;
  if (found.service_selector.is_object()) {
    for (const auto& [key, value] : found.service_selector.items()) {
      if (value.is_string()) labels.match_labels[key] = value.get<std::string>();
    }
  }
  return labels.empty() ? std::string() : to_string(labels);
}

TargetStep judge_target(const TargetRequest& request, const TargetFindings& found,
                        const std::string& prometheus_url) {
  TargetStep step;
  TargetMeasurement& measured = step.measurement;
  const std::string& namespace_ = request.namespace_;
  measured.namespace_ = namespace_;
  const auto not_measured = [&](Reason reason, const std::string& message, bool transient = false) {
    measured.reason = name(reason);
    measured.message = message;
    measured.transient = transient;
    return step;
  };
  const auto forbidden = [&](const std::string& what, const std::string& error) {
    return not_measured(Reason::Forbidden, "kubeload-operator may not " + what + " in namespace " +
                                               namespace_ + " (" + error +
                                               "); the chart's ClusterRole grants it");
  };
  if (request.selector.empty()) {
    const std::string service = namespace_ + "/" + request.service;
    if (found.service_status == 0) {
      step.read = TargetRead::Service;
      return step;
    }
    if (found.service_status == 404) {
      return not_measured(Reason::TargetNotFound,
                          "the target Service " + service + " does not exist");
    }
    if (found.service_status == 403) return forbidden("read Services", found.service_error);
  }
  measured.selector = target_selector(request, found);
  if (measured.selector.empty()) {
    return not_measured(Reason::NoPodSelector,
                        "the target Service " + namespace_ + "/" + request.service +
                            " selects no pods by label; name them with spec.target.podSelector");
  }
  if (found.pods_status == 0) {
    step.read = TargetRead::Pods;
    return step;
  }
  if (found.pods_status == 403) return forbidden("list pods", found.pods_error);
  measured.pods = found.pods;
  std::sort(measured.pods.begin(), measured.pods.end());
  if (measured.pods.empty()) {
    return not_measured(Reason::NoTargetPods,
                        "no pods in namespace " + namespace_ + " match " + measured.selector);
  }
  if (!found.usage_read) {
    step.read = TargetRead::Usage;
    return step;
  }
  if (!found.prometheus_error.empty()) {
    return not_measured(
        found.prometheus_transient ? Reason::PrometheusUnavailable : Reason::PrometheusQueryFailed,
        found.prometheus_error, found.prometheus_transient);
  }
  measured.run = found.run;
  if (!found.run.cpu_mean) {
    return not_measured(
        Reason::NoSamples,
        "Prometheus (" + prometheus_url + ") has no container_cpu_usage_seconds_total samples of " +
            std::to_string(measured.pods.size()) + " pod(s) in " + namespace_ + " (" +
            measured.selector + ") from " + format_time(request.windows.run.start) + " to " +
            format_time(request.windows.run.end) +
            ": does it scrape the kubelets' cAdvisor (/metrics/cadvisor)?");
  }
  measured.stages = found.stages;
  return step;
}

}  // namespace kubeload::controller
