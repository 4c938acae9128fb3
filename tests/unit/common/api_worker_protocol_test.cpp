// The worker protocol's documents (kubeload/api/worker_protocol.hpp): each
// reads back as itself, is spelled on the wire as workers and operators have
// always spelled it, and a field of the wrong type is named in the error.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/worker_protocol.hpp"
#include "kubeload/result.hpp"

namespace kubeload::api {
namespace {

using nlohmann::json;

RunResult some_run(uint64_t requests, bool finished) {
  RunResult run;
  run.result.requests = requests;
  run.result.status_codes[200] = requests - 1;
  run.result.errors.timeout = 1;
  run.result.duration_seconds = 12.5;
  run.result.bytes_received = 4096;
  for (uint64_t i = 0; i < requests; ++i) run.result.latency.record(900 + int64_t(i % 70));
  run.warmup_requests = 4;
  run.stages.push_back(StageResult{0, 12.5, 8u, std::nullopt, run.result});
  run.request_results.push_back(NamedResult{"checkout", run.result});
  run.finished = finished;
  return run;
}

// What a decoder says about `in`; "" when it reads.
std::string error_of(const std::function<void()>& decode) {
  try {
    decode();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ApiWorkerProtocol, StartAnswerIsSpelledAsBeforeAndReadsBack) {
  const StartAnswer answer{true, 3, 1764442800250};
  EXPECT_EQ(to_json(answer).dump(), R"({"startAt":1764442800250,"started":true,"worker":3})");
  EXPECT_EQ(start_answer_from_json(to_json(answer)), answer);
  // A start "at once" carries 0.
  EXPECT_EQ(start_answer_from_json(json::parse(R"({"started":true,"worker":0,"startAt":0})")),
            (StartAnswer{true, 0, 0}));
}

TEST(ApiWorkerProtocol, FinishAnswerIsSpelledAsBeforeAndReadsBack) {
  EXPECT_EQ(to_json(FinishAnswer{}).dump(), R"({"finished":true})");
  EXPECT_EQ(finish_answer_from_json(to_json(FinishAnswer{})), FinishAnswer{});
  EXPECT_EQ(finish_answer_from_json(json::object()), FinishAnswer{false});
}

TEST(ApiWorkerProtocol, ResultHeadReadsBack) {
  const ResultHead started{7, "6f1c-uid", 1764442800123, "interrupted (SIGTERM)", 1764442805000};
  EXPECT_EQ(to_json(started), (json{{"worker", 7},
                                    {"loadTestUid", "6f1c-uid"},
                                    {"startedAtMs", 1764442800123},
                                    {"error", "interrupted (SIGTERM)"},
                                    {"clockMs", 1764442805000}}));
  EXPECT_EQ(result_head_from_json(to_json(started)), started);

  // Before the start: startedAtMs 0, no error field.
  const ResultHead waiting{2, "6f1c-uid", std::nullopt, "", std::nullopt};
  EXPECT_EQ(to_json(waiting), json::parse(R"({"worker":2,"loadTestUid":"6f1c-uid",
                                               "startedAtMs":0})"));
  EXPECT_EQ(result_head_from_json(to_json(waiting)), waiting);
}

TEST(ApiWorkerProtocol, AFinalHeadSaysWhatTheWorkerUsedOfItsCpu) {
  // Issue 30: 2.9 CPU seconds in a 30 s window under a 100m limit.
  ResultHead head{0, "6f1c-uid", 1764442800123, "", std::nullopt};
  head.cpu = GeneratorCpu::of(2.9, 30, 0.1, 0.1);
  const json written = to_json(head);
  EXPECT_EQ(written["cpu"], json::parse(R"({"seconds":2.9,"windowSeconds":30.0,"cores":0.1,
                                             "limitCores":0.1,"utilization":0.9666666666666667})"));
  EXPECT_EQ(result_head_from_json(written), head);
  // Without a limit there is no limitCores; a worker before it wrote none.
  head.cpu = GeneratorCpu::of(1, 10, std::nullopt, 2);
  EXPECT_FALSE(to_json(head)["cpu"].contains("limitCores"));
  EXPECT_EQ(result_head_from_json(to_json(head)), head);
  head.cpu.reset();
  EXPECT_FALSE(to_json(head).contains("cpu"));
  EXPECT_EQ(result_head_from_json(to_json(head)), head);
}

TEST(ApiWorkerProtocol, ResultHeadAcceptsWhatItAlwaysDid) {
  // 0 or less is "not started"; fields left out read as their defaults.
  EXPECT_EQ(result_head_from_json(json{{"startedAtMs", -5}}).started_at_ms, std::nullopt);
  EXPECT_EQ(result_head_from_json(json{{"startedAtMs", 0}}).started_at_ms, std::nullopt);
  EXPECT_EQ(result_head_from_json(json::object()), ResultHead{});
  EXPECT_EQ(result_head_from_json(json{{"error", nullptr}, {"loadTestUid", nullptr}}),
            ResultHead{});
  // An unsigned start (as a JSON parser reads a positive number) is a start.
  EXPECT_EQ(result_head_from_json(json::parse(R"({"startedAtMs":1764442800123})")).started_at_ms,
            1764442800123);
}

TEST(ApiWorkerProtocol, FinalResultDocumentIsWhatTheWriterWritesAndReadsBack) {
  ResultDocument document{ResultHead{1, "6f1c-uid", 1764442800123, "", std::nullopt},
                          some_run(300, true)};
  const json whole = to_json(document);
  // The worker streams it: the same document.
  ResultDocumentWriter writer(std::make_shared<const RunResult>(document.run),
                              to_json(document.head));
  std::string written, piece;
  while (writer.next(piece)) written += piece;
  EXPECT_EQ(json::parse(written), whole);

  const ResultDocument read = result_document_from_json(whole);
  EXPECT_EQ(read.head, document.head);
  EXPECT_EQ(to_json(read.run), to_json(document.run));
  EXPECT_TRUE(read.run.finished);
  EXPECT_EQ(read.run.result, document.run.result);
}

TEST(ApiWorkerProtocol, ProgressDocumentIsSpelledAsBeforeAndReadsAsAPartialResult) {
  ProgressDocument progress;
  progress.head = ResultHead{4, "6f1c-uid", 1764442800123, "", 1764442800200};
  progress.warmup_requests = 12;
  progress.result.requests = 40;
  progress.result.status_codes[200] = 39;
  progress.result.errors.connect = 1;
  progress.result.duration_seconds = 3.5;
  progress.stage = 1;
  const json written = to_json(progress);
  std::vector<std::string> keys;
  for (const auto& [key, value] : written.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"clockMs", "finished", "loadTestUid", "result", "stage",
                                            "startedAtMs", "version", "warmupRequests", "worker"}));
  EXPECT_EQ(written["version"], "v1");
  EXPECT_EQ(written["finished"], false);
  EXPECT_FALSE(written["result"].contains("histogram")) << "counters only";

