#pragma once
// The LoadTest spec (kubeload.dev/v1alpha1), parsed and validated the same way
// by `loadgen run` and by the operator. Validation reports every problem, each
// with its field path (`spec.load.rate: must be > 0`).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeload/limits.hpp"
#include "kubeload/threshold.hpp"

namespace kubeload {

struct FieldError {
  std::string path;     // "spec.load.rate"
  std::string message;  // "must be > 0"
  // A document-level problem (YAML syntax, empty input) has an empty path.
  std::string to_string() const { return path.empty() ? message : path + ": " + message; }
};

struct ServiceRef {
  std::string name;
  std::string namespace_;       // empty: the LoadTest's namespace
  uint16_t port = 80;           // when omitted: 80 for http, 443 for https
  std::string scheme = "http";  // http | https
};

// A Kubernetes LabelSelector (metav1.LabelSelector): every matchLabels pair
// and every matchExpressions requirement must hold.
struct LabelRequirement {
  enum class Operator { In, NotIn, Exists, DoesNotExist };
  std::string key;
  Operator op = Operator::In;
  std::vector<std::string> values;  // In, NotIn: at least one; Exists, DoesNotExist: none
  bool operator==(const LabelRequirement&) const = default;
};
struct LabelSelector {
  std::map<std::string, std::string> match_labels;
  std::vector<LabelRequirement> match_expressions;
  bool empty() const { return match_labels.empty() && match_expressions.empty(); }
  bool operator==(const LabelSelector&) const = default;
};
// The selector in the syntax of the API's labelSelector query parameter:
// "app=nginx,tier in (api,web),!canary".
std::string to_string(const LabelSelector& selector);

struct SecretKeyRef {
  std::string name;
  std::string key;
};

// A key of a Secret or a ConfigMap in the LoadTest's namespace.
struct ObjectKeyRef {
  enum class Kind { secret, config_map } kind = Kind::secret;
  std::string name;
  std::string key;
  bool operator==(const ObjectKeyRef&) const = default;
};

// spec.target.tls: how https targets are verified. Verified against the
// system's CAs unless a CA bundle is given or verification is switched off.
struct TlsSpec {
  bool insecure_skip_verify = false;
  std::optional<ObjectKeyRef> ca_from;  // PEM CA bundle, mounted into the worker pods
};

struct HeaderFrom {
  std::string name;  // header name
  SecretKeyRef secret_key_ref;
};

struct Expectation {
  std::vector<int> status;              // empty: 2xx and 3xx succeed
  std::optional<uint64_t> body_length;  // opt-in length check
  bool operator==(const Expectation&) const = default;
};

struct RequestSpec {
  std::string name;  // "default" for the implicit request, else required
  std::string method = "GET";
  std::string path;                                          // empty: the target URL's path
  std::vector<std::pair<std::string, std::string>> headers;  // in manifest order
  std::vector<HeaderFrom> headers_from;
  std::string body;
  uint32_t weight = 1;
  Expectation expect;
};

// spec.scenarios: user journeys (docs/scenarios.md). A virtual user runs one
// scenario's steps in order, iteration after iteration; each step is a
// request whose path, headers and body are templates (${token},
// ${user.name}, ${vu}, ...), then extractions into the virtual user's
// variables and checks of the response, then an optional think time.

// How long a virtual user waits after a step (think time).
struct ThinkTime {
  enum class Distribution { none, constant, uniform, exponential };
  Distribution distribution = Distribution::none;
  std::chrono::nanoseconds constant{0};  // constant
  std::chrono::nanoseconds min{0};       // uniform: from min to max
  std::chrono::nanoseconds max{0};
  std::chrono::nanoseconds mean{0};  // exponential
  bool operator==(const ThinkTime&) const = default;
};

// steps[].extract[]: a value of the response into a variable of the virtual
// user. Exactly one of json (a JSON pointer), header (a field name), cookie
// (a Set-Cookie name) and regex (a PCRE2 pattern on the body; `group`).
struct ExtractSpec {
  enum class From { json, header, cookie, regex };
  std::string variable;  // steps[].extract[].name
  From from = From::json;
  std::string expression;
  std::optional<uint32_t> group;  // regex only
  bool operator==(const ExtractSpec&) const = default;
};

// steps[].checks[]: a condition on the response beyond its status; a failed
// check fails the step (error kind `check`).
struct CheckSpec {
  enum class Kind { json_equals, json_matches, body_contains };
  Kind kind = Kind::body_contains;
  std::string json;      // the JSON pointer of json_equals / json_matches
  std::string expected;  // the text, the pattern, or what the body contains
  bool operator==(const CheckSpec&) const = default;
};

struct StepSpec {
  // The step's result row (a request row, as spec.requests[].name): steps of
  // several scenarios that share a name share a row, as JMeter's samplers
  // with one label do.
  std::string name;
  std::string method = "GET";
  std::string path;                                          // a template
  std::vector<std::pair<std::string, std::string>> headers;  // values are templates
  std::string body;                                          // a template
  Expectation expect;
  std::vector<ExtractSpec> extract;
  std::vector<CheckSpec> checks;
  ThinkTime think_time;
  bool operator==(const StepSpec&) const = default;
};

struct ScenarioSpec {
  std::string name;
  uint32_t weight = 1;  // share of the virtual users (closed) or iterations (open)
  std::vector<StepSpec> steps;
  // A failed extraction (nothing found) ends the iteration (the default) or
  // lets it go on with the variable empty.
  bool end_iteration_on_extract_miss = true;
  // A failed step (any error kind) ends the iteration.
  bool end_iteration_on_failure = false;
  bool cookies = true;  // a cookie jar per virtual user
  // Pacing: an iteration of a virtual user starts no sooner than this after
  // the start of its previous one (unset: right after it).
  std::optional<std::chrono::nanoseconds> pacing;
  bool operator==(const ScenarioSpec&) const = default;
};

// spec.data[]: rows of test data that templates read as ${SOURCE.COLUMN}.
struct DataSourceSpec {
  enum class Format { csv, jsonl };
  // unique: each row once in the whole run, across every thread of every
  // worker; sequential: each virtual user walks the rows from its own offset;
  // random: a row drawn per iteration.
  enum class Mode { unique, sequential, random };
  // unique only: when the rows run out, the virtual user stops (its
  // iterations end), or the rows are handed out again from the start.
  enum class OnExhausted { stop, recycle };
  std::string name;
  Format format = Format::csv;
  Mode mode = Mode::sequential;
  OnExhausted on_exhausted = OnExhausted::stop;
  std::optional<ObjectKeyRef> from;  // in the cluster: a ConfigMap or Secret key
  std::string file;                  // loadgen run: a local file (relative to the manifest)
  // Declared columns: templates are checked against them before the run, and
  // the data's header must hold them. Empty: checked when the data is read.
  std::vector<std::string> columns;
  bool operator==(const DataSourceSpec&) const = default;
};

// After validation a stage carries exactly the field of the run's model:
// connections in the closed model, rate in the open model.
struct StageSpec {
  std::chrono::nanoseconds duration{0};
  std::optional<uint64_t> connections;
  std::optional<double> rate;
};

// The model: without stages, `rate` set => open model, unset => closed model
// with `connections` (default kDefaultConnections). With stages, the stages set
// the load: every stage gives a rate (open model) or every stage gives
// connections (closed model), and `rate` and `connections` are not set. After
// validation, duration and requests are never both unset unless there are
// stages, and `duration` is never set together with stages (the stages define
// the duration).
inline constexpr uint64_t kDefaultConnections = 10;

// spec.load.engine and loadgen's --engine: the loop of plain HTTP/1.1 and
// h2c. auto: io_uring where the kernel and seccomp allow it, else epoll (h2c:
// Asio's); loadgen/engine/engine_choice.hpp decides; https is always Asio's.
enum class EngineRequest { automatic, io_uring, epoll };
// "auto" | "io_uring" | "epoll".
const char* to_string(EngineRequest request) noexcept;
std::optional<EngineRequest> parse_engine_request(std::string_view name) noexcept;

// A scenario run reads the same fields: each connection is a virtual user
// (its own connection, cookie jar and variables) and `rate` starts
// iterations per second, each on a free virtual user.
struct LoadSpec {
  std::optional<uint64_t> connections;  // closed model without stages
  std::optional<double> rate;           // open model without stages
  std::optional<uint64_t> max_connections;
  std::optional<std::chrono::nanoseconds> duration;
  std::optional<uint64_t> requests;
  // Scenarios: iterations to complete across the run (-n of a scenario run);
  // `requests` is not set then.
  std::optional<uint64_t> iterations;
  std::optional<std::chrono::nanoseconds> warmup;
  std::optional<uint64_t> warmup_requests;
  std::vector<StageSpec> stages;
  std::chrono::nanoseconds timeout = std::chrono::seconds(30);
  bool keep_alive = true;
  EngineRequest engine = EngineRequest::automatic;
  // HTTP/2: concurrent streams per connection (h2load's -m); 1 for HTTP/1.1.
  uint32_t max_streams = 1;

