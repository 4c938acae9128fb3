#include "operator/target_usage.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "kubeload/text.hpp"
#include "operator/conditions.hpp"

namespace kubeload::controller {

using json = nlohmann::json;
using api::ConditionStatus;
using api::ConditionType;
using api::name;
using api::Reason;
using std::chrono::milliseconds;

namespace {

Timestamp::duration seconds_as_duration(double seconds) {
  return std::chrono::duration_cast<Timestamp::duration>(std::chrono::duration<double>(seconds));
}

// A window's length as the messages print it, "10.0s".
std::string window_length(const UsageWindow& window) {
  return fixed(std::chrono::duration<double>(window.end - window.start).count(), 1) + "s";
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

api::UsageFigures usage_figures(const Usage& usage) {
  api::UsageFigures out;
  if (usage.cpu_mean) out.cpu_cores_mean = rounded(*usage.cpu_mean, 4);
  if (usage.cpu_max) out.cpu_cores_max = rounded(*usage.cpu_max, 4);
  if (usage.memory_max_bytes) {
    out.memory_bytes_max = static_cast<int64_t>(std::llround(*usage.memory_max_bytes));
  }
  out.restarts = usage.restarts;
  return out;
}

api::UsageWindowStatus window_status(const UsageWindow& window) {
  return {api::whole_seconds(window.start), api::whole_seconds(window.end), false};
}

std::string measured_message(const TargetMeasurement& measured, const RunWindows& windows) {
  const Usage& usage = measured.run;
  std::string out = std::to_string(measured.pods.size()) +
                    (measured.pods.size() == 1 ? " pod" : " pods") + " (" + measured.selector +
                    ") over " + window_length(windows.run) + ": ";
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

// Sets the TargetMetrics condition of `status`.
void set_target_condition(api::LoadTestStatus& status, const api::LoadTestStatus& current,
                          ConditionStatus value, const std::string& reason,
                          const std::string& message, Timestamp now) {
  set_condition(status.conditions,
                condition({std::string(kTargetMetricsCondition), name(value), reason, message},
                          status.observed_generation, current, now));
}

}  // namespace

std::optional<RunWindows> run_windows(const api::LoadTestStatus& status, const LoadTestSpec& spec) {
  const std::optional<Timestamp> started = status.start_time;
  const api::ResultFigures figures = api::result_figures(status);
  const std::optional<double> duration = figures.duration_seconds;
  if (!started || !duration || !(*duration > 0)) return std::nullopt;
  RunWindows windows;
  if (!spec.load.warmup && spec.load.warmup_requests.value_or(0) > 0) {
    // How long the warm-up took is not recorded: the window is the whole
    // run, warm-up included, up to the final status.
    const std::optional<Timestamp> done = status.completion_time;
    if (!done || *done <= *started) return std::nullopt;
    windows.run = {*started, *done};
    windows.includes_warmup = true;
    return windows;
  }
  Timestamp from = *started;
  if (spec.load.warmup) from += std::chrono::duration_cast<Timestamp::duration>(*spec.load.warmup);
  windows.run = {from, from + seconds_as_duration(*duration)};
  Timestamp stage_start = from;
  for (const std::optional<double>& planned : figures.stage_planned_seconds) {
    if (!planned || !(*planned > 0)) {
      windows.stages.clear();
      break;
    }
    const Timestamp stage_end = stage_start + seconds_as_duration(*planned);
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

api::TargetUsageStatus target_status(const TargetMeasurement& measured, const RunWindows& windows) {
  api::TargetUsageStatus out;
  out.usage = usage_figures(measured.run);
  out.namespace_ = measured.namespace_;
  out.selector = measured.selector;
  out.pods = measured.pods.size();
  out.window = window_status(windows.run);
  out.window.includes_warmup = windows.includes_warmup;
  for (size_t i = 0; i < measured.stages.size() && i < windows.stages.size(); ++i) {
    out.stages.push_back({i, window_status(windows.stages[i]), usage_figures(measured.stages[i])});
  }
  return out;
}

TargetUsageStep plan_target_usage(const api::LoadTestStatus& current, api::LoadTestStatus& status,
                                  const ParsedLoadTest& parsed, const OperatorConfig& config,
                                  const std::optional<TargetMeasurement>& measured, Timestamp now) {
  TargetUsageStep step;
  if (!status.final()) return step;

  // Measured (or known not to be) once: kept, like the rest of a final status.
  const api::Condition* kept =
      api::find_condition(current.conditions, ConditionType::TargetMetrics);
  if (kept != nullptr && kept->status != ConditionStatus::Unknown) {
    status.target = current.target;
    set_target_condition(status, current, kept->status, kept->reason, kept->message, now);
    return step;
  }
  const auto not_measured = [&](const std::string& reason, const std::string& message) {
    set_target_condition(status, current, ConditionStatus::False, reason, message, now);
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
                        "the run's window (" + window_length(windows->run) +
                            ") is shorter than two scrape intervals (" +
                            std::to_string(2 * config.prometheus_scrape_interval.count()) +
                            "s): Prometheus holds too few samples in it for a rate");
  }
  const Timestamp give_up = windows->run.end + kTargetMetricsGiveUp;
  if (measured) {
    if (measured->reason.empty()) {
      status.target = target_status(*measured, *windows);
      set_target_condition(status, current, ConditionStatus::True, name(Reason::Measured),
                           measured_message(*measured, *windows), now);
    } else if (measured->transient && now < give_up) {
      set_target_condition(status, current, ConditionStatus::Unknown, measured->reason,
                           measured->message + "; asking again", now);
      step.requeue_after = std::chrono::duration_cast<milliseconds>(kTargetMetricsRetry);
    } else {
      set_target_condition(status, current, ConditionStatus::False, measured->reason,
                           measured->message, now);
    }
    return step;
  }
  const Timestamp ready_at =
      windows->run.end + std::max<Timestamp::duration>(3 * config.prometheus_scrape_interval,
                                                       std::chrono::seconds(15));
  if (now < ready_at) {
    set_target_condition(status, current, ConditionStatus::Unknown, name(Reason::WaitingForScrapes),
                         "reading the target's resource use from Prometheus at " +
                             format_time(ready_at) + ", three scrape intervals after the run",
                         now);
    step.requeue_after =
        std::max(std::chrono::duration_cast<milliseconds>(ready_at - now), milliseconds(100));
    return step;
  }
  // Keeps what the status says meanwhile (Unknown, waiting or retrying).
  if (kept != nullptr) {
    set_target_condition(status, current, kept->status, kept->reason, kept->message, now);
  }
  step.measure = std::move(request);
  return step;
}

std::string target_selector(const TargetRequest& request, const TargetFindings& found) {
  if (!request.selector.empty()) return request.selector;
  LabelSelector labels;
  labels.match_labels = found.service_selector;
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
    const std::string samples_of = " container_cpu_usage_seconds_total samples of " +
                                   std::to_string(measured.pods.size()) + " pod(s) in " +
                                   namespace_ + " (" + measured.selector + ")";
    if (found.run.memory_max_bytes) {
      // The pods' series are there (their RSS was read), but a rate needs two
      // CPU samples inside the window. The kubelet's cAdvisor reads a container
      // whose figures did not change at longer and longer intervals (dynamic
      // housekeeping, up to 15 s, plus up to 100% jitter), so a run that starts
      // on an idle target may wait that long for its first sample.
      return not_measured(Reason::TooFewSamples,
                          "Prometheus (" + prometheus_url + ") holds fewer than two" + samples_of +
                              " in the run's " + window_length(request.windows.run) +
                              " window: the kubelet's cAdvisor reads an idle container as "
                              "seldom as every 15 to 30 s, so a run that starts on an idle "
                              "target can end before its second sample; a longer run holds more");
    }
    return not_measured(Reason::NoSamples,
                        "Prometheus (" + prometheus_url + ") has no" + samples_of + " from " +
                            format_time(request.windows.run.start) + " to " +
                            format_time(request.windows.run.end) +
                            ": does it scrape the kubelets' cAdvisor (/metrics/cadvisor)?");
  }
  measured.stages = found.stages;
  return step;
}

bool target_usage_pending(const api::LoadTestStatus& status) {
  const api::Condition* metrics =
      api::find_condition(status.conditions, ConditionType::TargetMetrics);
  return status.final() && metrics != nullptr && metrics->status == api::ConditionStatus::Unknown;
}

}  // namespace kubeload::controller
