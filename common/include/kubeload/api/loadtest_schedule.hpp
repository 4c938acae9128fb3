#pragma once
// The LoadTestSchedule object (kubeload.dev/v1alpha1) as typed values: a
// cron schedule that creates LoadTests from a template, as a CronJob creates
// Jobs. Field by field as crds/kubeload.dev_loadtestschedules.yaml declares
// it, each type with one to_json and one from_json (nlohmann's ADL hooks);
// tests/unit/common/crd_test.cpp checks the status schema against them.
// Reading is lenient, as for the LoadTest (kubeload/api/loadtest.hpp): a
// member missing or of another type reads as unset (or its CRD default).

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/api/status.hpp"

namespace kubeload::api {

// What a tick does while an earlier run is still going. Forbid (the
// default): the tick is skipped, as two load tests against one target
// measure each other. Replace: the running one is deleted and the tick's
// run created. Allow: both run.
enum class ConcurrencyPolicy { Allow, Forbid, Replace };

inline constexpr std::array<std::pair<ConcurrencyPolicy, std::string_view>, 3> kConcurrencyPolicies{
    {
        {ConcurrencyPolicy::Allow, "Allow"},
        {ConcurrencyPolicy::Forbid, "Forbid"},
        {ConcurrencyPolicy::Replace, "Replace"},
    }};

constexpr std::string_view to_string(ConcurrencyPolicy value) noexcept {
  return detail::spell(kConcurrencyPolicies, value);
}
std::optional<ConcurrencyPolicy> parse_concurrency_policy(std::string_view text) noexcept;

// The CRD's defaults, spelled once.
inline constexpr ConcurrencyPolicy kDefaultConcurrencyPolicy = ConcurrencyPolicy::Forbid;
inline constexpr int64_t kDefaultSuccessfulRunsHistoryLimit = 3;
inline constexpr int64_t kDefaultFailedRunsHistoryLimit = 1;

// spec.template: the LoadTest each tick creates.
struct LoadTestTemplate {
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  nlohmann::json spec;  // a LoadTest's spec, as given (parse_loadtest reads it)
  bool operator==(const LoadTestTemplate&) const = default;
};

struct LoadTestScheduleSpec {
  std::string schedule;   // cron (operator/cron.hpp)
  std::string time_zone;  // IANA name; "": UTC
  bool suspend = false;
  ConcurrencyPolicy concurrency_policy = kDefaultConcurrencyPolicy;
  std::optional<int64_t> starting_deadline_seconds;
  int64_t successful_runs_history_limit = kDefaultSuccessfulRunsHistoryLimit;
  int64_t failed_runs_history_limit = kDefaultFailedRunsHistoryLimit;
  LoadTestTemplate template_;
  bool operator==(const LoadTestScheduleSpec&) const = default;
};

// A run that has not finished: status.active[].
struct ActiveRun {
  std::string name;
  std::string uid;
  bool operator==(const ActiveRun&) const = default;
};

// A finished run the schedule still keeps: status.lastRuns[], newest first.
struct LastRun {
  std::string name;
  std::optional<Time> scheduled_at;
  std::optional<Phase> phase;
  std::optional<Verdict> verdict;
  std::optional<Time> completion_time;
  std::string message;
  bool operator==(const LastRun&) const = default;
};

struct LoadTestScheduleStatus {
  int64_t observed_generation = 0;
  std::optional<Time> last_schedule_time;  // the last tick a run was created for
  std::optional<Time> last_skipped_time;   // the last tick skipped (Forbid, too late)
  std::optional<Time> next_schedule_time;  // unset while suspended or invalid
  std::vector<ActiveRun> active;
  std::vector<LastRun> last_runs;
  std::vector<Condition> conditions;
  bool operator==(const LoadTestScheduleStatus&) const = default;
};

struct LoadTestSchedule {
  ObjectMeta metadata;
  LoadTestScheduleSpec spec;
  LoadTestScheduleStatus status;
};

void to_json(nlohmann::json& out, const LoadTestScheduleSpec& value);
void from_json(const nlohmann::json& in, LoadTestScheduleSpec& value);
void to_json(nlohmann::json& out, const LoadTestScheduleStatus& value);
void from_json(const nlohmann::json& in, LoadTestScheduleStatus& value);
void to_json(nlohmann::json& out, const LoadTestSchedule& value);
void from_json(const nlohmann::json& in, LoadTestSchedule& value);

}  // namespace kubeload::api