  const ProgressDocument read = progress_document_from_json(written);
  EXPECT_EQ(read.head, progress.head);
  EXPECT_EQ(read.warmup_requests, 12u);
  EXPECT_EQ(read.result, progress.result);
  EXPECT_EQ(read.stage, 1);
  // Before the first stage it is in the warm-up.
  progress.stage = -1;
  EXPECT_EQ(progress_document_from_json(to_json(progress)).stage, -1);

  // The operator reads it as any /result document: not finished.
  const ResultDocument as_result = result_document_from_json(written);
  EXPECT_FALSE(as_result.run.finished);
  EXPECT_EQ(as_result.run.result.requests, 40u);
  EXPECT_EQ(as_result.head, progress.head);
}

TEST(ApiWorkerProtocol, TerminationSummaryIsSpelledAsBeforeAndReadsBack) {
  const RunResult run = some_run(300, true);
  const TerminationSummary summary = TerminationSummary::of(run, "interrupted");
  EXPECT_EQ(summary.requests, 300u);
  EXPECT_EQ(summary.failures, 1u);
  EXPECT_EQ(summary.warmup_requests, 4u);
  EXPECT_EQ(summary.bytes_received, 4096u);
  EXPECT_DOUBLE_EQ(summary.rps, 24.0);
  EXPECT_DOUBLE_EQ(summary.p99_ms, LatencySummary::of(run.result.latency).p99);
  const json written = to_json(summary);
  std::vector<std::string> keys;
  for (const auto& [key, value] : written.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"bytesReceived", "durationSeconds", "error", "failures",
                                            "maxMs", "p50Ms", "p99Ms", "requests", "rps",
                                            "warmupRequests"}));
  EXPECT_EQ(termination_summary_from_json(written), summary);
  EXPECT_FALSE(to_json(TerminationSummary::of(run, "")).contains("error"));
}

