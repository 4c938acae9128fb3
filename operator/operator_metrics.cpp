#include "operator/operator_metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace kubeload::controller {
namespace {

constexpr const char* kPhases[] = {"Pending", "Starting", "Running", "Succeeded", "Failed"};
constexpr const char* kVerdicts[] = {"Pass", "Fail", "None"};
constexpr std::pair<const char*, const char*> kQuantiles[] = {
    {"0.5", "p50"}, {"0.9", "p90"}, {"0.95", "p95"}, {"0.99", "p99"}, {"0.999", "p999"}};

}  // namespace

struct OperatorMetrics::Families {
  prometheus::Family<prometheus::Gauge>& phase;
  prometheus::Family<prometheus::Gauge>& verdict;
  prometheus::Family<prometheus::Gauge>& rps;
  prometheus::Family<prometheus::Gauge>& latency;
  prometheus::Family<prometheus::Gauge>& error_ratio;
  prometheus::Family<prometheus::Gauge>& requests;
  prometheus::Family<prometheus::Counter>& reconciles;
  prometheus::Family<prometheus::Histogram>& reconcile_duration;
  prometheus::Family<prometheus::Gauge>& queue_depth;
};

OperatorMetrics::OperatorMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
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
          .Name("kubeload_loadtest_result_rps")
          .Help("Requests per second of the merged result.")
          .Register(r),
      prometheus::BuildGauge()
          .Name("kubeload_loadtest_result_latency_seconds")
          .Help("Latency quantiles of the merged result.")
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
  });
}

OperatorMetrics::~OperatorMetrics() = default;

void OperatorMetrics::observe_loadtest(const nlohmann::json& loadtest,
                                       const nlohmann::json& status) {
  const auto& metadata = loadtest.at("metadata");
  const std::string name = metadata.value("name", "");
  const std::string namespace_ = metadata.value("namespace", "");
  std::string test;
  if (metadata.contains("labels") && metadata["labels"].contains("kubeload.dev/test")) {
    test = metadata["labels"]["kubeload.dev/test"].get<std::string>();
  }
  const std::map<std::string, std::string> labels = {
      {"loadtest", name}, {"namespace", namespace_}, {"test", test}};
  std::lock_guard lock(mutex_);
  labels_of_[namespace_ + "/" + name] = labels;
  auto with = [&](const char* key, const std::string& value) {
    auto l = labels;
    l[key] = value;
    return l;
  };
  const std::string phase = status.value("phase", "Pending");
  for (const char* p : kPhases) families_->phase.Add(with("phase", p)).Set(phase == p ? 1 : 0);
  const std::string verdict = status.value("verdict", "None");
  for (const char* v : kVerdicts) {
    families_->verdict.Add(with("verdict", v)).Set(verdict == v ? 1 : 0);
  }
  if (!status.contains("result") || !status["result"].is_object()) return;
  const auto& result = status["result"];
  families_->rps.Add(labels).Set(result.value("rps", 0.0));
  families_->error_ratio.Add(labels).Set(result.value("errorRate", 0.0));
  families_->requests.Add(labels).Set(result.value("requests", 0.0));
  if (result.contains("latencyMs")) {
    for (const auto& [quantile, key] : kQuantiles) {
      families_->latency.Add(with("quantile", quantile))
          .Set(result["latencyMs"].value(key, 0.0) / 1000.0);
    }
  }
}

void OperatorMetrics::forget_loadtest(const std::string& namespace_, const std::string& name) {
  std::lock_guard lock(mutex_);
  const auto it = labels_of_.find(namespace_ + "/" + name);
  if (it == labels_of_.end()) return;
  const auto& labels = it->second;
  auto remove_with = [&](auto& family, const char* key, const char* value) {
    auto l = labels;
    l[key] = value;
    if (family.Has(l)) family.Remove(&family.Add(l));
  };
  for (const char* p : kPhases) remove_with(families_->phase, "phase", p);
  for (const char* v : kVerdicts) remove_with(families_->verdict, "verdict", v);
  for (const auto& [quantile, key] : kQuantiles)
    remove_with(families_->latency, "quantile", quantile);
  for (auto* family : {&families_->rps, &families_->error_ratio, &families_->requests}) {
    if (family->Has(labels)) family->Remove(&family->Add(labels));
  }
  labels_of_.erase(it);
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
