#pragma once
// The vocabulary of a LoadTest's status: its phase, verdict, condition types
// and reasons, as enums with exactly one spelling each (api.md,
// docs/reference.md "Phases and reasons"). Decision code compares enums,
// never strings; the spelling appears here once and is written to the status
// by to_string. docs/reference.md is checked against kReasons
// (tests/docs/check_reference.py).

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace kubeload::api {

// ---- phase

// Succeeded and Failed are final: the status stays as it is when the Job and
// pods go away.
enum class Phase { Pending, Starting, Running, Succeeded, Failed };

inline constexpr std::array<std::pair<Phase, std::string_view>, 5> kPhases{{
    {Phase::Pending, "Pending"},
    {Phase::Starting, "Starting"},
    {Phase::Running, "Running"},
    {Phase::Succeeded, "Succeeded"},
    {Phase::Failed, "Failed"},
}};

// ---- verdict: the gate's outcome (thresholds and baseline)

// None: the run has no gate (or has not finished).
enum class Verdict { None, Pass, Fail };

inline constexpr std::array<std::pair<Verdict, std::string_view>, 3> kVerdicts{{
    {Verdict::None, "None"},
    {Verdict::Pass, "Pass"},
    {Verdict::Fail, "Fail"},
}};

// ---- conditions

enum class ConditionType {
  WorkersReady,
  Completed,
  Passed,
  Finished,
  Reconciling,
  Stalled,
  Ready,
  TargetMetrics,
  Baseline,
  TargetShared,
  GeneratorSaturated,
};

inline constexpr std::array<std::pair<ConditionType, std::string_view>, 11> kConditionTypes{{
    {ConditionType::WorkersReady, "WorkersReady"},
    {ConditionType::Completed, "Completed"},
    {ConditionType::Passed, "Passed"},
    {ConditionType::Finished, "Finished"},
    {ConditionType::Reconciling, "Reconciling"},
    {ConditionType::Stalled, "Stalled"},
    {ConditionType::Ready, "Ready"},
    {ConditionType::TargetMetrics, "TargetMetrics"},
    {ConditionType::Baseline, "Baseline"},
    {ConditionType::TargetShared, "TargetShared"},
    {ConditionType::GeneratorSaturated, "GeneratorSaturated"},
}};

enum class ConditionStatus { True, False, Unknown };

inline constexpr std::array<std::pair<ConditionStatus, std::string_view>, 3> kConditionStatuses{{
    {ConditionStatus::True, "True"},
    {ConditionStatus::False, "False"},
    {ConditionStatus::Unknown, "Unknown"},
}};

// ---- reasons: of the phase (status.reason), of the conditions, of the
// target measurement (the TargetMetrics condition), and of a
// LoadTestSchedule's conditions and Events

enum class Reason {
  // phase reasons (operator/phase.hpp's table)
  InvalidSpec,
  ThresholdsPassed,
  ThresholdsFailed,
  Completed,
  WorkerFailed,
  ResultsLost,
  PolicyViolation,
  JobRejected,
  ObjectRejected,
  JobNameTaken,
  ObjectNameTaken,
  SecretNotConsented,
  RunDeadlineExceeded,
  WorkersUnreachable,
  WorkerTokenRefused,
  WorkerClockSkew,
  ResultsTooLarge,
  ResultsUnreadable,
  Running,
  WorkersNotReady,
  WaitingForWorkers,
  WorkersReady,
  // condition reasons
  AllWorkersReady,
  NoGate,
  DurationReached,
  RequestsReached,
  StagesCompleted,
  // the baseline comparison (Baseline)
  WithinBaseline,
  Regressed,
  NoBaseline,
  // the target measurement (TargetMetrics)
  Measured,
  WaitingForScrapes,
  PrometheusNotConfigured,
  NothingMeasured,
  NoPodSelector,
  TargetInOtherNamespace,
  WindowTooShort,
  TargetNotFound,
  NoTargetPods,
  Forbidden,
  NoSamples,
  TooFewSamples,
  PrometheusQueryFailed,
  PrometheusUnavailable,
  // whether another run loaded the same target pods (TargetShared)
  TargetShared,
  TargetNotShared,
  // a LoadTestSchedule's conditions (Ready, Stalled)
  LastRunPassed,
  LastRunFailed,
  NoRunFinished,
  // a LoadTestSchedule's Events
  RunCreated,
  RunReplaced,
  RunStillActive,
  MissedSchedule,
  // an experiment's (spec.variants) phase and conditions
  RoundFailed,
  VariantTargetsOverlap,
  RoundsCompleted,
  ComparisonsPassed,
  ComparisonFailed,
  Inconclusive,
  // a capacity search's (spec.search) phase and conditions
  CapacityFound,
  NoPassingStep,
  CeilingReached,
  StepFailed,
  StepsCompleted,
  // whether a worker used (nearly) all of its CPU (GeneratorSaturated)
  GeneratorSaturated,
  GeneratorNotSaturated,
  GeneratorCpuNotMeasured,
};

inline constexpr std::array<std::pair<Reason, std::string_view>, 67> kReasons{{
    {Reason::InvalidSpec, "InvalidSpec"},
    {Reason::ThresholdsPassed, "ThresholdsPassed"},
    {Reason::ThresholdsFailed, "ThresholdsFailed"},
    {Reason::Completed, "Completed"},
    {Reason::WorkerFailed, "WorkerFailed"},
    {Reason::ResultsLost, "ResultsLost"},
    {Reason::PolicyViolation, "PolicyViolation"},
    {Reason::JobRejected, "JobRejected"},
    {Reason::ObjectRejected, "ObjectRejected"},
    {Reason::JobNameTaken, "JobNameTaken"},
    {Reason::ObjectNameTaken, "ObjectNameTaken"},
    {Reason::SecretNotConsented, "SecretNotConsented"},
    {Reason::RunDeadlineExceeded, "RunDeadlineExceeded"},
    {Reason::WorkersUnreachable, "WorkersUnreachable"},
    {Reason::WorkerTokenRefused, "WorkerTokenRefused"},
    {Reason::WorkerClockSkew, "WorkerClockSkew"},
    {Reason::ResultsTooLarge, "ResultsTooLarge"},
    {Reason::ResultsUnreadable, "ResultsUnreadable"},
    {Reason::Running, "Running"},
    {Reason::WorkersNotReady, "WorkersNotReady"},
    {Reason::WaitingForWorkers, "WaitingForWorkers"},
    {Reason::WorkersReady, "WorkersReady"},
    {Reason::AllWorkersReady, "AllWorkersReady"},
    {Reason::NoGate, "NoGate"},
    {Reason::DurationReached, "DurationReached"},
    {Reason::RequestsReached, "RequestsReached"},
    {Reason::StagesCompleted, "StagesCompleted"},
    {Reason::WithinBaseline, "WithinBaseline"},
    {Reason::Regressed, "Regressed"},
    {Reason::NoBaseline, "NoBaseline"},
    {Reason::Measured, "Measured"},
    {Reason::WaitingForScrapes, "WaitingForScrapes"},
    {Reason::PrometheusNotConfigured, "PrometheusNotConfigured"},
    {Reason::NothingMeasured, "NothingMeasured"},
    {Reason::NoPodSelector, "NoPodSelector"},
    {Reason::TargetInOtherNamespace, "TargetInOtherNamespace"},
    {Reason::WindowTooShort, "WindowTooShort"},
    {Reason::TargetNotFound, "TargetNotFound"},
    {Reason::NoTargetPods, "NoTargetPods"},
    {Reason::Forbidden, "Forbidden"},
    {Reason::NoSamples, "NoSamples"},
    {Reason::TooFewSamples, "TooFewSamples"},
    {Reason::PrometheusQueryFailed, "PrometheusQueryFailed"},
    {Reason::PrometheusUnavailable, "PrometheusUnavailable"},
    {Reason::TargetShared, "TargetShared"},
    {Reason::TargetNotShared, "TargetNotShared"},
    {Reason::LastRunPassed, "LastRunPassed"},
    {Reason::LastRunFailed, "LastRunFailed"},
    {Reason::NoRunFinished, "NoRunFinished"},
    {Reason::RunCreated, "RunCreated"},
    {Reason::RunReplaced, "RunReplaced"},
    {Reason::RunStillActive, "RunStillActive"},
    {Reason::MissedSchedule, "MissedSchedule"},
    {Reason::RoundFailed, "RoundFailed"},
    {Reason::VariantTargetsOverlap, "VariantTargetsOverlap"},
    {Reason::RoundsCompleted, "RoundsCompleted"},
    {Reason::ComparisonsPassed, "ComparisonsPassed"},
    {Reason::ComparisonFailed, "ComparisonFailed"},
    {Reason::Inconclusive, "Inconclusive"},
    {Reason::CapacityFound, "CapacityFound"},
    {Reason::NoPassingStep, "NoPassingStep"},
    {Reason::CeilingReached, "CeilingReached"},
    {Reason::StepFailed, "StepFailed"},
    {Reason::StepsCompleted, "StepsCompleted"},
    {Reason::GeneratorSaturated, "GeneratorSaturated"},
    {Reason::GeneratorNotSaturated, "GeneratorNotSaturated"},
    {Reason::GeneratorCpuNotMeasured, "GeneratorCpuNotMeasured"},
}};

// ---- spelling: to_string writes a value, parse_* reads one (nullopt for a
// spelling this version does not know, e.g. a reason of a newer operator)

namespace detail {
// Every enum value has exactly one row (the unit tests check each table);
// were one missing, the first row's spelling would come back, not a crash.
template <typename Enum, std::size_t N>
constexpr std::string_view spell(const std::array<std::pair<Enum, std::string_view>, N>& table,
                                 Enum value) noexcept {
  for (const auto& [entry, spelling] : table) {
    if (entry == value) return spelling;
  }
  return table.front().second;
}
// The value spelled `text`, or nullopt.
template <typename Enum, std::size_t N>
constexpr std::optional<Enum> parse(const std::array<std::pair<Enum, std::string_view>, N>& table,
                                    std::string_view text) noexcept {
  for (const auto& [entry, spelling] : table) {
    if (spelling == text) return entry;
  }
  return std::nullopt;
}
}  // namespace detail

constexpr std::string_view to_string(Phase value) noexcept {
  return detail::spell(kPhases, value);
}
constexpr std::string_view to_string(Verdict value) noexcept {
  return detail::spell(kVerdicts, value);
}
constexpr std::string_view to_string(ConditionType value) noexcept {
  return detail::spell(kConditionTypes, value);
}
constexpr std::string_view to_string(ConditionStatus value) noexcept {
  return detail::spell(kConditionStatuses, value);
}
constexpr std::string_view to_string(Reason value) noexcept {
  return detail::spell(kReasons, value);
}
std::optional<Phase> parse_phase(std::string_view text) noexcept;
std::optional<Verdict> parse_verdict(std::string_view text) noexcept;
std::optional<ConditionType> parse_condition_type(std::string_view text) noexcept;
std::optional<ConditionStatus> parse_condition_status(std::string_view text) noexcept;
std::optional<Reason> parse_reason(std::string_view text) noexcept;

// Succeeded or Failed: what "final" means, once.
constexpr bool is_final(Phase phase) noexcept {
  return phase == Phase::Succeeded || phase == Phase::Failed;
}
// A status's phase as written ("" or a spelling of a newer operator: not final).
bool is_final_phase(std::string_view phase) noexcept;

// A status value as the JSON document holds it: std::string(to_string(x)).
template <typename Enum>
std::string name(Enum value) {
  return std::string(to_string(value));
}

}  // namespace kubeload::api
