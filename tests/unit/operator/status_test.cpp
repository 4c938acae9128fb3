// Status computation: every phase from realistic observations (a LoadTest as
// the API returns it, the Job and pods as the kubelet and the Job controller
// report them, results as the workers serve them), stability across
// recomputation, condition transition times, exact merging and the gate.

#include <gtest/gtest.h>

#include "golden_files.hpp"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/result.hpp"
#include "kubeload/spec.hpp"
#include "operator/conditions.hpp"
#include "operator/generator_saturation.hpp"
#include "operator/phase.hpp"
#include "operator/shared_target.hpp"
#include "operator/status.hpp"

namespace {

using nlohmann::json;
using namespace kubeload;
using namespace kubeload::controller;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

const Timestamp kCreated = *parse_time("2026-11-29T19:00:00Z");
const Timestamp kJobCreated = kCreated + seconds(2);
const Timestamp kStartAt = kCreated + seconds(20);

int64_t unix_ms(Timestamp t) {
  return std::chrono::duration_cast<milliseconds>(t.time_since_epoch()).count();
}

json loadtest_json() {
  return json::parse(R"({
    "apiVersion": "kubeload.dev/v1alpha1",
    "kind": "LoadTest",
    "metadata": {"name": "checkout", "namespace": "shop", "uid": "u-1", "generation": 1,
                 "creationTimestamp": "2026-11-29T19:00:00Z",
                 "labels": {"kubeload.dev/test": "checkout"}},
    "spec": {
      "target": {"url": "http://checkout.shop.svc:8080/"},
      "load": {"connections": 30, "duration": "30s"},
      "workers": 3,
      "thresholds": ["p99 < 200ms", "errorRate < 1%"]
    }
  })");
}

json job_json(std::optional<std::string> condition = std::nullopt) {
  json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata",
               {{"name", "checkout-workers"},
                {"namespace", "shop"},
                {"creationTimestamp", format_time(kJobCreated)}}},
              {"status", json::object()}};
  if (condition) {
    job["status"]["conditions"] = {
        {{"type", *condition},
         {"status", "True"},
         {"reason", *condition == "Failed" ? "BackoffLimitExceeded" : ""}}};
  }
  return job;
}

json pod_object(uint32_t index, const std::string& phase, bool ready) {
  const std::string i = std::to_string(index);
  json pod = {
      {"metadata",
       {{"name", "checkout-workers-" + i + "-x7k2p"},
        {"labels",
         {{"kubeload.dev/loadtest", "checkout"}, {"batch.kubernetes.io/job-completion-index", i}}},
        {"annotations", {{"batch.kubernetes.io/job-completion-index", i}}}}},
      {"status",
       {{"phase", phase},
        {"podIP", phase == "Pending" ? "" : "10.244.1." + std::to_string(10 + index)},
        {"conditions",
         {{{"type", "Ready"}, {"status", ready ? "True" : "False"}},
          {{"type", "PodScheduled"}, {"status", "True"}}}}}}};
  return pod;
}

PodView pod_json(uint32_t index, const std::string& phase, bool ready) {
  return pod_view(pod_object(index, phase, ready));
}

PodView waiting_pod(uint32_t index, const std::string& reason) {
  json pod = pod_object(index, "Pending", false);
  pod["status"]["containerStatuses"] = {
      {{"name", "loadgen"}, {"ready", false}, {"state", {{"waiting", {{"reason", reason}}}}}}};
  return pod_view(pod);
}

json failed_pod_object(uint32_t index, const std::string& reason, int exit_code) {
  json pod = pod_object(index, "Failed", false);
  pod["status"]["containerStatuses"] = {
      {{"name", "loadgen"},
       {"ready", false},
       {"state", {{"terminated", {{"reason", reason}, {"exitCode", exit_code}}}}}}};
  return pod;
}

PodView failed_pod(uint32_t index, const std::string& reason, int exit_code) {
  return pod_view(failed_pod_object(index, reason, exit_code));
}

// A worker's share: `ok` successes and `failed` 503s with latencies around
// `latency_us`. Partial results carry counters only, like the worker's.
RunResult run_of(uint64_t ok, uint64_t failed, int64_t latency_us, bool finished = true) {
  RunResult run;
  Result& r = run.result;
  r.requests = ok + failed;
  r.errors.status = failed;
  r.status_codes[200] = ok;
  if (failed > 0) r.status_codes[503] = failed;
  r.bytes_received = r.requests * 250;
  r.bytes_sent = r.requests * 80;
  r.duration_seconds = finished ? 30.0 : 0.0;
  if (finished) {
    for (uint64_t i = 0; i < r.requests; ++i) {
      const auto value = latency_us + static_cast<int64_t>(i % 97) * 13;
      r.latency.record(value);
      r.waiting.record(value * 9 / 10);
      r.connect.record(i % 10 == 0 ? 300 : 0);
    }
  }
  run.request_results.push_back({"default", r});
  run.finished = finished;
  return run;
}

CollectedResult collected(RunResult run, int64_t skew_ms = 0) {
  CollectedResult c;
  c.run = std::move(run);
  c.started_at_ms = unix_ms(kStartAt) + skew_ms;
  return c;
}

// The tables write what a pass observed as the API returns it (the LoadTest,
// its Job) and what plan() made of it; status_of() types it as observe()
// and plan() do, and computes the status.
struct Observed {
  json loadtest;
  ParsedLoadTest parsed;
  std::optional<json> job;
  std::vector<PodView> pods;
  WorkerResults results;
  std::optional<Timestamp> start_issued_at;
  // The records the baseline compares with, newest first: {name, run status}.
  std::vector<std::pair<std::string, json>> baseline_records;
  std::optional<RunFailure> failure;
};

Observation observation_of(const Observed& o) {
  Observation observation;
  observation.loadtest = o.loadtest.get<api::LoadTest>();
  observation.parsed = o.parsed;
  const std::string& uid = observation.loadtest.metadata.uid;
  if (o.job) {
    // The Job of this incarnation: controlled by the LoadTest's uid.
    json job = *o.job;
    job["metadata"]["uid"] = "job-" + uid;
    job["metadata"]["ownerReferences"] = {{{"uid", uid}, {"controller", true}}};
    observation.job = job_view(job);
  }
  for (PodView pod : o.pods) {
    pod.controller_uid = "job-" + uid;  // made by that Job
    observation.pods.push_back(std::move(pod));
  }
  for (const auto& [name, run] : o.baseline_records) {
    api::LoadTestResult record;
    record.metadata.name = name;
    record.load_test.name = name.substr(0, name.rfind('-'));
    record.run = run.get<api::LoadTestStatus>();
    observation.baseline_records.push_back(std::move(record));
  }
  return observation;
}

json status_of(const Observed& o, Timestamp now) {
  return compute_status(observation_of(o), RunState{o.results, o.start_issued_at, o.failure, {}},
                        now);
}

std::optional<Timestamp> start_deadline(const Observed& o) {
  return kubeload::controller::start_deadline(observation_of(o));
}

bool status_changed(const json& current, const json& next) {
  return kubeload::controller::status_changed(current.get<api::LoadTestStatus>(),
                                              next.get<api::LoadTestStatus>());
}