TEST(ApiWorkerProtocol, AFieldOfTheWrongTypeIsNamed) {
  const json head = to_json(ResultHead{1, "6f1c-uid", 1764442800123, "", std::nullopt});
  const json document =
      to_json(ResultDocument{ResultHead{1, "6f1c-uid", 1, "", std::nullopt}, some_run(5, true)});
  struct Row {
    std::string what;
    std::function<void()> decode;
    std::string expected;  // the start of the message
  };
  const auto with = [](json in, const std::string& key, json value) {
    in[key] = std::move(value);
    return in;
  };
  const std::vector<Row> rows = {
      {"worker as text", [&] { result_head_from_json(with(head, "worker", "1")); },
       "worker: must be a non-negative integer"},
      {"negative worker", [&] { result_head_from_json(with(head, "worker", -1)); },
       "worker: must be a non-negative integer"},
      {"worker past 32 bits", [&] { result_head_from_json(with(head, "worker", 1ull << 33)); },
       "worker: must be a worker index"},
      {"uid as number", [&] { result_head_from_json(with(head, "loadTestUid", 7)); },
       "loadTestUid: must be a string"},
      {"start as text", [&] { result_head_from_json(with(head, "startedAtMs", "soon")); },
       "startedAtMs: must be an integer"},
      {"start as fraction", [&] { result_head_from_json(with(head, "startedAtMs", 1.5)); },
       "startedAtMs: must be an integer"},
      {"error as number", [&] { result_head_from_json(with(head, "error", 3)); },
       "error: must be a string"},
      {"head not an object", [&] { result_head_from_json(json::array()); },
       "a result document: must be a JSON object"},
      {"document's uid", [&] { result_document_from_json(with(document, "loadTestUid", true)); },
       "loadTestUid: must be a string"},
      {"document's result", [&] { result_document_from_json(with(document, "result", 7)); },
       "result: must be an object"},
      {"progress stage as text",
       [&] {
         progress_document_from_json(with(with(document, "finished", false), "stage", "two"));
       },
       "stage: must be an integer"},
      {"progress stage below the warm-up",
       [&] { progress_document_from_json(with(with(document, "finished", false), "stage", -2)); },
       "stage: must be a stage's index or -1"},
      {"progress that is final", [&] { progress_document_from_json(document); },
       "finished: must be false"},
      {"started as text",
       [&] {
         start_answer_from_json(json{{"started", "yes"}, {"worker", 0}, {"startAt", 0}});
       },
       "started: must be true or false"},
      {"start at as text",
       [&] {
         start_answer_from_json(json{{"started", true}, {"worker", 0}, {"startAt", "now"}});
       },
       "startAt: must be an integer"},
      {"finished as text",
       [&] {
         finish_answer_from_json(json{{"finished", "yes"}});
       },
       "finished: must be true or false"},
      {"summary's requests",
       [&] {
         termination_summary_from_json(json{{"requests", -1}});
       },
       "requests: must be a non-negative integer"},
      {"cpu not an object", [&] { result_head_from_json(with(head, "cpu", 0.5)); },
       "cpu: must be a JSON object"},
      {"cpu without seconds",
       [&] {
         result_head_from_json(
             with(head, "cpu", json{{"windowSeconds", 30}, {"cores", 1}, {"utilization", 0}}));
       },
       "cpu.seconds: is required"},
      {"cpu seconds negative",
       [&] {
         result_head_from_json(
             with(head, "cpu",
                  json{{"seconds", -1}, {"windowSeconds", 30}, {"cores", 1}, {"utilization", 0}}));
       },
       "cpu.seconds: must be a finite number of at least 0, got -1"},
      {"cpu utilization as text",
       [&] {
         result_head_from_json(with(
             head, "cpu",
             json{{"seconds", 1}, {"windowSeconds", 30}, {"cores", 1}, {"utilization", "high"}}));
       },
       "cpu.utilization: must be a number"},
      {"cpu of no cores",
       [&] {
         result_head_from_json(
             with(head, "cpu",
                  json{{"seconds", 1}, {"windowSeconds", 30}, {"cores", 0}, {"utilization", 0}}));
       },
       "cpu.cores: must be above 0, got 0"},
      {"cpu limit of nothing",
       [&] {
         result_head_from_json(with(head, "cpu",
                                    json{{"seconds", 1},
                                         {"windowSeconds", 30},
                                         {"cores", 1},
                                         {"utilization", 0},
                                         {"limitCores", 0}}));
       },
       "cpu.limitCores: must be above 0, got 0"},
      {"summary's rps",
       [&] {
         termination_summary_from_json(json{{"rps", "fast"}});
       },
       "rps: must be a number"},
      {"summary's error",
       [&] {
         termination_summary_from_json(json{{"error", json::array()}});
       },
       "error: must be a string"},
  };
  for (const Row& row : rows) {
    const std::string message = error_of(row.decode);
    EXPECT_EQ(message.rfind(row.expected, 0), 0u) << row.what << ": " << message;
  }
}

}  // namespace
}  // namespace kubeload::api
