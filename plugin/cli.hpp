#pragma once
// kubectl-kubeload's command line and the pure decisions behind it: argv ->
// what to do, a LoadTest -> the exit status, a manifest -> the object that
// starts a new run. Every bad value is a UsageError naming the flag and value.

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/spec.hpp"
#include "plugin/printers.hpp"
#include "plugin/usage_error.hpp"
#include "reports/report.hpp"
#include "reports/trend.hpp"

namespace kubeload::plugin {

// The exit statuses every command shares.
inline constexpr int kExitPass = 0;        // run: verdict Pass (or no gate); others: done
inline constexpr int kExitGateFailed = 1;  // run: the run finished and missed its gate
inline constexpr int kExitError = 2;       // bad input, API errors, a failed run, a timeout

enum class Command { run, report, compare, history, completion, complete, help, version };
// compare and history print tables: text for people, markdown for a PR
// comment, json for scripts.
enum class TableFormat { text, markdown, json };

// A run as report and compare name it: kubectl's TYPE/NAME, or a bare NAME
// that may be either (a LoadTest, else a LoadTestResult record, else the
// newest record of a LoadTest of that name that is gone).
struct RunReference {
  enum class Kind { any, loadtest, record };
  Kind kind = Kind::any;
  std::string name;
  std::string argument;  // as given, for messages
  bool operator==(const RunReference&) const = default;
};
// NAME, lt/NAME or ltr/NAME, the type spelled as kubectl takes it (lt,
// loadtest, loadtests, loadtest.kubeload.dev, ltr, loadtestresult,
// loadtestresults, loadtestresult.kubeload.dev; any case). Throws UsageError
// naming `verb` and the argument for another type or a bad name.
RunReference parse_run_reference(const std::string& verb, const std::string& argument);
// The kind a TYPE of TYPE/NAME names (any case); nullopt for another type.
std::optional<RunReference::Kind> run_reference_kind(const std::string& type);

struct Options {
  Command command = Command::help;
  std::string help_topic;  // "run", "report", ... for `COMMAND --help`; empty: the overview
  // kubectl's connection flags
  std::string kubeconfig;
  std::string context;
  std::string as;                                            // --as: impersonate this user
  std::vector<std::string> as_groups;                        // --as-group (repeatable)
  std::optional<std::chrono::milliseconds> request_timeout;  // --request-timeout; 0: none
  std::string namespace_;  // empty: the manifest's, else the context's
  // run
  std::string filename;
  bool wait = true;
  std::optional<std::chrono::nanoseconds> timeout;  // unset: default_wait_timeout(spec)
  // run and report
  loadgen::ReportFormat format = loadgen::ReportFormat::text;
  // run: --report FORMAT=FILE, more reports written to files at the end
  std::vector<std::pair<loadgen::ReportFormat, std::string>> report_files;
  // report: one run; compare: two or more (parse_run_reference)
  std::vector<RunReference> runs;
  // run and report: the html report's trend, the test's last N runs from
  // their records (--trend N; 0: none)
  size_t trend = loadgen::kDefaultTrendRuns;
  // history
  std::string test;
  std::optional<uint32_t> limit;
  // compare and history
  TableFormat table_format = TableFormat::text;
  // run, report and history: -o json|yaml|name|jsonpath=T prints the
  // LoadTest objects as kubectl does, instead of the report or the table.
  std::optional<ObjectOutput> object_output;
  // history: -A (every namespace) and -l (ANDed with kubeload.dev/test=TEST)
  bool all_namespaces = false;
  std::string selector;
  // completion: the shell; __complete: the words after it, the last one
  // being completed (completion.hpp)
  std::string shell;
  std::vector<std::string> words;
};

// argv without the program name. Throws UsageError.
Options parse_arguments(const std::vector<std::string>& args);
// The overview, or one command's usage ("run", "report", "compare", "history").
std::string usage_text(const std::string& topic = {});

// ---- run ----

// Whether the operator has finished with this LoadTest: phase Succeeded or
// Failed, written for the object's current generation.
bool is_finished(const nlohmann::json& loadtest);

struct Outcome {
  int exit_code = kExitError;
  std::string summary;  // one line for stderr: "verdict Pass: all 3 thresholds met"
};
// The exit status of a finished LoadTest: 0 for Succeeded with verdict Pass
// (or None when the spec has no gate), 1 for Succeeded with verdict Fail, 2
// for Failed and for any status that does not add up (a verdict None on a
// gated spec, Pass with a threshold marked failed, an unfinished run).
Outcome outcome_of(const nlohmann::json& loadtest);

// One progress line for stderr: "Running 40%, 4/4 workers ready, 12,345
// requests, 4,967.4/s, p99 18.200 ms, 0.00% errors".
std::string progress_line(const nlohmann::json& loadtest);

// The object that starts a new run of the manifest: metadata.generateName
// from its name, the kubeload.dev/test label kept (or set to the name), the
// namespace resolved as kubectl does (the flag, else the manifest's, else
// `default_namespace`; a flag that contradicts the manifest is an error),
// server-set fields and status dropped. The spec is validated with the same
// parser the operator uses. Throws UsageError naming the file and field.
struct RunObject {
  nlohmann::json object;
  std::string namespace_;
  std::string test;
  LoadTestSpec spec;
};
RunObject run_object_from_manifest(const std::string& manifest_text, const std::string& source,
                                   const std::string& namespace_flag,
                                   const std::string& default_namespace);

// How long `run` waits when --timeout is not given: the start timeout, the
// warm-up and the planned duration, plus five minutes for scheduling and
// collection; one hour for runs bounded by a request count alone.
std::chrono::nanoseconds default_wait_timeout(const LoadTestSpec& spec);

// ---- compare and history ----

// Runs side by side, each with its change against the first: rps, p50, p90,
// p99 (percent) and the error rate (percentage points). A LoadTestResult
// shows as the LoadTest it records.
// One experiment (a LoadTest with spec.variants, docs/experiments.md) shows
// its variants side by side instead, with each one's differences from the
// first (mean per round and 95% interval) and the comparisons' outcomes
// (write_experiment_compare). Throws UsageError for one run that is not an
// experiment, or an experiment among several runs.
void write_compare(std::ostream& out, const std::vector<nlohmann::json>& loadtests,
                   TableFormat format);
// Whether a LoadTest (or its record) is an experiment: spec.variants or
// status.experiment.
bool is_experiment(const nlohmann::json& loadtest);
void write_experiment_compare(std::ostream& out, const nlohmann::json& loadtest,
                              TableFormat format);
// The runs of one test as a table, in newest_first order, at most `limit` of
// them; with `all_namespaces`, a NAMESPACE column (text, markdown) or field
// (json) first. `loadtests` may hold LoadTestResult records (runs_of_test):
// such a run shows as its LoadTest, marked deleted.
void write_history(std::ostream& out, std::vector<nlohmann::json> loadtests, TableFormat format,
                   std::optional<uint32_t> limit, bool all_namespaces = false);

// The runs of one test, newest first (creationTimestamp, then name), at most
// `limit` of them: the order of history's table and of its -o output. A
// LoadTestResult sorts as the LoadTest it records (reports/recorded_run.hpp:
// its run's start stands for the LoadTest's creation).
std::vector<nlohmann::json> newest_first(std::vector<nlohmann::json> loadtests,
                                         std::optional<uint32_t> limit);

// Each run of a test once: its LoadTest while it exists, else its
// LoadTestResult record (the LoadTest was deleted). A record is the
// LoadTest's when its kubeload.dev/loadtest-uid label (else loadTest.uid) is
// the LoadTest's uid; a LoadTest without a record (still running, or from an
// operator before records) is kept. Unordered: newest_first orders them.
std::vector<nlohmann::json> runs_of_test(std::vector<nlohmann::json> loadtests,
                                         std::vector<nlohmann::json> records);

// The newest of `records` that records a LoadTest named `loadtest_name`
// (loadTest.name): what compare and report read for a LoadTest that is gone.
std::optional<nlohmann::json> newest_record_of(const std::vector<nlohmann::json>& records,
                                               const std::string& loadtest_name);

// Checks a label selector (-l) as the API server parses it: comma-separated
// key, !key, key=value, key==value, key!=value, key in (v1,v2),
// key notin (v1,v2), key>N, key<N. Throws UsageError naming the bad
// requirement.
void check_label_selector(const std::string& flag, const std::string& selector);

}  // namespace kubeload::plugin