Observed observe(const json& loadtest) {
  Observed o;
  o.loadtest = loadtest;
  o.parsed = parse_loadtest(loadtest.dump());
  return o;
}

// What each of the three workers serves (final unless said).
std::map<uint32_t, CollectedResult> worker_results(bool final_results,
                                                   uint64_t failed_per_worker = 0,
                                                   int64_t latency_us = 20000) {
  std::map<uint32_t, CollectedResult> results;
  for (uint32_t i = 0; i < 3; ++i) {
    results[i] =
        collected(run_of(1000 + i, failed_per_worker, latency_us + i * 1000, final_results),
                  static_cast<int64_t>(i) * 4);
  }
  return results;
}

// Folded as the controller folds them, bounded by the spec's three workers.
WorkerResults folded(std::map<uint32_t, CollectedResult> results) {
  WorkerResults folded(3);
  for (auto& [index, result] : results) EXPECT_TRUE(folded.fold(index, std::move(result)));
  return folded;
}

// Ready workers, the start issued, and results from each (final unless said).
Observed running(bool final_results, uint64_t failed_per_worker = 0, int64_t latency_us = 20000) {
  Observed o = observe(loadtest_json());
  o.job = job_json();
  for (uint32_t i = 0; i < 3; ++i) o.pods.push_back(pod_json(i, "Running", true));
  o.results = folded(worker_results(final_results, failed_per_worker, latency_us));
  o.start_issued_at = kStartAt;
  return o;
}

const json& condition(const json& status, const std::string& type) {
  for (const json& c : status.at("conditions")) {
    if (c.at("type") == type) return c;
  }
  static const json kNone;
  ADD_FAILURE() << "no condition " << type << " in " << status.dump();
  return kNone;
}

// ---- phases ----------------------------------------------------------------------

TEST(OperatorStatus, NoJobYetIsPending) {
  const json status = status_of(observe(loadtest_json()), kCreated + seconds(1));
  EXPECT_EQ(status["phase"], "Pending");
  EXPECT_EQ(status["reason"], "WaitingForWorkers");
  EXPECT_EQ(status["verdict"], "None");
  EXPECT_EQ(status["observedGeneration"], 1);
  EXPECT_EQ(status["progress"], "0%");
  EXPECT_EQ(status["workers"]["desired"], 3);
  EXPECT_FALSE(status.contains("result"));
  EXPECT_FALSE(status.contains("startTime"));
  EXPECT_EQ(condition(status, "WorkersReady")["status"], "False");
  EXPECT_EQ(condition(status, "Completed")["status"], "False");
  EXPECT_EQ(condition(status, "Passed")["status"], "Unknown");
  EXPECT_EQ(condition(status, "Passed")["observedGeneration"], 1);
}

TEST(OperatorStatus, SomeWorkersNotReadyIsStartingWithTheirReasons) {
  Observed o = observe(loadtest_json());
  o.job = job_json();
  o.pods = {pod_json(0, "Running", true), waiting_pod(1, "ImagePullBackOff"),
            pod_json(2, "Running", false)};
  const json status = status_of(o, kCreated + seconds(30));
  EXPECT_EQ(status["phase"], "Starting");
  EXPECT_EQ(status["reason"], "WaitingForWorkers");
  EXPECT_NE(status["message"].get<std::string>().find("1/3 workers ready"), std::string::npos)
      << status["message"];
  EXPECT_NE(status["message"].get<std::string>().find("worker 1: ImagePullBackOff"),
            std::string::npos)
      << status["message"];
  EXPECT_EQ(status["workers"]["ready"], 1);
  EXPECT_EQ(condition(status, "WorkersReady")["status"], "False");
}

TEST(OperatorStatus, AllReadyBeforeTheStartIsStartingWorkersReady) {
  Observed o = observe(loadtest_json());
  o.job = job_json();
  for (uint32_t i = 0; i < 3; ++i) o.pods.push_back(pod_json(i, "Running", true));
  const json status = status_of(o, kCreated + seconds(15));
  EXPECT_EQ(status["phase"], "Starting");
  EXPECT_EQ(status["reason"], "WorkersReady");
  EXPECT_EQ(condition(status, "WorkersReady")["status"], "True");
  EXPECT_EQ(condition(status, "WorkersReady")["reason"], "AllWorkersReady");
}

TEST(OperatorStatus, StartedWithPartialResultsIsRunningWithProgress) {
  const Observed o = running(false);
  const json status = status_of(o, kStartAt + seconds(10));
  EXPECT_EQ(status["phase"], "Running");
  EXPECT_EQ(status["reason"], "Running");
  EXPECT_EQ(status["verdict"], "None");
  EXPECT_EQ(status["progress"], "33%");  // 10 s of 30 s
  EXPECT_EQ(status["startTime"], format_time(kStartAt));
  EXPECT_FALSE(status.contains("completionTime"));
  EXPECT_EQ(status["result"]["requests"], 1000 + 1001 + 1002);
  EXPECT_EQ(status["workers"]["startSkewMs"], 8);
  EXPECT_FALSE(status.contains("thresholds"));  // no verdict on partial results
  EXPECT_EQ(condition(status, "Passed")["status"], "Unknown");
  // Never 100% before the end, even when the clock says the time is up.
  EXPECT_EQ(status_of(o, kStartAt + minutes(5))["progress"], "99%");
}

TEST(OperatorStatus, ProgressByRequestsWhenThatEndsTheRunFirst) {
  json loadtest = loadtest_json();
  loadtest["spec"]["load"] = {{"connections", 30}, {"requests", 10000}, {"duration", "10m"}};
  Observed o = running(false);
  o.loadtest = loadtest;
  o.parsed = parse_loadtest(loadtest.dump());
  const json status = status_of(o, kStartAt + seconds(6));  // 1% of the time
  EXPECT_EQ(status["progress"], "30%");                     // 3003 of 10000 requests
}

TEST(OperatorStatus, AllFinalResultsMeetingThresholdsSucceedWithPass) {
  const Timestamp now = kStartAt + seconds(31);
  const json status = status_of(running(true), now);
  EXPECT_EQ(status["phase"], "Succeeded");
  EXPECT_EQ(status["reason"], "ThresholdsPassed");
  EXPECT_EQ(status["message"], "all 2 thresholds met");
  EXPECT_EQ(status["verdict"], "Pass");
  EXPECT_EQ(status["progress"], "100%");
  EXPECT_EQ(status["completionTime"], format_time(now));
  ASSERT_EQ(status["thresholds"].size(), 2u);
  EXPECT_EQ(status["thresholds"][0]["expression"], "p99 < 200ms");
  EXPECT_EQ(status["thresholds"][0]["passed"], true);
  EXPECT_EQ(status["thresholds"][1]["observed"], "0%");
  EXPECT_EQ(condition(status, "Completed")["status"], "True");
  EXPECT_EQ(condition(status, "Completed")["reason"], "DurationReached");
  EXPECT_EQ(condition(status, "Passed")["status"], "True");
  EXPECT_EQ(condition(status, "Passed")["reason"], "ThresholdsPassed");
  EXPECT_EQ(condition(status, "WorkersReady")["status"], "True");
  // The pods still run (they wait for the acknowledgement), yet every worker
  // has delivered its final result.
  EXPECT_EQ(status["workers"]["succeeded"], status["workers"]["desired"]);
  EXPECT_EQ(status["requestResults"][0]["name"], "default");
  EXPECT_FALSE(status["requestResults"][0].contains("histogram"));
  EXPECT_TRUE(status["result"].contains("histogram"));
}