  bool open_model() const noexcept {
    return rate.has_value() || (!stages.empty() && stages.front().rate.has_value());
  }
};

// A key and its operator, as a toleration (spec.workerTemplate.tolerations)
// or a node selector requirement (anywhere in spec.workerTemplate.affinity)
// holds them. An operator that is not a string reads as "".
struct SchedulingTerm {
  std::string key;
  std::string op;
  bool operator==(const SchedulingTerm&) const = default;
};

// The worker pods' image, and what the operator's scheduling rules read of
// the rest of spec.workerTemplate. resources, nodeSelector, tolerations and
// affinity are validated for their shape here and passed through to the
// pods from the manifest as written, by the operator's Job builder.
struct WorkerTemplate {
  std::string image;
  std::map<std::string, std::string> node_selector;
  std::vector<SchedulingTerm> tolerations;  // one per toleration, in order
  bool affinity_set = false;                // a non-empty affinity
  // Every requirement of the affinity (a map with a key and an operator),
  // in document order.
  std::vector<SchedulingTerm> affinity_requirements;
};

// spec.baseline: what the run is compared with, always a LoadTestResult
// record (api/loadtest_result.hpp), never a LoadTest that may be gone.
// Exactly one of load_test_name (the newest record of that LoadTest name),
// result_name (one record) and last_passed (the newest passed records of the
// test, `window` of them: each metric's median).
struct BaselineSpec {
  std::string load_test_name;
  std::string result_name;
  bool last_passed = false;
  uint32_t window = 1;
  // Nothing to compare with fails the gate (NoBaseline) instead of passing
  // as a test's first run.
  bool required = false;
  std::map<std::string, double> max_regression_percent;  // "p99" -> 10
};

// spec.history: how many of the test's LoadTestResult records to keep,
// within the admin's policy (unset: the policy's defaults).
struct HistorySpec {
  std::optional<uint32_t> keep;                     // the newest N
  std::optional<std::chrono::nanoseconds> max_age;  // and all newer than this
};

// spec.variants[]: one setup an experiment compares (docs/experiments.md).
// Its target replaces spec.target's url, service and podSelector in each of
// its rounds; its headers are added to every request.
struct VariantSpec {
  std::string name;                // an RFC 1123 label, unique in the spec
  std::optional<std::string> url;  // exactly one of url / service
  std::optional<ServiceRef> service;
  std::optional<LabelSelector> pod_selector;
  std::vector<std::pair<std::string, std::string>> headers;
};

// spec.experiment: how the variants are run and compared. Each round runs
// every variant once, as a LoadTest of its own, in a balanced order (A B,
// B A, A B, ...); comparisons are gates over the rounds
// (kubeload/comparison.hpp).
struct ExperimentSpec {
  uint32_t rounds = 6;
  std::vector<std::string> comparisons;  // as written; parsed by the decoder
};

// spec.search: a capacity search (docs/experiments.md "Capacity search").
// Each step is a LoadTest of its own at one open-model rate or one number of
// connections, judged by spec.thresholds; the steps grow from `start` by
// `factor` until one fails (or `max`, or the admin's ceiling, is reached),
// then bisect between the highest passing and the lowest failing value
// until the two are within `precision`.
enum class SearchOver { rate, connections };
inline constexpr double kDefaultSearchFactor = 2;
inline constexpr double kDefaultSearchPrecisionPercent = 10;
struct SearchSpec {
  SearchOver over = SearchOver::rate;  // spec.search.rate or spec.search.connections
  double start = 0;                    // requests/s, or connections
  std::optional<double> max;
  double factor = kDefaultSearchFactor;
  // The final bracket's width: a percent of the highest passing value when
  // `precision_percent`, else in the value's unit (requests/s, connections).
  double precision = kDefaultSearchPrecisionPercent;
  bool precision_percent = true;
};

enum class CleanupPolicy { Always, OnSuccess, Never };

// spec.target.protocol: how requests travel. http2 is HTTP/2 over TLS (ALPN
// h2, https URLs only); h2c is cleartext HTTP/2 with prior knowledge (http
// URLs only).
enum class Protocol { http1, http2, h2c };
// "http1" | "http2" | "h2c" (the spelling of the field, the reports and the
// metrics' protocol label).
const char* to_string(Protocol protocol) noexcept;
std::optional<Protocol> parse_protocol(std::string_view name) noexcept;

struct LoadTestSpec {
  // metadata.name; for a manifest with only metadata.generateName (made to
  // be `kubectl create`d, a new run each time), that prefix without its
  // trailing '-'. The operator always sees the name the API server gave.
  std::string name;
  std::string generate_name;  // metadata.generateName
  std::string namespace_;     // metadata.namespace
  std::map<std::string, std::string> labels;
  std::optional<std::string> url;  // exactly one of url / service
  std::optional<ServiceRef> service;
  TlsSpec tls;                          // spec.target.tls
  Protocol protocol = Protocol::http1;  // spec.target.protocol
  // spec.target.podSelector: the target's pods in the LoadTest's namespace,
  // whose CPU and memory the operator reads from Prometheus (status.target).
  // Unset: the pods behind spec.target.service.
  std::optional<LabelSelector> pod_selector;
  // spec.target.allowInsecureSecretHeaders: headersFrom values may go over
  // plain http or to an unverified https server (refused otherwise).
  bool allow_insecure_secret_headers = false;
  // Never empty after parsing unless `scenarios` is set (then empty: the
  // steps are the requests).
  std::vector<RequestSpec> requests;
  std::vector<ScenarioSpec> scenarios;  // spec.scenarios
  std::vector<DataSourceSpec> data;     // spec.data
  LoadSpec load;
  uint32_t workers = 1;
  WorkerTemplate worker_template;
  std::vector<Threshold> thresholds;
  std::optional<BaselineSpec> baseline;
  // Two or more: the LoadTest is an experiment, run as rounds of LoadTests
  // of its own (one per variant and round), never a Job of its own.
  std::vector<VariantSpec> variants;
  ExperimentSpec experiment;
  // Set: the LoadTest is a capacity search, run as steps of LoadTests of its
  // own, never a Job of its own.
  std::optional<SearchSpec> search;
  HistorySpec history;
  CleanupPolicy cleanup = CleanupPolicy::OnSuccess;
  std::chrono::nanoseconds start_timeout = std::chrono::minutes(5);
  // spec.timeouts.run: how long the measured run may take from the start
  // barrier. Unset: derived from the load for a run bounded by time.
  std::optional<std::chrono::nanoseconds> run_timeout;
  // spec.ttlSecondsAfterFinished: the operator deletes the finished LoadTest
  // this long after its completionTime, once its LoadTestResult record is
  // written (never one a GitOps tool applied: it would apply it again). Unset: kept.
  std::optional<std::chrono::seconds> ttl_after_finished;
};

struct ParsedLoadTest {
  LoadTestSpec spec;
  std::vector<FieldError> errors;  // empty: valid
  bool ok() const { return errors.empty(); }
};

// The environment variable a worker pod receives its run's token in (the
// operator's Job builder sets it from the run's Secret; `loadgen worker` reads it).
inline constexpr const char* kWorkerTokenEnv = "KUBELOAD_WORKER_TOKEN";

// Whether a header value holds CR, LF or NUL: written into a request, such a
// value would split it (header injection). Inline values and values from
// Secrets are both refused for it, without echoing them.
bool header_value_breaks_line(std::string_view value) noexcept;

// A whole manifest (apiVersion, kind, metadata, spec). JSON is accepted too,
// so the operator parses what the API server returns with the same code:
// metadata fields other than name/namespace/labels and a top-level `status`
// are ignored; any other unknown field is an error. Never throws on bad input:
// every problem found is in `errors`, in document order, followed by the
// problems that involve several fields. (kubeload/spec_yaml.hpp takes a
// document already built with yaml-cpp.)
ParsedLoadTest parse_loadtest(std::string_view yaml_or_json);

}  // namespace kubeload
