#include "kubeload/api/loadtest_schedule.hpp"

#include "kubeload/api/meta.hpp"
#include "kubeload/json_access.hpp"
#include "kubeload/rfc3339.hpp"
#include "lenient.hpp"

namespace kubeload::api {
namespace {

using json_access::member;
using json_access::text;
using lenient::flag;
using lenient::integer;
using lenient::list_of;
using lenient::string_map;
using lenient::time_of;
using nlohmann::json;

json to_json(const ActiveRun& run) {
  return {{"name", run.name}, {"uid", run.uid}};
}
ActiveRun active_run(const json& in) {
  return {text(member(in, "name")), text(member(in, "uid"))};
}

json to_json(const LastRun& run) {
  json out = {{"name", run.name}, {"message", run.message}};
  if (run.scheduled_at) out["scheduledAt"] = rfc3339::format(*run.scheduled_at);
  if (run.phase) out["phase"] = to_string(*run.phase);
  if (run.verdict) out["verdict"] = to_string(*run.verdict);
  if (run.completion_time) out["completionTime"] = rfc3339::format(*run.completion_time);
  return out;
}
LastRun last_run(const json& in) {
  LastRun run;
  run.name = text(member(in, "name"));
  run.scheduled_at = time_of(member(in, "scheduledAt"));
  run.phase = parse_phase(text(member(in, "phase")));
  run.verdict = parse_verdict(text(member(in, "verdict")));
  run.completion_time = time_of(member(in, "completionTime"));
  run.message = text(member(in, "message"));
  return run;
}

}  // namespace

std::optional<ConcurrencyPolicy> parse_concurrency_policy(std::string_view text) noexcept {
  return detail::parse(kConcurrencyPolicies, text);
}

void to_json(json& out, const LoadTestScheduleSpec& spec) {
  json metadata = json::object();
  if (!spec.template_.labels.empty()) metadata["labels"] = spec.template_.labels;
  if (!spec.template_.annotations.empty()) metadata["annotations"] = spec.template_.annotations;
  out = {{"schedule", spec.schedule},
         {"suspend", spec.suspend},
         {"concurrencyPolicy", to_string(spec.concurrency_policy)},
         {"successfulRunsHistoryLimit", spec.successful_runs_history_limit},
         {"failedRunsHistoryLimit", spec.failed_runs_history_limit},
         {"template",
          {{"metadata", std::move(metadata)},
           {"spec", spec.template_.spec.is_null() ? json::object() : spec.template_.spec}}}};
  if (!spec.time_zone.empty()) out["timeZone"] = spec.time_zone;
  if (spec.starting_deadline_seconds) {
    out["startingDeadlineSeconds"] = *spec.starting_deadline_seconds;
  }
}
void from_json(const json& in, LoadTestScheduleSpec& spec) {
  spec = LoadTestScheduleSpec{};
  spec.schedule = text(member(in, "schedule"));
  spec.time_zone = text(member(in, "timeZone"));
  spec.suspend = flag(member(in, "suspend"));
  spec.concurrency_policy = parse_concurrency_policy(text(member(in, "concurrencyPolicy")))
                                .value_or(kDefaultConcurrencyPolicy);
  spec.starting_deadline_seconds = integer(member(in, "startingDeadlineSeconds"));
  spec.successful_runs_history_limit = integer(member(in, "successfulRunsHistoryLimit"))
                                           .value_or(kDefaultSuccessfulRunsHistoryLimit);
  spec.failed_runs_history_limit =
      integer(member(in, "failedRunsHistoryLimit")).value_or(kDefaultFailedRunsHistoryLimit);
  const json& template_ = member(in, "template");
  spec.template_.labels = string_map(member(member(template_, "metadata"), "labels"));
  spec.template_.annotations = string_map(member(member(template_, "metadata"), "annotations"));
  spec.template_.spec = member(template_, "spec");
}

void to_json(json& out, const LoadTestScheduleStatus& status) {
  out = json::object();
  out["observedGeneration"] = status.observed_generation;
  if (status.last_schedule_time) {
    out["lastScheduleTime"] = rfc3339::format(*status.last_schedule_time);
  }
  if (status.last_skipped_time) {
    out["lastSkippedTime"] = rfc3339::format(*status.last_skipped_time);
  }
  if (status.next_schedule_time) {
    out["nextScheduleTime"] = rfc3339::format(*status.next_schedule_time);
  }
  json active = json::array();
  for (const ActiveRun& run : status.active) active.push_back(to_json(run));
  out["active"] = std::move(active);
  json runs = json::array();
  for (const LastRun& run : status.last_runs) runs.push_back(to_json(run));
  out["lastRuns"] = std::move(runs);
  out["conditions"] = status.conditions;
}
void from_json(const json& in, LoadTestScheduleStatus& status) {
  status = LoadTestScheduleStatus{};
  status.observed_generation = integer(member(in, "observedGeneration")).value_or(0);
  status.last_schedule_time = time_of(member(in, "lastScheduleTime"));
  status.last_skipped_time = time_of(member(in, "lastSkippedTime"));
  status.next_schedule_time = time_of(member(in, "nextScheduleTime"));
  status.active = list_of<ActiveRun>(member(in, "active"), active_run);
  status.last_runs = list_of<LastRun>(member(in, "lastRuns"), last_run);
  status.conditions = list_of<Condition>(member(in, "conditions"),
                                         [](const json& item) { return item.get<Condition>(); });
}

void to_json(json& out, const LoadTestSchedule& schedule) {
  out = {{"apiVersion", kApiVersion},
         {"kind", kScheduleKind},
         {"metadata", schedule.metadata},
         {"spec", schedule.spec},
         {"status", schedule.status}};
}
void from_json(const json& in, LoadTestSchedule& schedule) {
  schedule.metadata = member(in, "metadata").get<ObjectMeta>();
  schedule.spec = member(in, "spec").get<LoadTestScheduleSpec>();
  schedule.status = member(in, "status").get<LoadTestScheduleStatus>();
}

}  // namespace kubeload::api