// A scenario run's rows: numbers only, like the request rows, merged
// across the workers.
TEST(OperatorStatus, ScenarioRowsAreShownAsNumbersOnly) {
  std::map<uint32_t, CollectedResult> results = worker_results(true);
  for (auto& [index, result] : results) {
    ScenarioResult buy{"buy", 10, index, Histogram{}};
    buy.duration.record(1'500'000 + index * 1000, 10);
    result.run.scenarios.push_back(std::move(buy));
  }
  Observed o = running(true);
  o.results = folded(std::move(results));
  const json status = status_of(o, kStartAt + seconds(31));
  ASSERT_TRUE(status.contains("scenarioResults")) << status.dump();
  const json& buy = status["scenarioResults"][0];
  EXPECT_EQ(buy["name"], "buy");
  EXPECT_EQ(buy["iterations"], 30);
  EXPECT_EQ(buy["failedIterations"], 0 + 1 + 2);
  EXPECT_NEAR(buy["durationMs"]["max"].get<double>(), 1502, 2);
  EXPECT_FALSE(buy.contains("histogram"));
  // A run without scenarios has no such rows.
  EXPECT_FALSE(status_of(running(true), kStartAt + seconds(31)).contains("scenarioResults"));
}

TEST(OperatorStatus, MissedThresholdsSucceedWithFailNeverFailed) {
  // 5% errors and ~250 ms latencies miss both thresholds: the run worked,
  // the gate did not pass.
  const json status = status_of(running(true, 53, 250000), kStartAt + seconds(31));
  EXPECT_EQ(status["phase"], "Succeeded");
  EXPECT_EQ(status["reason"], "ThresholdsFailed");
  EXPECT_EQ(status["verdict"], "Fail");
  EXPECT_EQ(status["thresholds"][0]["passed"], false);
  EXPECT_EQ(status["thresholds"][1]["passed"], false);
  const std::string message = status["message"];
  EXPECT_NE(message.find("2 of 2 thresholds missed"), std::string::npos) << message;
  EXPECT_NE(message.find("p99 < 200ms (observed"), std::string::npos) << message;
  EXPECT_EQ(condition(status, "Passed")["status"], "False");
  EXPECT_EQ(condition(status, "Completed")["status"], "True");
  EXPECT_GT(status["errorPercent"].get<double>(), 4.9);
  EXPECT_LT(status["errorPercent"].get<double>(), 5.1);
}

TEST(OperatorStatus, NoGateCompletesWithVerdictNone) {
  json loadtest = loadtest_json();
  loadtest["spec"].erase("thresholds");
  Observed o = running(true);
  o.loadtest = loadtest;
  o.parsed = parse_loadtest(loadtest.dump());
  const json status = status_of(o, kStartAt + seconds(31));
  EXPECT_EQ(status["phase"], "Succeeded");
  EXPECT_EQ(status["reason"], "Completed");
  EXPECT_EQ(status["verdict"], "None");
  EXPECT_FALSE(status.contains("thresholds"));
  EXPECT_EQ(condition(status, "Passed")["status"], "True");
  EXPECT_EQ(condition(status, "Passed")["reason"], "NoGate");
}

TEST(OperatorStatus, MergesWorkersExactly) {
  // Three shares merged must equal one run that saw every request.
  Observed o = running(true, 7);
  RunResult combined;
  combined.result.duration_seconds = 30.0;
  for (uint32_t i = 0; i < 3; ++i) {
    const RunResult share = run_of(1000 + i, 7, 20000 + i * 1000);
    Result& c = combined.result;
    c.requests += share.result.requests;
    c.errors.status += share.result.errors.status;
    for (const auto& [code, n] : share.result.status_codes) c.status_codes[code] += n;
    c.bytes_received += share.result.bytes_received;
    c.bytes_sent += share.result.bytes_sent;
    for (uint64_t k = 0; k < share.result.requests; ++k) {
      const auto value = 20000 + static_cast<int64_t>(i) * 1000 + static_cast<int64_t>(k % 97) * 13;
      c.latency.record(value);
      c.waiting.record(value * 9 / 10);
      c.connect.record(k % 10 == 0 ? 300 : 0);
    }
  }
  const json status = status_of(o, kStartAt + seconds(31));
  json expected;
  to_json(expected, combined.result, true);
  EXPECT_TRUE(result_from_json(status["result"]) == combined.result);
  for (const char* key : {"requests", "failures", "errorRate", "rps", "latencyMs", "waitingMs",
                          "connectMs", "statusCodes", "errors", "bytesReceived"}) {
    EXPECT_EQ(status["result"][key], expected[key]) << key;
  }
  EXPECT_EQ(status["result"]["requests"], 3003 + 21);
  EXPECT_EQ(status["result"]["statusCodes"]["503"], 21);
}

TEST(OperatorStatus, InvalidSpecFailsNamingTheFieldsWithoutAJob) {
  json loadtest = loadtest_json();
  loadtest["spec"]["load"]["connections"] = 2;  // fewer than the 3 workers
  loadtest["spec"]["thresholds"] = {"p98 < 10ms"};
  const json status = status_of(observe(loadtest), kCreated + seconds(1));
  EXPECT_EQ(status["phase"], "Failed");
  EXPECT_EQ(status["reason"], "InvalidSpec");
  EXPECT_EQ(status["verdict"], "None");
  const std::string message = status["message"];
  EXPECT_NE(message.find("spec.load.connections"), std::string::npos) << message;
  EXPECT_NE(message.find("spec.thresholds[0]"), std::string::npos) << message;
  EXPECT_EQ(condition(status, "Completed")["reason"], "InvalidSpec");
  EXPECT_EQ(condition(status, "Passed")["status"], "False");
  EXPECT_EQ(condition(status, "WorkersReady")["reason"], "InvalidSpec");
  EXPECT_TRUE(status.contains("completionTime"));
}

