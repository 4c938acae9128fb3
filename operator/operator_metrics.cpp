#include "operator/operator_metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <chrono>
#include <variant>

#include "kubeload/api/status.hpp"
#include "kubeload/json_access.hpp"
#include "kubeload/names.hpp"
#include "kubeload/threshold.hpp"
#include "operator/timestamp.hpp"

namespace kubeload::controller {
namespace {

// The latency percentiles, labelled percentile="p99" as status.result.latencyMs
// and the thresholds name them. Not quantile="0.99": Prometheus gives that
// label to a summary's quantiles, and these are gauges.
constexpr const char* kPercentiles[] = {"p50", "p90", "p95", "p99", "p999"};

using json_access::text;
using nlohmann::json;
using Labels = std::map<std::string, std::string>;

double epoch_seconds(api::Time time) {
  return std::chrono::duration<double>(time.time_since_epoch()).count();
}

// A threshold's value in base units: seconds for latencies (thresholds
// compare milliseconds), the rest as compared.
double base_unit_value(const Threshold& threshold, double value) {
  return is_latency(threshold.metric) ? value / 1000.0 : value;
}

template <typename Metric>
void remove_series(prometheus::Family<Metric>& family, const Labels& labels) {
  if (family.Has(labels)) family.Remove(&family.Add(labels));
}

}  // namespace

struct OperatorMetrics::Families {
  prometheus::Family<prometheus::Gauge>& phase;
  prometheus::Family<prometheus::Gauge>& verdict;
  prometheus::Family<prometheus::Gauge>& requests_per_second;
  prometheus::Family<prometheus::Gauge>& latency;
  prometheus::Family<prometheus::Gauge>& error_ratio;
  prometheus::Family<prometheus::Gauge>& requests;
  prometheus::Family<prometheus::Counter>& reconciles;
  prometheus::Family<prometheus::Histogram>& reconcile_duration;
  prometheus::Family<prometheus::Gauge>& queue_depth;
  prometheus::Family<prometheus::Gauge>& run_deadline;
  prometheus::Family<prometheus::Gauge>& test_last_verdict;
  prometheus::Family<prometheus::Gauge>& test_previous_verdict;
  prometheus::Family<prometheus::Gauge>& test_last_requests_per_second;
  prometheus::Family<prometheus::Gauge>& test_last_latency;
  prometheus::Family<prometheus::Gauge>& test_last_error_ratio;
  prometheus::Family<prometheus::Gauge>& test_last_requests;
  prometheus::Family<prometheus::Gauge>& test_last_threshold_passed;
  prometheus::Family<prometheus::Gauge>& test_last_threshold_value;
  prometheus::Family<prometheus::Gauge>& test_last_threshold_limit;
  prometheus::Family<prometheus::Gauge>& test_last_run_start;
  prometheus::Family<prometheus::Gauge>& test_last_run_end;
  prometheus::Family<prometheus::Gauge>& test_last_failure;
};

OperatorMetrics::OperatorMetrics(SteadyClock clock)
    : registry_(std::make_shared<prometheus::Registry>()), clock_(std::move(clock)) {
  auto& r = *registry_;
  families_ = std::make_unique<Families>(Families{
      prometheus::BuildGauge()
          .Name("kubeload_loadtest_phase")
          .Help("1 for the LoadTest's current phase, 0 for the others.")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_loadtest_verdict")
          .Help("1 for the LoadTest's current verdict, 0 for the others.")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_loadtest_result_requests_per_second")
          .Help("Requests per second of the merged result.")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_loadtest_result_latency_seconds")
          .Help("Latency percentiles of the merged result (label percentile: p50 ... p999).")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_loadtest_result_error_ratio")
          .Help("Failed requests / requests of the merged result.")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_loadtest_result_requests")
          .Help("Requests of the merged result.")
          .Register(r),
      prometheus::BuildCounter()
          .Name("kubeload_operator_reconcile_total")
          .Help("Reconciles by result (success, error, requeue).")
          .Register(r),
      prometheus::BuildHistogram()
          .Name("kubeload_operator_reconcile_duration_seconds")
          .Help("Time one reconcile took.")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_operator_queue_depth")
          .Help("Keys waiting in the reconcile queue.")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_loadtest_run_deadline_timestamp_seconds")
          .Help("While a run is under way: when it must have ended (spec.timeouts.run).")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_test_last_verdict")
          .Help("1 for the verdict of the test's newest finished run, 0 for the others.")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_test_previous_verdict")
          .Help("1 for the verdict of the finished run before the newest, 0 for the others.")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_test_last_requests_per_second")
          .Help("Requests per second of the test's newest finished run.")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_test_last_latency_seconds")
          .Help("Latency percentiles of the test's newest finished run (label percentile).")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_test_last_error_ratio")
          .Help("Failed requests / requests of the test's newest finished run.")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_test_last_requests")
          .Help("Requests of the test's newest finished run.")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_test_last_threshold_passed")
          .Help("1 if the threshold passed in the test's newest finished run, else 0.")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_test_last_threshold_value")
          .Help("What the threshold compared in the test's newest finished run (seconds for "
                "latencies, a ratio for errorRate, /s for rps, else a count).")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_test_last_threshold_limit")
          .Help("The limit the threshold compared with in the test's newest finished run "
                "(base units, as kubeload_test_last_threshold_value).")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_test_last_run_start_timestamp_seconds")
          .Help("When the test's newest finished run started.")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_test_last_run_end_timestamp_seconds")
          .Help("When the test's newest finished run ended.")
          .Register(r),
      // The KubeloadRunFailed alert's clock. A time read from the runs'
      // statuses, not a count of failures this process saw: after a restart
      // the operator reads the same completionTime back, so a restart
      // neither invents a failure nor hides one (a counter that restarts at
      // zero and counts the run that ended in its first pass is back at the
      // value Prometheus last scraped: increase() sees nothing). Per test,
      // not per LoadTest: it outlives the runs and does not grow with them.
      prometheus::BuildGauge()
          .Name("kubeload_test_last_failure_timestamp_seconds")
          .Help("When the newest run of the test that ended Failed ended (its completionTime; "
                "test is empty for LoadTests without the kubeload.dev/test label).")
          .Register(r),
  });
}

OperatorMetrics::~OperatorMetrics() = default;

void OperatorMetrics::observe_loadtest(const api::LoadTest& loadtest,
                                       const api::LoadTestStatus& status,
                                       std::optional<double> run_deadline) {
  const api::ObjectMeta& metadata = loadtest.metadata;
  const std::string& name = metadata.name;
  const std::string& namespace_ = metadata.namespace_;
  const auto test_label = metadata.labels.find(std::string(kTestLabel));
  const std::string test = test_label == metadata.labels.end() ? "" : test_label->second;
  const std::map<std::string, std::string> labels = {
      {"loadtest", name}, {"namespace", namespace_}, {"test", test}};
  std::lock_guard lock(mutex_);
  unused_since_.erase(namespace_ + "/" + test);
  free_unused_tests();
  auto& exported = labels_of_[namespace_ + "/" + name];
  // A LoadTest relabelled (another kubeload.dev/test) leaves no series under
  // its old labels: they would stay, unchanging, until the operator restarts.
  if (!exported.empty() && exported != labels) remove_run_series(exported);
  exported = labels;
  const api::Phase phase = status.phase.value_or(api::Phase::Pending);
  if (phase == api::Phase::Failed && status.completion_time) {
    record_failure({{"namespace", namespace_}, {"test", test}},
                   epoch_seconds(*status.completion_time));
  }
  auto with = [&](const char* key, const std::string& value) {
    auto l = labels;
    l[key] = value;
    return l;
  };
  for (const auto& [value, p] : api::kPhases) {
    families_->phase.Add(with("phase", std::string(p))).Set(phase == value ? 1 : 0);
  }
  if (run_deadline && !api::is_final(phase)) {
    families_->run_deadline.Add(labels).Set(*run_deadline);
  } else {
    remove_series(families_->run_deadline, labels);
  }
  if (!test.empty() && api::is_final(phase) && status.completion_time) {
    record_finished(
        namespace_ + "/" + test, {{"namespace", namespace_}, {"test", test}},
        FinishedRun{metadata.uid, *status.completion_time, name,
                    status.verdict.value_or(api::Verdict::None), status.start_time,
                    status.result ? std::optional(api::result_figures(status)) : std::nullopt,
                    status.thresholds});
  }
  const api::Verdict verdict = status.verdict.value_or(api::Verdict::None);
  for (const auto& [value, v] : api::kVerdicts) {
    families_->verdict.Add(with("verdict", std::string(v))).Set(verdict == value ? 1 : 0);
  }
  if (!status.result) return;
  const api::ResultFigures result = api::result_figures(status);
  families_->requests_per_second.Add(labels).Set(result.rps.value_or(0.0));
  families_->error_ratio.Add(labels).Set(result.error_rate.value_or(0.0));
  families_->requests.Add(labels).Set(static_cast<double>(result.requests.value_or(0)));
  if (!result.latency_ms.empty()) {
    for (const char* percentile : kPercentiles) {
      families_->latency.Add(with("percentile", percentile))
          .Set(result.metric(percentile).value_or(0.0) / 1000.0);
    }
  }
}

void OperatorMetrics::forget_loadtest(const std::string& namespace_, const std::string& name) {
  std::lock_guard lock(mutex_);
  free_unused_tests();
  const auto it = labels_of_.find(namespace_ + "/" + name);
  if (it == labels_of_.end()) return;
  remove_run_series(it->second);
  const std::string namespace_of = it->second["namespace"];
  const std::string test = it->second["test"];
  labels_of_.erase(it);
  // The test's history and its last failure stay: they outlive the runs,
  // for kUnusedTestKept after its last LoadTest went.
  const bool test_left = std::any_of(labels_of_.begin(), labels_of_.end(), [&](const auto& other) {
    const Labels& labels = other.second;
    return labels.at("namespace") == namespace_of && labels.at("test") == test;
  });
  if (!test_left) unused_since_.emplace(namespace_of + "/" + test, clock_());
}

void OperatorMetrics::free_unused_tests() {
  const auto now = clock_();
  for (auto it = unused_since_.begin(); it != unused_since_.end();) {
    if (now - it->second < kUnusedTestKept) {
      ++it;
      continue;
    }
    const std::string& key = it->first;
    const auto slash = key.find('/');
    const Labels test = {{"namespace", key.substr(0, slash)}, {"test", key.substr(slash + 1)}};
    auto with = [&](const char* name, std::string_view value) {
      auto l = test;
      l[name] = std::string(value);
      return l;
    };
    for (const auto& [value, v] : api::kVerdicts) {
      remove_series(families_->test_last_verdict, with("verdict", v));
      remove_series(families_->test_previous_verdict, with("verdict", v));
    }
    for (const char* p : kPercentiles) {
      remove_series(families_->test_last_latency, with("percentile", p));
    }
    for (auto* family :
         {&families_->test_last_requests_per_second, &families_->test_last_error_ratio,
          &families_->test_last_requests, &families_->test_last_run_start,
          &families_->test_last_run_end, &families_->test_last_failure}) {
      remove_series(*family, test);
    }
    if (const auto history = history_.find(key); history != history_.end()) {
      for (const Labels& series : history->second.thresholds) {
        for (auto* family :
             {&families_->test_last_threshold_passed, &families_->test_last_threshold_value,
              &families_->test_last_threshold_limit}) {
          remove_series(*family, series);
        }
      }
      history_.erase(history);
    }
    it = unused_since_.erase(it);
  }
}

void OperatorMetrics::remove_run_series(const Labels& labels) {
  auto with = [&](const char* key, std::string_view value) {
    auto l = labels;
    l[key] = std::string(value);
    return l;
  };
  for (const auto& [value, p] : api::kPhases) remove_series(families_->phase, with("phase", p));
  for (const auto& [value, v] : api::kVerdicts) {
    remove_series(families_->verdict, with("verdict", v));
  }
  for (const char* p : kPercentiles) remove_series(families_->latency, with("percentile", p));
  for (auto* family : {&families_->requests_per_second, &families_->error_ratio,
                       &families_->requests, &families_->run_deadline}) {
    remove_series(*family, labels);
  }
}

void OperatorMetrics::record_failure(const Labels& test, double ended) {
  auto& gauge = families_->test_last_failure.Add(test);
  // Runs are observed in any order (a relist, a resync): the newest stays.
  if (ended > gauge.Value()) gauge.Set(ended);
}

void OperatorMetrics::record_finished(const std::string& test_key, const Labels& labels,
                                      FinishedRun run) {
  TestHistory& history = history_[test_key];
  history.labels = labels;
  auto& newest = history.newest;
  // The same run observed again (each reconcile) replaces itself.
  std::erase_if(newest, [&](const FinishedRun& kept) {
    return !run.uid.empty() ? kept.uid == run.uid : kept.name == run.name;
  });
  auto later = [](const FinishedRun& a, const FinishedRun& b) {
    return std::tie(a.completion_time, a.name) > std::tie(b.completion_time, b.name);
  };
  newest.insert(std::upper_bound(newest.begin(), newest.end(), run, later), std::move(run));
  if (newest.size() > 2) newest.resize(2);
  publish_history(history);
}

void OperatorMetrics::publish_history(TestHistory& history) {
  const Labels& labels = history.labels;
  auto with = [&](const char* key, const std::string& value) {
    auto l = labels;
    l[key] = value;
    return l;
  };
  auto verdict_of = [](const FinishedRun& run) { return run.verdict; };
  const FinishedRun& last = history.newest.front();
  for (const auto& [value, v] : api::kVerdicts) {
    families_->test_last_verdict.Add(with("verdict", std::string(v)))
        .Set(verdict_of(last) == value ? 1 : 0);
  }
  if (history.newest.size() > 1) {
    const api::Verdict before = verdict_of(history.newest[1]);
    for (const auto& [value, v] : api::kVerdicts) {
      families_->test_previous_verdict.Add(with("verdict", std::string(v)))
          .Set(before == value ? 1 : 0);
    }
  }
  if (last.start_time) {
    families_->test_last_run_start.Add(labels).Set(epoch_seconds(*last.start_time));
  } else {
    remove_series(families_->test_last_run_start, labels);
  }
  families_->test_last_run_end.Add(labels).Set(epoch_seconds(last.completion_time));

  // A run without a result (say, failed before it started) leaves no numbers:
  // a gap in the trend, never the previous run's numbers under its time.
  const api::ResultFigures result = last.figures.value_or(api::ResultFigures{});
  if (last.figures) {
    families_->test_last_requests_per_second.Add(labels).Set(result.rps.value_or(0.0));
    families_->test_last_error_ratio.Add(labels).Set(result.error_rate.value_or(0.0));
    families_->test_last_requests.Add(labels).Set(static_cast<double>(result.requests.value_or(0)));
  } else {
    for (auto* family : {&families_->test_last_requests_per_second,
                         &families_->test_last_error_ratio, &families_->test_last_requests}) {
      remove_series(*family, labels);
    }
  }
  for (const char* percentile : kPercentiles) {
    if (const std::optional<double> millis = result.metric(percentile)) {
      families_->test_last_latency.Add(with("percentile", percentile)).Set(*millis / 1000);
    } else {
      remove_series(families_->test_last_latency, with("percentile", percentile));
    }
  }

  // One series per threshold of the newest run (at most spec.thresholds'
  // 100), named by its place in the spec and what it compares, never by its
  // text (free text as a label value: any length, and a new series for
  // every way of writing the same rule); a threshold the newest run no longer
  // has is removed.
  std::vector<Labels> now;
  for (std::size_t index = 0; index < last.thresholds.size(); ++index) {
    const api::ThresholdRow& row = last.thresholds[index];
    const auto parsed = parse_threshold(row.expression);
    const auto* threshold = std::get_if<Threshold>(&parsed);
    if (threshold == nullptr) continue;
    Labels series = labels;
    series["threshold"] = std::to_string(index);
    series["request"] = threshold->request;
    series["metric"] = std::string(to_string(threshold->metric));
    series["op"] = std::string(to_string(threshold->op));
    families_->test_last_threshold_passed.Add(series).Set(row.passed ? 1 : 0);
    families_->test_last_threshold_limit.Add(series).Set(
        base_unit_value(*threshold, threshold->value));
    if (row.value) {
      families_->test_last_threshold_value.Add(series).Set(base_unit_value(*threshold, *row.value));
    } else {
      remove_series(families_->test_last_threshold_value, series);
    }
    now.push_back(std::move(series));
  }
  for (const Labels& gone : history.thresholds) {
    if (std::find(now.begin(), now.end(), gone) != now.end()) continue;
    for (auto* family :
         {&families_->test_last_threshold_passed, &families_->test_last_threshold_value,
          &families_->test_last_threshold_limit}) {
      remove_series(*family, gone);
    }
  }
  history.thresholds = std::move(now);
}

void OperatorMetrics::observe_reconcile(const std::string& result, double seconds) {
  families_->reconciles.Add({{"result", result}}).Increment();
  families_->reconcile_duration
      .Add({}, prometheus::Histogram::BucketBoundaries{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                                       2.5, 5, 10})
      .Observe(seconds);
}

void OperatorMetrics::set_queue_depth(double depth) {
  families_->queue_depth.Add({}).Set(depth);
}

}  // namespace kubeload::controller
