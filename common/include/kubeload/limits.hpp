#pragma once
// The limits of a LoadTest spec: how large a manifest may be, how long a run,
// how many items a list. The parser refuses anything beyond them with the
// field's path, and the CRD carries the same numbers.

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace kubeload {

// Input limits. A manifest larger than this is refused before parsing (the API
// server refuses requests of this size too), and so is a document with more
// nodes than this, counted before the document is built (yaml-cpp needs about
// half a kilobyte per node) and again with aliases expanded (anchors and
// aliases let a few hundred bytes describe billions of nodes: a "YAML bomb").
// Real LoadTests, status included, have a few thousand nodes at most.
inline constexpr size_t kMaxManifestBytes = 3 * 1024 * 1024;
inline constexpr size_t kMaxManifestNodes = 50000;

// Time limits. Every duration of a spec, and a run's planned length (warmup plus
// duration or all stages, or requests / rate in the open model), is at most a
// year: far beyond any load test, and small enough that adding it to any clock
// reading, summing stages or dividing by a rate stays inside 64-bit nanoseconds.
// A rate lies in [1 per kMaxRunLength, kMaxRate] for the same reason.
inline constexpr std::chrono::nanoseconds kMaxRunLength = std::chrono::hours(24 * 365);
inline constexpr double kMaxRate = 1e9;  // requests per second

// Size limits of a spec: the CRD's maxItems / maxLength / maxProperties carry the
// same numbers (tests/unit/common/crd_test.cpp checks that they agree), so what the API
// server admits, the parser admits, and a worker or the operator never holds more.
inline constexpr size_t kMaxRequests = 100;          // spec.requests
inline constexpr size_t kMaxStages = 100;            // spec.load.stages
inline constexpr size_t kMaxThresholds = 100;        // spec.thresholds
inline constexpr size_t kMaxHeaders = 100;           // spec.requests[].headers
inline constexpr size_t kMaxHeadersFrom = 50;        // spec.requests[].headersFrom
inline constexpr size_t kMaxExpectedStatuses = 100;  // spec.requests[].expect.status
inline constexpr size_t kMaxSelectorTerms = 20;      // matchLabels, matchExpressions, values
inline constexpr size_t kMaxHeaderValueBytes = 8192;
inline constexpr size_t kMaxBodyBytes = 256 * 1024;
inline constexpr size_t kMaxImageBytes = 1024;
inline constexpr uint64_t kMaxWorkers = 1000;       // spec.workers
inline constexpr uint64_t kMaxBaselineWindow = 20;  // spec.baseline.window
inline constexpr uint64_t kMaxHistoryKeep = 10000;  // spec.history.keep
inline constexpr size_t kMaxVariants = 8;           // spec.variants
inline constexpr uint64_t kMaxRounds = 50;          // spec.experiment.rounds
inline constexpr size_t kMaxComparisons = 20;       // spec.experiment.comparisons
// spec.search: a step's connections, and how much a step may grow by.
inline constexpr int64_t kMaxSearchConnections = 1000000;
inline constexpr double kMaxSearchFactor = 10;
// A search never runs more steps than this: growth from the start to the
// ceiling, then bisection (each halves the bracket).
inline constexpr uint64_t kMaxSearchSteps = 30;
// HTTP/2 streams per connection (spec.load.maxStreams): servers advertise at
// most a few hundred.
inline constexpr uint64_t kMaxStreams = 1000;
// Scenarios (spec.scenarios, spec.data): enough for any journey a person
// writes by hand, small enough that compiling every template, extraction and
// check of a spec stays well under a millisecond.
inline constexpr size_t kMaxScenarios = 32;          // spec.scenarios
inline constexpr size_t kMaxSteps = 64;              // spec.scenarios[].steps
inline constexpr size_t kMaxExtractions = 32;        // spec.scenarios[].steps[].extract
inline constexpr size_t kMaxChecks = 32;             // spec.scenarios[].steps[].checks
inline constexpr size_t kMaxDataSources = 8;         // spec.data
inline constexpr size_t kMaxDataColumns = 100;       // spec.data[].columns
inline constexpr size_t kMaxExpressionBytes = 1024;  // a JSON pointer, regex, header or cookie name
inline constexpr size_t kMaxCheckTextBytes = 8192;   // checks[].equals, matches, bodyContains
inline constexpr size_t kMaxDataFileBytes = 4096;    // spec.data[].file, a path
// A step's path (a template; the CRD bounds spec.requests[].path alike).
inline constexpr size_t kMaxTargetPathBytes = 8192;
// A think time or a pacing longer than this is a pause, not a user thinking.
inline constexpr std::chrono::nanoseconds kMaxThinkTime = std::chrono::hours(1);
// Weights are summed by the request mix; this bound keeps any sum of them far
// from overflowing 32 bits.
inline constexpr uint64_t kMaxWeight = 1000000;  // spec.requests[].weight, spec.scenarios[].weight

}  // namespace kubeload