TEST(OperatorStatus, WorkerCrashMidRunFailsKeepingPartialResults) {
  Observed o = running(false);
  o.pods[1] = failed_pod(1, "OOMKilled", 137);
  const json status = status_of(o, kStartAt + seconds(12));
  EXPECT_EQ(status["phase"], "Failed");
  EXPECT_EQ(status["reason"], "WorkerFailed");
  EXPECT_EQ(status["verdict"], "None");
  const std::string message = status["message"];
  EXPECT_NE(message.find("worker 1 failed (OOMKilled, exit code 137)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("partial results of 3 of 3 workers"), std::string::npos) << message;
  EXPECT_EQ(status["result"]["requests"], 3003);
  EXPECT_EQ(status["workers"]["failed"], 1);
  EXPECT_FALSE(status.contains("thresholds"));
  EXPECT_EQ(status["progress"], "40%");  // where it stopped
  EXPECT_EQ(condition(status, "Completed")["reason"], "WorkerFailed");
  EXPECT_EQ(condition(status, "WorkersReady")["status"], "True");  // they were, and started
}

TEST(OperatorStatus, CrashBeforeTheStartQuotesTheWorkersLastWords) {
  Observed o = observe(loadtest_json());
  o.job = job_json();
  json cannot_listen = failed_pod_object(2, "Error", 2);
  cannot_listen["status"]["containerStatuses"][0]["state"]["terminated"]["message"] =
      "loadgen worker: cannot listen on \"0.0.0.0:8080\": Address in use\nmore log";
  o.pods = {pod_json(0, "Running", true), pod_json(1, "Running", true), pod_view(cannot_listen)};
  const json status = status_of(o, kCreated + seconds(30));
  EXPECT_EQ(status["phase"], "Failed");
  EXPECT_EQ(status["reason"], "WorkerFailed");
  EXPECT_EQ(status["message"],
            "worker 2 failed (Error, exit code 2: loadgen worker: cannot listen on "
            "\"0.0.0.0:8080\": Address in use); no results were collected");
  EXPECT_EQ(condition(status, "WorkersReady")["status"], "False");
  EXPECT_FALSE(status.contains("startTime"));
}

// A termination message is cut to a few hundred bytes: never inside a
// UTF-8 sequence, or the status would not serialize (nlohmann::json refuses
// invalid UTF-8) and every write of it would fail.
TEST(OperatorStatus, LongTerminationMessagesAreCutBetweenCharacters) {
  Observed o = observe(loadtest_json());
  o.job = job_json();
  json crashed = failed_pod_object(2, "Error", 1);
  std::string words = "x";  // odd: every 2-byte "é" after it straddles an even cut
  for (int i = 0; i < 400; ++i) words += "\xC3\xA9";
  crashed["status"]["containerStatuses"][0]["state"]["terminated"]["message"] = words;
  o.pods = {pod_json(0, "Running", true), pod_json(1, "Running", true), pod_view(crashed)};
  const json status = status_of(o, kCreated + seconds(30));
  EXPECT_EQ(status["reason"], "WorkerFailed");
  EXPECT_NO_THROW((void)status.dump());
  EXPECT_NE(status["message"].get<std::string>().find("..."), std::string::npos);
}

TEST(OperatorStatus, WorkerPodVanishingMidRunFails) {
  Observed o = running(false);
  o.pods.erase(o.pods.begin() + 2);
  const json status = status_of(o, kStartAt + seconds(12));
  EXPECT_EQ(status["phase"], "Failed");
  EXPECT_EQ(status["reason"], "WorkerFailed");
  EXPECT_NE(status["message"].get<std::string>().find("worker 2's pod disappeared"),
            std::string::npos)
      << status["message"];
}

TEST(OperatorStatus, DeletedJobMidRunFails) {
  Observed o = running(false);
  o.job.reset();
  o.pods.clear();
  const json status = status_of(o, kStartAt + seconds(12));
  EXPECT_EQ(status["phase"], "Failed");
  EXPECT_EQ(status["reason"], "WorkerFailed");
  EXPECT_NE(status["message"].get<std::string>().find("the worker Job was deleted"),
            std::string::npos)
      << status["message"];
}

TEST(OperatorStatus, WorkerReportingARunErrorFails) {
  Observed o = running(true);
  auto results = worker_results(true);
  results[0].error = "cannot resolve checkout.shop.svc";
  o.results = folded(std::move(results));
  const json status = status_of(o, kStartAt + seconds(31));
  EXPECT_EQ(status["phase"], "Failed");
  EXPECT_EQ(status["reason"], "WorkerFailed");
  EXPECT_NE(status["message"].get<std::string>().find("worker 0 reported: cannot resolve"),
            std::string::npos);
}

TEST(OperatorStatus, WorkerExitingWithoutItsResultIsResultsLost) {
  Observed o = running(true);
  auto results = worker_results(true);
  results.erase(2);
  o.results = folded(std::move(results));
  o.pods[2] = pod_json(2, "Succeeded", false);
  const json status = status_of(o, kStartAt + seconds(40));
  EXPECT_EQ(status["phase"], "Failed");
  EXPECT_EQ(status["reason"], "ResultsLost");
  EXPECT_NE(status["message"].get<std::string>().find("worker 2 exited"), std::string::npos);
  EXPECT_EQ(status["workers"]["succeeded"], 2);  // the two whose final results are in hand
}

TEST(OperatorStatus, CompleteResultsWinOverALaterCrash) {
  Observed o = running(true);
  o.pods[0] = failed_pod(0, "Error", 1);  // died after its final result was collected
  EXPECT_EQ(status_of(o, kStartAt + seconds(31))["phase"], "Succeeded");
}

TEST(OperatorStatus, WorkersNeverReadyFailAfterTheStartTimeout) {
  Observed o = observe(loadtest_json());
  o.job = job_json();
  o.pods = {pod_json(0, "Running", true), waiting_pod(1, "ErrImagePull"),
            pod_json(2, "Pending", false)};
  // timeouts.start defaults to 5m, counted from the Job's creation.
  const json before = status_of(o, kJobCreated + minutes(5));
  EXPECT_EQ(before["phase"], "Starting");
  const json after = status_of(o, kJobCreated + minutes(5) + seconds(1));
  EXPECT_EQ(after["phase"], "Failed");
  EXPECT_EQ(after["reason"], "WorkersNotReady");
  const std::string message = after["message"];
  EXPECT_NE(message.find("1/3 workers ready"), std::string::npos) << message;
  EXPECT_NE(message.find("ErrImagePull"), std::string::npos) << message;
  EXPECT_NE(message.find("timeouts.start (5m)"), std::string::npos) << message;
  EXPECT_EQ(condition(after, "WorkersReady")["reason"], "WorkersNotReady");
  ASSERT_TRUE(start_deadline(o).has_value());
  EXPECT_EQ(*start_deadline(o), kJobCreated + minutes(5));
}

TEST(OperatorStatus, JobNeverCreatedFailsAfterTheStartTimeoutFromTheLoadTest) {
  json loadtest = loadtest_json();
  loadtest["spec"]["timeouts"] = {{"start", "1m"}};
  const Observed o = observe(loadtest);
  EXPECT_EQ(status_of(o, kCreated + seconds(59))["phase"], "Pending");
  const json status = status_of(o, kCreated + seconds(61));
  EXPECT_EQ(status["phase"], "Failed");
  EXPECT_EQ(status["reason"], "WorkersNotReady");
}

TEST(OperatorStatus, JobFailedWithoutPodsLeftFails) {
  Observed o = observe(loadtest_json());
  o.job = job_json("Failed");
  const json status = status_of(o, kCreated + seconds(30));
  EXPECT_EQ(status["phase"], "Failed");
  EXPECT_EQ(status["reason"], "WorkerFailed");
  EXPECT_NE(status["message"].get<std::string>().find("BackoffLimitExceeded"), std::string::npos);
}

// ---- stability and history ---------------------------------------------------------------

// Feeds a computed status back as the LoadTest's current status.
Observed with_status(Observed o, const json& status) {
  o.loadtest["status"] = status;
  return o;
}

TEST(OperatorStatus, RecomputingWithALaterClockChangesNothing) {
  struct Case {
    std::string name;
    Observed observed;
    Timestamp first;
  };
  Observed starting = observe(loadtest_json());
  starting.job = job_json();
  starting.pods = {pod_json(0, "Running", true), pod_json(1, "Pending", false)};
  Observed crashed = running(false);
  crashed.pods[0] = failed_pod(0, "Error", 2);
  json invalid = loadtest_json();
  invalid["spec"]["workers"] = 0;
  std::vector<Case> cases;
  cases.push_back({"pending", observe(loadtest_json()), kCreated + seconds(1)});
  cases.push_back({"starting", starting, kCreated + seconds(10)});
  cases.push_back({"succeeded", running(true), kStartAt + seconds(31)});
  cases.push_back({"failed", crashed, kStartAt + seconds(5)});
  cases.push_back({"invalid", observe(invalid), kCreated + seconds(1)});
  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    const json first = status_of(c.observed, c.first);
    const json second = status_of(with_status(c.observed, first), c.first + seconds(40));
    EXPECT_FALSE(status_changed(first, second)) << first.dump() << "\n" << second.dump();
  }
}

TEST(OperatorStatus, ConditionsKeepTheirTransitionTimeUntilTheirStatusFlips) {
  Observed o = observe(loadtest_json());
  o.job = job_json();
  for (uint32_t i = 0; i < 3; ++i) o.pods.push_back(pod_json(i, "Running", i != 2));
  const Timestamp t1 = kCreated + seconds(10);
  const json starting = status_of(o, t1);
  EXPECT_EQ(condition(starting, "WorkersReady")["lastTransitionTime"], format_time(t1));

  Observed run = running(false);
  run.loadtest["status"] = starting;
  const Timestamp t2 = kStartAt + seconds(5);
  const json status = status_of(run, t2);
  ASSERT_EQ(status["phase"], "Running");
  // WorkersReady flipped to True: new time. Completed stayed False and Passed
  // Unknown, with new reasons: their times stay.
  EXPECT_EQ(condition(status, "WorkersReady")["status"], "True");
  EXPECT_EQ(condition(status, "WorkersReady")["lastTransitionTime"], format_time(t2));
  EXPECT_EQ(condition(status, "Completed")["reason"], "Running");
  EXPECT_EQ(condition(status, "Completed")["lastTransitionTime"], format_time(t1));
  EXPECT_EQ(condition(status, "Passed")["lastTransitionTime"], format_time(t1));
  // startTime recorded on the first Running pass stays put even if the
  // operator restarted and lost start_issued_at.
  Observed later = running(false);
  later.start_issued_at.reset();
  later.loadtest["status"] = status;
  EXPECT_EQ(status_of(later, t2 + seconds(3))["startTime"], format_time(kStartAt));
}

TEST(OperatorStatus, FinalStatusSurvivesCleanupOfJobAndPods) {
  const json done = status_of(running(true), kStartAt + seconds(31));
  Observed after_cleanup = observe(loadtest_json());
  after_cleanup.loadtest["status"] = done;  // no Job, no pods, no results any more
  EXPECT_EQ(status_of(after_cleanup, kStartAt + minutes(30)), done);
}

TEST(OperatorStatus, EditAfterTheEndOnlyMovesObservedGeneration) {
  const json done = status_of(running(true), kStartAt + seconds(31));
  Observed edited = observe(loadtest_json());
  edited.loadtest["metadata"]["generation"] = 2;
  edited.loadtest["spec"]["workers"] = 5;
  edited.loadtest["status"] = done;
  const json status = status_of(edited, kStartAt + minutes(30));
  EXPECT_EQ(status["observedGeneration"], 2);
  EXPECT_EQ(condition(status, "Passed")["observedGeneration"], 2);
  json expected = done;
  expected["observedGeneration"] = 2;
  for (json& c : expected["conditions"]) c["observedGeneration"] = 2;
  EXPECT_EQ(status, expected);
  EXPECT_FALSE(
      status_changed(status, status_of(with_status(edited, status), kStartAt + minutes(31))));
}

TEST(OperatorStatus, EditedSpecAfterInvalidSpecIsDerivedAgain) {
  json invalid = loadtest_json();
  invalid["spec"]["load"]["connections"] = 1;
  const json failed = status_of(observe(invalid), kCreated + seconds(1));
  ASSERT_EQ(failed["reason"], "InvalidSpec");
  json fixed = loadtest_json();
  fixed["metadata"]["generation"] = 2;
  fixed["status"] = failed;
  const json status = status_of(observe(fixed), kCreated + seconds(20));
  EXPECT_EQ(status["phase"], "Pending");
  EXPECT_EQ(status["observedGeneration"], 2);
  EXPECT_EQ(condition(status, "Passed")["observedGeneration"], 2);
}

TEST(OperatorStatus, StartSkewFromTheWorkersWhenTheOperatorRecordedNone) {
  Observed o = running(false);
  // Workers started at +0, +4 and +8 ms.
  EXPECT_EQ(status_of(o, kStartAt + seconds(3))["workers"]["startSkewMs"], 8);
  auto results = worker_results(false);
  results.erase(1);  // not every worker has said when it started
  o.results = folded(std::move(results));
  EXPECT_FALSE(status_of(o, kStartAt + seconds(3))["workers"].contains("startSkewMs"));
}

// ---- what gates read --------------------------------------------------------------

json with_computed_status(json loadtest, const json& status) {
  loadtest["status"] = status;
  return loadtest;
}

TEST(OperatorStatus, GatesReadEveryComputedStateRight) {
  const Timestamp done = kStartAt + seconds(31);
  Observed starting = observe(loadtest_json());
  starting.job = job_json();
  starting.pods = {pod_json(0, "Running", true), waiting_pod(1, "ImagePullBackOff")};
  Observed crashed = running(false);
  crashed.pods[1] = failed_pod(1, "OOMKilled", 137);
  const struct {
    const char* name;
    Observed observed;
    Timestamp now;
    GateState expected;
  } rows[] = {
      {"pending", observe(loadtest_json()), kCreated + seconds(1), GateState::InProgress},
      {"starting", starting, kCreated + seconds(10), GateState::InProgress},
      {"running", running(false), kStartAt + seconds(10), GateState::InProgress},
      {"passed", running(true), done, GateState::Passed},
      {"failed gate", running(true, 53, 250000), done, GateState::Failed},
      {"failed run", crashed, kStartAt + seconds(12), GateState::Error},
  };
  for (const auto& row : rows) {
    const json status = status_of(row.observed, row.now);
    const GateReading reading = read_gate(with_computed_status(row.observed.loadtest, status));
    EXPECT_EQ(static_cast<int>(reading.state), static_cast<int>(row.expected))
        << row.name << ": " << reading.message;
    for (const json& c : status["conditions"]) {
      EXPECT_EQ(c["observedGeneration"], 1) << row.name << " " << c["type"];
    }
    EXPECT_EQ(condition(status, "Reconciling")["status"],
              row.expected == GateState::InProgress ? "True" : "False")
        << row.name;
  }
}

TEST(OperatorStatus, EditMidRunMovesEveryConditionToTheNewGeneration) {
  Observed o = running(false);
  o.loadtest["metadata"]["generation"] = 2;
  const json status = status_of(o, kStartAt + seconds(10));
  EXPECT_EQ(status["observedGeneration"], 2);
  for (const json& c : status["conditions"]) EXPECT_EQ(c["observedGeneration"], 2) << c["type"];
  // Before the operator wrote that, a gate reads the old status as stale.
  json before = o.loadtest;
  before["status"] = status_of(running(false), kStartAt + seconds(9));
  EXPECT_EQ(static_cast<int>(read_gate(before).state), static_cast<int>(GateState::InProgress));
}

TEST(OperatorStatus, FinalStatusOfAnOlderOperatorGainsTheGateConditions) {
  const Timestamp done = kStartAt + seconds(31);
  for (const bool pass : {true, false}) {
    const json full = status_of(pass ? running(true) : running(true, 53, 250000), done);
    json old = full;  // what an operator without Ready/Stalled/Finished wrote
    json kept_conditions = json::array();
    for (const json& c : full["conditions"]) {
      if (c["type"] == "WorkersReady" || c["type"] == "Completed" || c["type"] == "Passed") {
        kept_conditions.push_back(c);
      }
    }
    old["conditions"] = kept_conditions;
    const json status = status_of(with_status(observe(loadtest_json()), old), done + minutes(60));
    EXPECT_EQ(condition(status, "Ready")["status"], pass ? "True" : "False");
    EXPECT_EQ(condition(status, "Stalled")["status"], pass ? "False" : "True");
    EXPECT_EQ(condition(status, "Finished")["status"], "True");
    EXPECT_EQ(condition(status, "Reconciling")["status"], "False");
    // The conditions it had keep their transition times.
    EXPECT_EQ(condition(status, "Completed"), condition(full, "Completed"));
    EXPECT_EQ(condition(status, "Passed"), condition(full, "Passed"));
    json unchanged = status;
    unchanged.erase("conditions");
    old.erase("conditions");
    EXPECT_EQ(unchanged, old);
  }
}

// The LoadTest objects tests/gitops evaluates with kstatus, Flux's CEL
// evaluator and Argo CD's Lua when no cluster captured them: written by
// this same status code (KUBELOAD_UPDATE_GOLDEN=1 rewrites them), so a
// change to the status shows up there too.
std::map<std::string, json> gitops_fixtures() {
  const Timestamp done = kStartAt + seconds(31);
  std::map<std::string, json> out;
  const auto object = [](json loadtest, const json& status) {
    loadtest["status"] = status;
    return loadtest;
  };
  // Created, not seen by the operator yet: the status the CRD defaults.
  out["unseen"] = object(loadtest_json(), {{"observedGeneration", 0}});
  const Observed pending = observe(loadtest_json());
  out["pending"] = object(pending.loadtest, status_of(pending, kCreated + seconds(1)));
  Observed starting = observe(loadtest_json());
  starting.job = job_json();
  starting.pods = {pod_json(0, "Running", true), waiting_pod(1, "ContainerCreating"),
                   pod_json(2, "Running", false)};
  out["starting"] = object(starting.loadtest, status_of(starting, kCreated + seconds(5)));
  out["running"] = object(loadtest_json(), status_of(running(false), kStartAt + seconds(10)));
  const json passed = status_of(running(true), done);
  out["passed"] = object(loadtest_json(), passed);
  json no_gate = loadtest_json();
  no_gate["spec"].erase("thresholds");
  Observed no_gate_run = running(true);
  no_gate_run.loadtest = no_gate;
  no_gate_run.parsed = parse_loadtest(no_gate.dump());
  out["no-gate"] = object(no_gate, status_of(no_gate_run, done));
  const json failed_gate = status_of(running(true, 53, 250000), done);
  out["failed-gate"] = object(loadtest_json(), failed_gate);
  Observed crashed = running(false);
  crashed.pods[1] = failed_pod(1, "OOMKilled", 137);
  out["failed-run"] = object(loadtest_json(), status_of(crashed, kStartAt + seconds(12)));
  json invalid = loadtest_json();
  invalid["spec"]["thresholds"] = {"nope.p99 < 10ms"};
  out["invalid-spec"] = object(invalid, status_of(observe(invalid), kCreated + seconds(1)));
  // A test's first run, nothing to compare with: passed, Baseline=False
  // NoBaseline beside Ready=True; and the same with baseline.required: a
  // failed gate.
  for (const auto& [name, required] :
       {std::pair{"no-baseline", false}, std::pair{"no-baseline-required", true}}) {
    json first = loadtest_json();
    first["metadata"]["labels"]["kubeload.dev/test"] = "checkout";
    first["spec"]["baseline"] = {
        {"lastPassed", true}, {"required", required}, {"maxRegression", {{"p99", "10%"}}}};
    Observed first_run = running(true);
    first_run.loadtest = first;
    first_run.parsed = parse_loadtest(first.dump());
    out[name] = object(first, status_of(first_run, done));
  }
  // Passed while another run loaded the same pods (issue 29):
  // TargetShared=True beside Ready=True, still green.
  api::LoadTestStatus stored = passed.get<api::LoadTestStatus>();
  stored.target.emplace();
  stored.target->addresses = {"10.244.0.5", "10.96.0.10", "checkout.shop.svc"};
  api::LoadTestStatus shared = stored;
  plan_shared_target(stored, shared, "u-1", std::nullopt,
                     std::vector<OtherRun>{{"shop",
                                            "checkout-b",
                                            "u-2",
                                            kStartAt + seconds(3),
                                            std::nullopt,
                                            {"10.244.0.5", "10.96.0.20"}}},
                     done);
  out["shared-target"] = object(loadtest_json(), shared);
  // Passed with a worker at its 100m CPU limit (issue 30):
  // GeneratorSaturated=True beside Ready=True, still green.
  api::LoadTestStatus running_status = stored;
  running_status.phase = api::Phase::Running;
  api::LoadTestStatus saturated = passed.get<api::LoadTestStatus>();
  const std::map<uint32_t, WorkerReport> reports = {
      {0, WorkerReport{true, unix_ms(kStartAt), "", GeneratorCpu::of(2.91, 30, 0.1, 0.1)}},
      {1, WorkerReport{true, unix_ms(kStartAt), "", GeneratorCpu::of(1.2, 30, 0.1, 0.1)}},
      {2, WorkerReport{true, unix_ms(kStartAt), "", GeneratorCpu::of(1.1, 30, 0.1, 0.1)}}};
  saturated.workers->cpu = workers_cpu(reports, 3);
  plan_generator_saturation(running_status, saturated, reports, 3, done);
  out["generator-saturated"] = object(loadtest_json(), saturated);
  // Edited after the end; the operator has not seen generation 2 yet.
  json stale = object(loadtest_json(), passed);
  stale["metadata"]["generation"] = 2;
  stale["spec"]["workers"] = 2;
  out["stale-passed"] = stale;
  stale = object(loadtest_json(), failed_gate);
  stale["metadata"]["generation"] = 2;
  stale["spec"]["thresholds"] = {"p99 < 900ms"};
  out["stale-failed-gate"] = stale;
  return out;
}

TEST(OperatorStatusGolden, GitopsFixturesAreWhatTheStatusCodeWrites) {
  kubeload::golden::expect_golden_files(
      std::filesystem::path(KUBELOAD_SOURCE_DIR) / "tests/gitops/testdata/operator",
      gitops_fixtures(), "and run the tests in tests/gitops");
}

// ---- baseline ----------------------------------------------------------------------

TEST(OperatorStatus, BaselineRegressionsGateTheVerdict) {
  json loadtest = loadtest_json();
  loadtest["spec"]["baseline"] = {{"loadTestName", "checkout-yesterday"},
                                  {"maxRegression", {{"p99", "10%"}, {"rps", "5%"}}}};
  Observed o = running(true);
  o.loadtest = loadtest;
  o.parsed = parse_loadtest(loadtest.dump());
  ASSERT_TRUE(o.parsed.ok());
  const json current = status_of(running(true), kStartAt + seconds(31))["result"];
  const double p99 = current["latencyMs"]["p99"];
  const double rps = current["rps"];

  o.baseline_records = {{"checkout-yesterday-0a1b2c3d",
                         json{{"result", {{"latencyMs", {{"p99", p99 / 1.05}}}, {"rps", rps}}}}}};
  json status = status_of(o, kStartAt + seconds(31));
  EXPECT_EQ(status["verdict"], "Pass") << status["message"];
  EXPECT_EQ(status["message"], "all 2 thresholds met and within the baseline");
  EXPECT_EQ(status["baseline"]["passed"], true);
  EXPECT_EQ(status["baseline"]["deltas"]["p99"], "+5.0%");
  EXPECT_EQ(status["baseline"]["deltas"]["rps"], "+0.0%");
  EXPECT_EQ(status["baseline"]["loadTestName"], "checkout-yesterday");
  EXPECT_EQ(status["baseline"]["resultName"], "checkout-yesterday-0a1b2c3d");
  EXPECT_FALSE(status["baseline"].contains("results"));  // one record, no window
  EXPECT_EQ(condition(status, "Baseline")["status"], "True");
  EXPECT_EQ(condition(status, "Baseline")["reason"], "WithinBaseline");
  EXPECT_EQ(condition(status, "Baseline")["message"],
            "compared with checkout-yesterday-0a1b2c3d: p99 +5.0%, rps +0.0%");
  ASSERT_EQ(status["baseline"]["checks"].size(), 2u);
  EXPECT_EQ(status["baseline"]["checks"][0]["passed"], true);
  EXPECT_EQ(status["baseline"]["checks"][1]["passed"], true);

  o.baseline_records = {
      {"checkout-yesterday-0a1b2c3d",
       json{{"result", {{"latencyMs", {{"p99", p99 / 1.25}}}, {"rps", rps * 1.1}}}}}};
  status = status_of(o, kStartAt + seconds(31));
  EXPECT_EQ(condition(status, "Baseline")["status"], "False");
  EXPECT_EQ(condition(status, "Baseline")["reason"], "Regressed");
  EXPECT_EQ(status["phase"], "Succeeded");
  EXPECT_EQ(status["verdict"], "Fail");
  EXPECT_EQ(status["reason"], "ThresholdsFailed");
  EXPECT_EQ(status["baseline"]["passed"], false);
  EXPECT_EQ(status["baseline"]["deltas"]["p99"], "+25.0%");
  // Each check carries its own outcome, so a report never re-derives it
  // from the rounded delta: p99 25% slower (max 10%), rps 9.1% lower (max 5%).
  const json& checks = status["baseline"]["checks"];
  ASSERT_EQ(checks.size(), 2u) << checks;
  EXPECT_EQ(checks[0]["metric"], "p99");
  EXPECT_EQ(checks[0]["delta"], "+25.0%");
  EXPECT_EQ(checks[0]["maxRegressionPercent"], 10.0);
  EXPECT_DOUBLE_EQ(checks[0]["observed"].get<double>(), p99);
  EXPECT_DOUBLE_EQ(checks[0]["baseline"].get<double>(), p99 / 1.25);
  EXPECT_EQ(checks[0]["passed"], false);
  EXPECT_EQ(checks[1]["metric"], "rps");
  EXPECT_EQ(checks[1]["delta"], "-9.1%");
  EXPECT_EQ(checks[1]["passed"], false);
  EXPECT_NE(status["message"].get<std::string>().find("baseline p99 +25.0% (max 10.0%)"),
            std::string::npos)
      << status["message"];

  o.baseline_records.clear();  // no record of the named LoadTest
  status = status_of(o, kStartAt + seconds(31));
  EXPECT_EQ(status["verdict"], "Fail");
  EXPECT_EQ(condition(status, "Baseline")["reason"], "NoBaseline");
  EXPECT_EQ(status["baseline"]["message"],
            "no record with a result of a LoadTest named \"checkout-yesterday\"");
}

Observed last_passed(const json& baseline) {
  json loadtest = loadtest_json();
  loadtest["metadata"]["labels"]["kubeload.dev/test"] = "checkout";
  loadtest["spec"]["baseline"] = baseline;
  Observed o = running(true);
  o.loadtest = loadtest;
  o.parsed = parse_loadtest(loadtest.dump());
  EXPECT_TRUE(o.parsed.ok());
  return o;
}

TEST(OperatorStatus, FirstRunOfATestPassesALastPassedBaselineAndSaysSo) {
  const json status =
      status_of(last_passed({{"lastPassed", true}, {"maxRegression", {{"p99", "10%"}}}}),
                kStartAt + seconds(31));
  EXPECT_EQ(status["verdict"], "Pass");
  EXPECT_EQ(status["baseline"]["passed"], true);
  EXPECT_EQ(status["message"],
            "all 2 thresholds met; no earlier passed record of test \"checkout\" to compare with");
  EXPECT_EQ(condition(status, "Baseline")["status"], "False");
  EXPECT_EQ(condition(status, "Baseline")["reason"], "NoBaseline");
  EXPECT_EQ(condition(status, "Ready")["status"], "True");
}

TEST(OperatorStatus, AStoredFinalStatusKeepsItsBaselineCondition) {
  Observed o = last_passed({{"lastPassed", true}, {"maxRegression", {{"p99", "10%"}}}});
  const json ended = status_of(o, kStartAt + seconds(31));
  // A later pass (the target's use, a restart) derives the conditions again
  // from the stored status.
  o.loadtest["status"] = ended;
  const json again = status_of(o, kStartAt + seconds(90));
  EXPECT_EQ(condition(again, "Baseline")["reason"], "NoBaseline");
  EXPECT_EQ(condition(again, "Baseline")["message"], condition(ended, "Baseline")["message"]);
}

TEST(OperatorStatus, ARequiredBaselineWithNothingToCompareFailsTheGate) {
  const json status = status_of(
      last_passed({{"lastPassed", true}, {"required", true}, {"maxRegression", {{"p99", "10%"}}}}),
      kStartAt + seconds(31));
  EXPECT_EQ(status["phase"], "Succeeded");
  EXPECT_EQ(status["verdict"], "Fail");
  EXPECT_EQ(status["baseline"]["passed"], false);
  EXPECT_EQ(condition(status, "Baseline")["reason"], "NoBaseline");
  EXPECT_EQ(condition(status, "Ready")["status"], "False");
  EXPECT_NE(status["message"].get<std::string>().find("(baseline.required)"), std::string::npos)
      << status["message"];
}

TEST(OperatorStatus, AWindowComparesWithEachMetricsMedian) {
  Observed o =
      last_passed({{"lastPassed", true}, {"window", 3}, {"maxRegression", {{"p99", "10%"}}}});
  const double p99 = status_of(running(true), kStartAt + seconds(31))["result"]["latencyMs"]["p99"];
  // One noisy record (p99 / 3) would fail the run alone; the median does not.
  o.baseline_records = {{"checkout-3-c", json{{"result", {{"latencyMs", {{"p99", p99 / 3}}}}}}},
                        {"checkout-2-b", json{{"result", {{"latencyMs", {{"p99", p99}}}}}}},
                        {"checkout-1-a", json{{"result", {{"latencyMs", {{"p99", p99 * 1.1}}}}}}}};
  const json status = status_of(o, kStartAt + seconds(31));
  EXPECT_EQ(status["verdict"], "Pass") << status["message"];
  EXPECT_DOUBLE_EQ(status["baseline"]["checks"][0]["baseline"].get<double>(), p99);
  EXPECT_EQ(status["baseline"]["resultName"], "checkout-3-c");
  EXPECT_EQ(status["baseline"]["results"],
            json::array({"checkout-3-c", "checkout-2-b", "checkout-1-a"}));
  EXPECT_NE(
      condition(status, "Baseline")["message"].get<std::string>().find("the median of 3 records"),
      std::string::npos);
}

// ---- helpers ---------------------------------------------------------------------------

TEST(OperatorStatus, TimesRoundTripInKubernetesFormat) {
  EXPECT_EQ(format_time(kCreated), "2026-11-29T19:00:00Z");
  EXPECT_EQ(parse_time("2026-11-29T19:00:00.123456Z"), kCreated);
  EXPECT_EQ(format_time(kCreated + milliseconds(999)), "2026-11-29T19:00:00Z");
  EXPECT_FALSE(parse_time("2026-11-29 19:00:00Z").has_value());
  EXPECT_FALSE(parse_time("2026-02-30T19:00:00Z").has_value());
  EXPECT_FALSE(parse_time("2026-11-29T19:00:00+01:00").has_value());
  EXPECT_FALSE(parse_time("").has_value());
  EXPECT_FALSE(parse_time("2026-11-29T 9:00:00Z").has_value());
  EXPECT_FALSE(parse_time("+026-11-29T19:00:00Z").has_value());
}

TEST(OperatorStatus, CollectedResultReadsTheWorkersDocument) {
  json document = to_json(run_of(10, 1, 1000));
  document["worker"] = 2;
  document["startedAtMs"] = 1764442800123;
  const CollectedResult c = collected_result_from_json(document);
  EXPECT_TRUE(c.run.finished);
  EXPECT_EQ(c.run.result.requests, 11u);
  EXPECT_EQ(c.started_at_ms, 1764442800123);
  EXPECT_TRUE(c.error.empty());
  document["startedAtMs"] = 0;  // not started yet
  document["error"] = "boom";
  const CollectedResult d = collected_result_from_json(document);
  EXPECT_FALSE(d.started_at_ms.has_value());
  EXPECT_EQ(d.error, "boom");
  EXPECT_THROW(collected_result_from_json(json{{"version", "v0"}}), std::invalid_argument);
}

TEST(OperatorPhase, TableRulesInOrder) {
  PhaseFacts facts;
  facts.desired = 2;
  facts.job_exists = true;
  facts.ready = 2;
  EXPECT_EQ(decide_phase(facts).reason, "WorkersReady");
  facts.start_deadline_passed = true;  // all ready: the deadline no longer matters
  EXPECT_EQ(decide_phase(facts).phase, Phase::Starting);
  facts.start_issued = true;
  EXPECT_EQ(decide_phase(facts).phase, Phase::Running);
  facts.results_lost = "worker 1 exited";
  EXPECT_EQ(decide_phase(facts).reason, "ResultsLost");
  facts.worker_failure = "worker 0 failed";
  EXPECT_EQ(decide_phase(facts).reason, "WorkerFailed");
  facts.final_results = 2;
  EXPECT_EQ(decide_phase(facts).phase, Phase::Succeeded);
  facts.spec_valid = false;
  EXPECT_EQ(decide_phase(facts).reason, "InvalidSpec");
  EXPECT_TRUE(is_final(Phase::Failed));
  EXPECT_FALSE(is_final(Phase::Running));
  EXPECT_EQ(to_string(Phase::Starting), "Starting");
}

}  // namespace

