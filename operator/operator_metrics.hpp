#pragma once
// The operator's Prometheus metrics (names in api.md): each LoadTest's phase,
// verdict and headline results, and the controller's own health.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace kubeload::controller {

class OperatorMetrics {
 public:
  using SteadyClock = std::function<std::chrono::steady_clock::time_point()>;
  // A test's series outlive its LoadTests, so a GitOps tool that deletes a
  // run and creates the next keeps them; once a test has had no LoadTest for
  // this long, its series and what they were built from are freed (memory
  // and series grow with the tests that exist, not with every test ever run).
  static constexpr std::chrono::hours kUnusedTestKept{1};

  explicit OperatorMetrics(SteadyClock clock = std::chrono::steady_clock::now);
  ~OperatorMetrics();
  OperatorMetrics(const OperatorMetrics&) = delete;
  OperatorMetrics& operator=(const OperatorMetrics&) = delete;

  // From a LoadTest and the status just computed for it; run_deadline (Unix
  // seconds) while its run is under way and bounded (spec.timeouts.run).
  void observe_loadtest(const api::LoadTest& loadtest, const api::LoadTestStatus& status,
                        std::optional<double> run_deadline = std::nullopt);
  // The LoadTest is gone: its per-run series go with it.
  void forget_loadtest(const std::string& namespace_, const std::string& name);
  void observe_reconcile(const std::string& result, double seconds);
  void set_queue_depth(double depth);
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

 private:
  struct Families;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<Families> families_;
  std::mutex mutex_;
  std::map<std::string, std::map<std::string, std::string>> labels_of_;  // key -> labels
  void remove_run_series(const std::map<std::string, std::string>& labels);

  // The newest two finished runs of each test (namespace and kubeload.dev/test
  // label), whichever order their LoadTests are observed in: the series of a
  // test outlive its runs, so Grafana can chart it across releases and an
  // alert can compare a run with the one before.
  // What the test's series show of a finished run, and nothing more: its
  // figures and threshold rows, never its status (whose result carries four
  // histograms per row), so a test's history grows with its spec's
  // thresholds and stages, not with what its runs measured.
  struct FinishedRun {
    std::string uid;
    api::Time completion_time;
    std::string name;
    api::Verdict verdict = api::Verdict::None;
    std::optional<api::Time> start_time;
    std::optional<api::ResultFigures> figures;  // unset: the run has no result
    std::vector<api::ThresholdRow> thresholds;
  };
  struct TestHistory {
    std::vector<FinishedRun> newest;  // newest first, at most two
    std::map<std::string, std::string> labels;
    std::vector<std::map<std::string, std::string>> thresholds;  // threshold series exported
  };
  void record_failure(const std::map<std::string, std::string>& test, double ended);
  void record_finished(const std::string& test_key,
                       const std::map<std::string, std::string>& labels, FinishedRun run);
  void publish_history(TestHistory& history);
  std::map<std::string, TestHistory> history_;  // "namespace/test" -> history
  // Tests ("namespace/test") whose last LoadTest went, and when.
  std::map<std::string, std::chrono::steady_clock::time_point> unused_since_;
  SteadyClock clock_;
  // Frees the series and history of tests unused for kUnusedTestKept.
  void free_unused_tests();
};

}  // namespace kubeload::controller