namespace {

// A run of many named requests, each answered with hundreds of distinct
// status codes: its rows alone are over the status's bound.
TEST(OperatorStatus, AStatusOfManyRowsAndCodesStaysWithinItsBound) {
  Observed o = running(true);
  WorkerResults results(3);
  for (uint32_t worker = 0; worker < 3; ++worker) {
    RunResult run = run_of(1000, 0, 20000);
    run.request_results.clear();
    Result varied = run.result;
    for (int code = 100; code < 600; ++code) varied.status_codes[code] += 1;
    for (int n = 0; n < 100; ++n) {
      run.request_results.push_back({"request-" + std::to_string(n), varied});
      run.stages.push_back({n, 0.3, 10, std::nullopt, varied});
    }
    EXPECT_TRUE(results.fold(worker, collected(std::move(run))));
  }
  o.results = std::move(results);
  const json status = status_of(o, kStartAt + seconds(31));
  EXPECT_LE(status.dump().size(), kStatusSizeLimit);
  EXPECT_EQ(status["phase"], "Succeeded");
  const size_t shown = status.contains("requestResults") ? status["requestResults"].size() : 0;
  EXPECT_LT(shown, 100u);
  const std::string message = status["message"];
  EXPECT_NE(message.find("the status lists " + std::to_string(shown) + " of 100 named requests"),
            std::string::npos)
      << message;
  // Named requests go before stages: stages are dropped only once none is left.
  if (shown > 0) {
    EXPECT_EQ(status["stages"].size(), 100u);
  }
  EXPECT_NE(message.find("results ConfigMap"), std::string::npos) << message;
  // The headline result is whole, and the gate judged every row.
  EXPECT_EQ(status["result"]["requests"], 3000);
  // Computed again from its own status: the same.
  EXPECT_FALSE(status_changed(status, status_of(with_status(o, status), kStartAt + seconds(50))));
}

TEST(OperatorStatus, BoundingDropsRequestRowsBeforeStageRows) {
  api::LoadTestStatus status;
  status.message = "done";
  status.request_results = json::array();
  status.stages = json::array();
  for (int i = 0; i < 10; ++i) {
    status.request_results->push_back(
        {{"name", "r" + std::to_string(i)}, {"pad", std::string(1000, 'x')}});
    status.stages->push_back({{"index", i}, {"pad", std::string(1000, 'y')}});
  }
  const std::string note = bound_status_size(status, 9000);
  EXPECT_LE(json(status).dump().size(), 9000u);
  EXPECT_FALSE(status.request_results.has_value());  // all ten went first
  ASSERT_TRUE(status.stages.has_value());
  EXPECT_GT(status.stages->size(), 0u);
  EXPECT_NE(note.find("the status lists 0 of 10 named requests and "), std::string::npos) << note;
  // Within the bound: untouched.
  api::LoadTestStatus small;
  small.message = "done";
  EXPECT_EQ(bound_status_size(small, 15000), "");
  EXPECT_EQ(small.message, "done");
}

}  // namespace
